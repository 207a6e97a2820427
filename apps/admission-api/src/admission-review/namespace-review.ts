import { clusterNamespaceRecord, type NamespaceDefinition } from '@quota/domain';
import type { AdmissionReviewRequest } from './admission-review.js';
import { ReviewMalformed } from './admission-review.js';

/**
 * A review of a Namespace itself (the core group's `namespaces`, not one of its subresources:
 * `namespaces/status` and `namespaces/finalize` change neither labels nor annotations).
 */
export function isNamespaceReview(review: AdmissionReviewRequest): boolean {
  return review.resource.group === '' && review.resource.resource === 'namespaces' && !review.subResource;
}

/** The reviewed Namespace's name: the request's, else its object's (old object, for a DELETE). */
export function reviewedNamespaceName(review: AdmissionReviewRequest): string {
  const name = review.name || review.object?.metadata?.name || review.oldObject?.metadata?.name;
  if (!name) throw new ReviewMalformed('request.name', 'Required value: a review of a Namespace names it');
  return name;
}

/** What the ledger records of the reviewed Namespace (CREATE and UPDATE carry the object). */
export function namespaceOfReview(review: AdmissionReviewRequest): NamespaceDefinition {
  const object = review.object;
  if (!object) throw new ReviewMalformed('request.object', `Required value: a ${review.operation} of a Namespace carries the object`);
  const name = reviewedNamespaceName(review);
  if (object.metadata?.name && object.metadata.name !== name)
    throw new ReviewMalformed('request.object.metadata.name', `must equal request.name ("${name}")`);
  // Not an observation of the stored object (it is not stored yet): no resourceVersion is kept.
  const { resourceVersion: _unstored, ...metadata } = object.metadata ?? {};
  return clusterNamespaceRecord(name, metadata, (object as { spec?: { finalizers?: unknown } }).spec?.finalizers);
}
