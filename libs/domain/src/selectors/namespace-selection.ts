import { type FieldError, child, invalid, required } from '../validation/field.js';
import { validateAnnotations } from '../validation/object-meta.js';
import {
  type LabelSelector,
  type LabelSet,
  labelSelectorMatches,
  printedSelector,
  selectsEverything,
  validateLabelSelector,
} from './label-selector.js';

/**
 * Which namespaces a quota over several namespaces covers, in the two shapes platform teams
 * use: OpenShift's ClusterResourceQuota (a label selector and/or exact annotations) and HNC's
 * HierarchicalResourceQuota (a namespace and every namespace below it in the tree).
 */

/** What of a namespace a selection looks at. */
export interface SelectableNamespace {
  readonly name: string;
  readonly labels: LabelSet;
  readonly annotations: LabelSet;
}

/** `spec.selector` of a ClusterResourceQuota (quota.openshift.io/v1). */
export interface ClusterResourceQuotaSelector {
  readonly labels?: LabelSelector | null;
  readonly annotations?: Readonly<Record<string, string>> | null;
}

/**
 * OpenShift's rules for `spec.selector`: it must restrict the namespaces it selects (a label
 * selector with at least one label or expression, or at least one annotation); the label
 * selector and the annotation keys must be valid.
 */
export function validateClusterResourceQuotaSelector(
  selector: ClusterResourceQuotaSelector | undefined | null,
  path: string,
): FieldError[] {
  const labels = selector?.labels ?? undefined;
  const annotations = selector?.annotations ?? undefined;
  const errs: FieldError[] = [];
  const restricts = (labels !== undefined && !selectsEverything(labels)) || Object.keys(annotations ?? {}).length > 0;
  if (!restricts) errs.push(required(path, 'must restrict the selected projects'));
  if (labels !== undefined) {
    errs.push(...validateLabelSelector(labels, child(path, 'labels')));
    if (selectsEverything(labels))
      errs.push(invalid(child(path, 'labels'), printedSelector(labels), 'must restrict the selected projects'));
  }
  if (annotations !== undefined) errs.push(...validateAnnotations(annotations, child(path, 'annotations')));
  return errs;
}

/** Whether a ClusterResourceQuota's selector picks a namespace: its labels (if given) and every annotation (if given) must match. */
export function clusterResourceQuotaSelects(selector: ClusterResourceQuotaSelector, namespace: SelectableNamespace): boolean {
  const labels = selector.labels ?? undefined;
  const annotations = selector.annotations ?? undefined;
  if (labels === undefined && Object.keys(annotations ?? {}).length === 0) return false;
  if (labels !== undefined && !labelSelectorMatches(labels, namespace.labels)) return false;
  return Object.entries(annotations ?? {}).every(([k, v]) => Object.hasOwn(namespace.annotations, k) && namespace.annotations[k] === v);
}

/** The label HNC puts on every namespace at or below `ancestor`, valued with the depth below it. */
export const hncTreeLabel = (ancestor: string): string => `${ancestor}.tree.hnc.x-k8s.io/depth`;

/**
 * Whether a HierarchicalResourceQuota in namespace `owner` covers a namespace: the owner itself,
 * and every namespace HNC labelled as its descendant.
 */
export function hierarchicalResourceQuotaSelects(owner: string, namespace: SelectableNamespace): boolean {
  return namespace.name === owner || Object.hasOwn(namespace.labels, hncTreeLabel(owner));
}
