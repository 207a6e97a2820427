import {
  admitLimitRanger,
  computePodDefaults,
  withLimitRangeApiDefaults,
  type JsonPatchOperation,
  type LimitRange,
  type Pod,
} from '@quota/domain';
import type { AdmissionReviewRequest } from './admission-review.js';

/**
 * The mutating webhook's answer: LimitRanger's defaults for the reviewed object as a
 * JSONPatch against it. Kubernetes splits the plugin in two (Admit only defaults, Validate
 * refuses), so a pod that breaks a limit still gets its defaults here; the validating
 * webhook is the one that denies it.
 */
export function limitRangeDefaultsPatch(review: AdmissionReviewRequest, limitRanges: readonly LimitRange[]): readonly JsonPatchOperation[] {
  // Cluster-scoped objects have no LimitRange; DELETE and CONNECT carry no object to default.
  if (!review.namespace || !review.object || limitRanges.length === 0) return [];
  // The API server has set metadata.namespace on the object by admission time; a hand-made
  // review may not have, and the defaults must not depend on it.
  const object = { ...review.object, metadata: { ...review.object.metadata, namespace: review.namespace } };
  const decision = admitLimitRanger({
    operation: review.operation,
    resource: { group: review.resource.group, resource: review.resource.resource },
    ...(review.subResource ? { subresource: review.subResource } : {}),
    ...(review.name ? { name: review.name } : {}),
    object,
    ...(review.oldObject ? { oldObject: review.oldObject } : {}),
    limitRanges,
  });
  if (!decision.applies) return [];
  if (decision.allowed) return decision.patch;
  // Refused: admitLimitRanger drops its patch, but only pods are ever defaulted.
  const isPod = review.resource.group === '' && review.resource.resource === 'pods';
  return isPod ? computePodDefaults(object as Pod, limitRanges.map(withLimitRangeApiDefaults)).patch : [];
}
