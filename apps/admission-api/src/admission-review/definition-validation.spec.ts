import { describe, expect, it } from 'vitest';
import type { AdmissionReviewRequest } from './admission-review.js';
import { definitionRefusal } from './definition-validation.js';

const review = (resource: string, spec: unknown, operation = 'CREATE', namespace: string | undefined = 'team-a'): AdmissionReviewRequest =>
  ({
    uid: 'u',
    operation,
    resource: { group: 'quota-ledger.io', version: 'v1alpha1', resource },
    name: 'compute',
    ...(namespace ? { namespace } : {}),
    object: { apiVersion: 'quota-ledger.io/v1alpha1', metadata: { name: 'compute', ...(namespace ? { namespace } : {}) }, spec },
  }) as unknown as AdmissionReviewRequest;

describe('definitionRefusal: our quota kinds validated at admission as their REST kinds are', () => {
  it.each([
    {
      what: 'a scope with a resource it does not allow (ResourceQuota validation)',
      review: review('ledgerquotas', { hard: { 'requests.ephemeral-storage': '1Gi' }, scopes: ['BestEffort'] }),
      message:
        'LedgerQuota.quota-ledger.io "compute" is invalid: spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource',
    },
    {
      what: 'a PriorityClass scope selector In without values',
      review: review('ledgerquotas', {
        hard: { pods: '1' },
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [] }] },
      }),
      message:
        "LedgerQuota.quota-ledger.io \"compute\" is invalid: spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
    },
  ])('$what: 422', ({ review: r, message }) => {
    expect(definitionRefusal(r)).toEqual({ code: 422, message });
  });

  it('refuses a LedgerClusterQuota and a LedgerHierarchicalQuota as ClusterResourceQuota and HierarchicalResourceQuota are, naming our kinds', () => {
    const cluster = definitionRefusal(
      review('ledgerclusterquotas', { quota: { hard: { pods: '-1' } }, selector: {} }, 'CREATE', undefined),
    );
    expect(cluster?.code).toBe(422);
    expect(cluster?.message).toMatch(/^LedgerClusterQuota\.quota-ledger\.io "compute" is invalid: /);
    const hierarchical = definitionRefusal(review('ledgerhierarchicalquotas', { hard: { pods: '-1' } }));
    expect(hierarchical?.message).toMatch(/^LedgerHierarchicalQuota\.quota-ledger\.io "compute" is invalid: spec\.hard\[pods\]/);
  });

  it('lets valid specs, DELETEs and other kinds through', () => {
    expect(definitionRefusal(review('ledgerquotas', { hard: { pods: '2', 'requests.cpu': '1' } }))).toBeUndefined();
    expect(definitionRefusal(review('ledgerquotas', { hard: { pods: '-1' } }, 'DELETE'))).toBeUndefined();
    expect(
      definitionRefusal({
        ...review('ledgerquotas', { hard: { pods: '-1' } }),
        resource: { group: '', version: 'v1', resource: 'limitranges' },
      }),
    ).toBeUndefined();
    expect(definitionRefusal(review('ledgerquotas', { hard: { pods: '-1' } }))?.code).toBe(422);
  });
});
