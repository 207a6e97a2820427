import { describe, expect, it } from 'vitest';
import { changeSummary, changeType, coveringPlace, selectorSummary, share, tightestResource } from './cluster-quota.js';

describe('cluster quota formatting', () => {
  it('summarises a selector in the order written: labels, expressions, then annotations', () => {
    expect(selectorSummary({ labels: { matchLabels: { tenant: 'acme' } }, annotations: null })).toBe('tenant=acme');
    expect(
      selectorSummary({
        labels: {
          matchLabels: { tenant: 'acme', tier: 'gold' },
          matchExpressions: [
            { key: 'env', operator: 'In', values: ['dev', 'prod'] },
            { key: 'region', operator: 'NotIn', values: ['eu'] },
            { key: 'team', operator: 'Exists' },
            { key: 'legacy', operator: 'DoesNotExist' },
          ],
        },
      }),
    ).toBe('tenant=acme, tier=gold, env In (dev,prod), region NotIn (eu), team Exists, legacy DoesNotExist');
    expect(selectorSummary({ labels: null, annotations: { 'openshift.io/requester': 'alice' } })).toBe(
      'annotations: openshift.io/requester=alice',
    );
    expect(selectorSummary({ labels: { matchLabels: { tenant: 'acme' } }, annotations: { owner: 'a', cost: 'b' } })).toBe(
      'tenant=acme; annotations: owner=a, cost=b',
    );
    expect(selectorSummary({ labels: {}, annotations: {} })).toBe('no selector');
    expect(selectorSummary(null)).toBe('no selector');
  });

  it.each([
    ['1', '2', '50 %'],
    ['1', '3', '33 %'],
    ['100m', '300m', '33 %'],
    ['2', '2', '100 %'],
    ['0', '3', '0 %'],
    [undefined, '3', '0 %'],
    ['1Mi', '1Gi', '<1 %'],
    ['0', '0', '—'],
    ['1', undefined, '—'],
    ['x', '2', '—'],
  ])('share(%s, %s) is %s', (part, total, text) => {
    expect(share(part, total)).toBe(text);
  });

  it('finds the resource closest to its limit, the first of equals, or none', () => {
    expect(tightestResource({ pods: '10', 'requests.cpu': '2' }, { pods: '3', 'requests.cpu': '1500m' })).toEqual({
      resource: 'requests.cpu',
      ratio: 0.75,
    });
    expect(tightestResource({ pods: '4', services: '2' }, { pods: '2', services: '1' })).toEqual({ resource: 'pods', ratio: 0.5 });
    expect(tightestResource({ pods: '10', secrets: '0' }, { pods: '1' })).toEqual({ resource: 'secrets', ratio: 1 });
    expect(tightestResource({}, { pods: '1' })).toBeUndefined();
  });

  it('names the change types and says what each change did', () => {
    expect(['SharedQuotaDefined', 'SharedQuotaChanged', 'SharedQuotaRemoved', 'QuotaChanged', 'SomethingNew'].map(changeType)).toEqual([
      'defined',
      'changed',
      'removed',
      'changed',
      'SomethingNew',
    ]);
    const selector = { labels: { matchLabels: { tenant: 'acme' } } };
    expect(
      changeSummary({
        before: null,
        after: { hard: { pods: '10', 'requests.cpu': '2' }, selector },
        changed: ['pods', 'requests.cpu', 'selector'],
      }),
    ).toEqual(['pods: 10', 'requests.cpu: 2', 'selector: tenant=acme']);
    expect(
      changeSummary({
        before: { hard: { pods: '10', 'requests.cpu': '2' }, selector },
        after: {
          hard: { pods: '20' },
          selector: { labels: { matchLabels: { tenant: 'acme' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } },
        },
        changed: ['pods', 'requests.cpu', 'scopes', 'selector'],
      }),
    ).toEqual(['pods: 10 → 20', 'requests.cpu: 2 → —', 'scopes', 'selector: tenant=acme → tenant=acme, env In (prod)']);
    expect(changeSummary({ before: { hard: { pods: '20' }, selector }, after: null, changed: ['pods', 'selector'] })).toEqual([
      'pods: 20 → —',
      'selector: tenant=acme → —',
    ]);
  });
});

describe('coveringPlace', () => {
  it("leads a cluster quota to its page and a hierarchical one to its namespace's page", () => {
    expect(coveringPlace({ kind: 'ClusterResourceQuota', name: 'acme corp' })).toEqual({
      label: 'cluster quota acme corp',
      href: '#/clusterresourcequotas/acme%20corp',
    });
    expect(coveringPlace({ kind: 'HierarchicalResourceQuota', name: 'subtree', namespace: 'team-a' })).toEqual({
      label: 'hierarchical quota team-a/subtree',
      href: '#/ns/team-a',
    });
  });
});
