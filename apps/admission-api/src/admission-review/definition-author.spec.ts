import { describe, expect, it } from 'vitest';
import type { AdmissionReviewRequest } from './admission-review.js';
import { definitionAuthorPatch, definitionWarnings, isDefinitionReview } from './definition-author.js';

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

describe('definitionWarnings', () => {
  const quota = (resource: string, spec: unknown, operation = 'CREATE') =>
    review(undefined, {
      operation,
      resource: { group: 'quota-ledger.io', version: 'v1alpha1', resource },
      object: { metadata: { name: 'q' }, spec },
    } as Partial<AdmissionReviewRequest>);
  const counts = { hard: { resourcequotas: '2', 'count/configmaps': '5', 'count/widgets.example.com': '1', 'count/resourcequotas': '1' } };

  it('warns of each count the webhooks are not sent, where each kind of quota object keeps its hard', () => {
    for (const [resource, spec] of [
      ['ledgerquotas', counts],
      ['ledgerhierarchicalquotas', counts],
      ['ledgerclusterquotas', { quota: counts, selector: {} }],
    ] as const) {
      const warnings = definitionWarnings(quota(resource, spec));
      expect(
        warnings.map((w) => w.split(' ')[0]),
        resource,
      ).toEqual(['resourcequotas', 'count/resourcequotas']);
    }
  });

  it('warns of nothing on DELETE, a LimitRange or a malformed spec', () => {
    expect(definitionWarnings(quota('ledgerquotas', counts, 'DELETE'))).toEqual([]);
    expect(definitionWarnings(quota('ledgerquotas', { hard: ['count/resourcequotas'] }))).toEqual([]);
    const limitRange = review(undefined, {
      resource: { group: '', version: 'v1', resource: 'limitranges' },
    } as Partial<AdmissionReviewRequest>);
    expect(definitionWarnings(limitRange)).toEqual([]);
  });
});
