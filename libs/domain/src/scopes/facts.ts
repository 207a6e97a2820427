import type { ResourceQuotaSpec, ScopedResourceSelectorRequirement } from '../kube/types.js';

/**
 * What a quota's scopes can ask of an object, captured once at admission and stored with the
 * reservation. A quota defined or changed later is matched against these facts, so the ledger
 * never needs the whole object to know which quotas an old reservation counts toward.
 *
 * A boolean fact answers a yes/no scope (Terminating, BestEffort, CrossNamespacePodAffinity …);
 * a string fact is a value a selector tests (PriorityClass, VolumeAttributesClass), with null
 * meaning the object has none. A scope missing from the facts does not apply to that kind of
 * object, and never matches it.
 */
export type ScopeFacts = Readonly<Record<string, boolean | string | null>>;

/** Whether an object with these facts satisfies one scope requirement (Kubernetes' semantics). */
export function factsMatchRequirement(facts: ScopeFacts, requirement: ScopedResourceSelectorRequirement): boolean {
  if (!Object.prototype.hasOwnProperty.call(facts, requirement.scopeName)) return false;
  const fact = facts[requirement.scopeName];
  // Yes/no scopes ignore the operator: validation only admits Exists for them.
  if (typeof fact === 'boolean') return fact;
  // Value scopes follow label-selector semantics, an empty value being an absent label.
  const value = fact === '' ? null : (fact ?? null);
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== null && values.includes(value);
    case 'NotIn':
      return value === null || !values.includes(value);
    case 'Exists':
      return value !== null;
    case 'DoesNotExist':
      return value === null;
    default:
      return false;
  }
}

/** Whether the facts satisfy every requirement (an empty list always matches). */
export function factsMatchAll(facts: ScopeFacts, requirements: readonly ScopedResourceSelectorRequirement[]): boolean {
  return requirements.every((requirement) => factsMatchRequirement(facts, requirement));
}

/**
 * A quota's scopes as one list of requirements: each `spec.scopes` entry becomes an `Exists`
 * requirement, followed by `spec.scopeSelector.matchExpressions` (Kubernetes'
 * getScopeSelectorsFromQuota).
 */
export function quotaScopeRequirements(spec: ResourceQuotaSpec | undefined): ScopedResourceSelectorRequirement[] {
  const fromScopes = (spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: 'Exists' }));
  return [...fromScopes, ...(spec?.scopeSelector?.matchExpressions ?? [])];
}
