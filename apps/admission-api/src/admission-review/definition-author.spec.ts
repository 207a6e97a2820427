import { describe, expect, it } from 'vitest';
import type { AdmissionReviewRequest } from './admission-review.js';
import { definitionAuthorPatch, isDefinitionReview } from './definition-author.js';

const review = (annotations?: Record<string, string>, extra: Partial<AdmissionReviewRequest> = {}): AdmissionReviewRequest =>
  ({
    uid: 'u',
    operation: 'UPDATE',
    resource: { group: 'quota-ledger.io', version: 'v1alpha1', resource: 'ledgerquotas' },
    namespace: 'team-a',
    object: {
      apiVersion: 'quota-ledger.io/v1alpha1',
      kind: 'LedgerQuota',
      metadata: { name: 'q', ...(annotations ? { annotations } : {}) },
    },
    ...extra,
  }) as unknown as AdmissionReviewRequest;

describe('definitionAuthorPatch', () => {
  it('stamps the trusted user, over whatever the object claimed', () => {
    expect(definitionAuthorPatch(review(), 'alice')).toEqual([
      { op: 'add', path: '/metadata/annotations', value: { 'quota-ledger.io/last-applied-by': 'alice' } },
    ]);
    expect(definitionAuthorPatch(review({ 'quota-ledger.io/last-applied-by': 'mallory' }), 'alice')).toEqual([
      { op: 'add', path: '/metadata/annotations/quota-ledger.io~1last-applied-by', value: 'alice' },
    ]);
  });

  it('removes a claimed author when no user can be trusted, and leaves the rest alone', () => {
    expect(definitionAuthorPatch(review({ 'quota-ledger.io/last-applied-by': 'mallory' }), undefined)).toEqual([
      { op: 'remove', path: '/metadata/annotations/quota-ledger.io~1last-applied-by' },
    ]);
    expect(definitionAuthorPatch(review({ team: 'a' }), undefined)).toEqual([]);
    expect(definitionAuthorPatch(review(undefined, { operation: 'DELETE' }), 'alice')).toEqual([]);
  });

  it('is for the object, not its status subresource', () => {
    expect(isDefinitionReview(review())).toBe(true);
    expect(isDefinitionReview(review(undefined, { subResource: 'status' }))).toBe(false);
  });

  it("is for LedgerQuotas, LedgerClusterQuotas and the cluster's LimitRanges, not for pods or another group's limitranges", () => {
    const of = (group: string, resource: string) => isDefinitionReview(review(undefined, { resource: { group, version: 'v1', resource } }));
    expect(of('', 'limitranges')).toBe(true);
    expect(of('', 'pods')).toBe(false);
    expect(of('example.com', 'limitranges')).toBe(false);
    expect(of('', 'ledgerquotas')).toBe(false);
    expect(of('quota-ledger.io', 'ledgerclusterquotas')).toBe(true);
    expect(of('quota-ledger.io', 'ledgerhierarchicalquotas')).toBe(true);
  });
});
