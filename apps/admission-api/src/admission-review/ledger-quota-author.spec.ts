import { describe, expect, it } from 'vitest';
import type { AdmissionReviewRequest } from './admission-review.js';
import { isLedgerQuotaReview, ledgerQuotaAuthorPatch } from './ledger-quota-author.js';

const review = (annotations?: Record<string, string>, extra: Partial<AdmissionReviewRequest> = {}): AdmissionReviewRequest =>
  ({
    uid: 'u',
    operation: 'UPDATE',
    resource: { group: 'quota-ledger.io', version: 'v1alpha1', resource: 'ledgerquotas' },
    namespace: 'team-a',
    object: { apiVersion: 'quota-ledger.io/v1alpha1', kind: 'LedgerQuota', metadata: { name: 'q', ...(annotations ? { annotations } : {}) } },
    ...extra,
  }) as unknown as AdmissionReviewRequest;

describe('ledgerQuotaAuthorPatch', () => {
  it('stamps the trusted user, over whatever the object claimed', () => {
    expect(ledgerQuotaAuthorPatch(review(), 'alice')).toEqual([{ op: 'add', path: '/metadata/annotations', value: { 'quota-ledger.io/last-applied-by': 'alice' } }]);
    expect(ledgerQuotaAuthorPatch(review({ 'quota-ledger.io/last-applied-by': 'mallory' }), 'alice')).toEqual([
      { op: 'add', path: '/metadata/annotations/quota-ledger.io~1last-applied-by', value: 'alice' },
    ]);
  });

  it('removes a claimed author when no user can be trusted, and leaves the rest alone', () => {
    expect(ledgerQuotaAuthorPatch(review({ 'quota-ledger.io/last-applied-by': 'mallory' }), undefined)).toEqual([{ op: 'remove', path: '/metadata/annotations/quota-ledger.io~1last-applied-by' }]);
    expect(ledgerQuotaAuthorPatch(review({ team: 'a' }), undefined)).toEqual([]);
    expect(ledgerQuotaAuthorPatch(review(undefined, { operation: 'DELETE' }), 'alice')).toEqual([]);
  });

  it('is for the object, not its status subresource', () => {
    expect(isLedgerQuotaReview(review())).toBe(true);
    expect(isLedgerQuotaReview(review(undefined, { subResource: 'status' }))).toBe(false);
  });
});
