import { LAST_APPLIED_BY_ANNOTATION, unroutedCountWarnings, WARNINGS_MAX } from '@quota/domain';
import type { AdmissionReviewRequest } from './admission-review.js';

/** The kinds of cluster object the reconciler copies into the ledger with their author, by group. */
const AUTHORED: Readonly<Record<string, readonly string[]>> = {
  'quota-ledger.io': ['ledgerquotas', 'ledgerclusterquotas', 'ledgerhierarchicalquotas'],
  '': ['limitranges'],
};

/** Whether the review is of a definition the cluster holds (a LedgerQuota, a LimitRange, a LedgerClusterQuota) itself, not of its status (the reconciler's). */
export function isDefinitionReview(review: AdmissionReviewRequest): boolean {
  return (AUTHORED[review.resource.group] ?? []).includes(review.resource.resource) && !review.subResource;
}

const ESCAPED = LAST_APPLIED_BY_ANNOTATION.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSONPatch that stamps who made this CREATE or UPDATE of a LedgerQuota, LimitRange or LedgerClusterQuota (the reconciler records
 * it as the author of the ledger's change): the user the kube-apiserver names, when its userInfo is
 * trusted; otherwise the annotation is removed, so that whatever the object claimed is not taken
 * for the truth (the reconciler then falls back to managedFields).
 */
export function definitionAuthorPatch(review: AdmissionReviewRequest, user: string | undefined): readonly unknown[] {
  if (!review.object || (review.operation !== 'CREATE' && review.operation !== 'UPDATE')) return [];
  const metadata = (review.object as { metadata?: { annotations?: Record<string, string> } }).metadata;
  const annotations = metadata?.annotations;
  if (user === undefined)
    return annotations && LAST_APPLIED_BY_ANNOTATION in annotations ? [{ op: 'remove', path: `/metadata/annotations/${ESCAPED}` }] : [];
  if (!annotations) return [{ op: 'add', path: '/metadata/annotations', value: { [LAST_APPLIED_BY_ANNOTATION]: user } }];
  return [{ op: 'add', path: `/metadata/annotations/${ESCAPED}`, value: user }];
}

/**
 * kubectl's warnings for a quota object (LedgerQuota, LedgerHierarchicalQuota: `spec.hard`;
 * LedgerClusterQuota: `spec.quota.hard`) that counts a kind the webhooks are not sent: the same
 * as the REST PUT's, so that `kubectl apply` says what the REST API says, that such a count is
 * only counted after the fact. At most WARNINGS_MAX, as the PUT sends.
 */
export function definitionWarnings(review: AdmissionReviewRequest): string[] {
  if (review.resource.group !== 'quota-ledger.io' || (review.operation !== 'CREATE' && review.operation !== 'UPDATE')) return [];
  const spec = (review.object as { spec?: { hard?: unknown; quota?: { hard?: unknown } } } | undefined)?.spec;
  const hard = review.resource.resource === 'ledgerclusterquotas' ? spec?.quota?.hard : spec?.hard;
  if (typeof hard !== 'object' || hard === null || Array.isArray(hard)) return [];
  return unroutedCountWarnings(Object.keys(hard)).slice(0, WARNINGS_MAX);
}
