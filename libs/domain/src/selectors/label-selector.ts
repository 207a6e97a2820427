import { type FieldError, child, forbidden, index, invalid, json, required, str } from '../validation/field.js';
import { isQualifiedName, isValidLabelValue } from '../validation/names.js';
import { validateLabels } from '../validation/object-meta.js';
import type { LabelSelector, LabelSelectorRequirement } from '../kube/types.js';

/**
 * Kubernetes' LabelSelector (meta/v1): the selector of a ClusterResourceQuota's namespaces, of a
 * scope, of anything that picks objects by their labels. `matchLabels` and every requirement of
 * `matchExpressions` must all hold. As Kubernetes converts it (LabelSelectorAsSelector), an
 * absent selector selects nothing and an empty one `{}` selects everything.
 */
export type { LabelSelector, LabelSelectorOperator, LabelSelectorRequirement } from '../kube/types.js';

export type LabelSet = Readonly<Record<string, string>>;

/** ValidateLabelSelector: label keys and values in matchLabels, and each requirement. */
export function validateLabelSelector(selector: LabelSelector | undefined | null, path: string): FieldError[] {
  if (!selector) return [];
  const errs = validateLabels(selector.matchLabels ?? {}, child(path, 'matchLabels'));
  (selector.matchExpressions ?? []).forEach((requirement, i) =>
    errs.push(...validateRequirement(requirement, index(child(path, 'matchExpressions'), i))),
  );
  return errs;
}

/**
 * ValidateLabelSelectorRequirement: In and NotIn need values, Exists and DoesNotExist take
 * none, the key is a qualified name and every value a label value.
 */
function validateRequirement(requirement: LabelSelectorRequirement, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(required(child(path, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0)
        errs.push(forbidden(child(path, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    default:
      errs.push(invalid(child(path, 'operator'), str(String(requirement.operator)), 'not a valid selector operator'));
  }
  errs.push(...isQualifiedName(requirement.key).map((msg) => invalid(child(path, 'key'), str(requirement.key), msg)));
  values.forEach((value, i) =>
    errs.push(...isValidLabelValue(value).map((msg) => invalid(index(child(path, 'values'), i), str(value), msg))),
  );
  return errs;
}

/** Whether labels satisfy a (valid) selector; an absent selector selects nothing. */
export function labelSelectorMatches(selector: LabelSelector | undefined | null, labels: LabelSet): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (!Object.hasOwn(labels, k) || labels[k] !== v) return false;
  }
  return (selector.matchExpressions ?? []).every((requirement) => requirementMatches(requirement, labels));
}

function requirementMatches(requirement: LabelSelectorRequirement, labels: LabelSet): boolean {
  const present = Object.hasOwn(labels, requirement.key);
  const value = present ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'In':
      return present && (requirement.values ?? []).includes(value as string);
    case 'NotIn':
      return !present || !(requirement.values ?? []).includes(value as string);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
  }
}

/** A selector with neither labels nor expressions selects every object: what a quota over "some namespaces" must not be. */
export function selectsEverything(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0;
}

/** The selector as Kubernetes prints it in a field error (`Invalid value: {...}`). */
export const printedSelector = (selector: LabelSelector): ReturnType<typeof json> => json(selector);
