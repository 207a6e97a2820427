import { describe, expect, it } from 'vitest';
import { unroutedCounts, unroutedCountWarnings } from './unrouted-counts.js';

describe('unroutedCountWarnings: the object counts a quota names that admission never sees', () => {
  it.each([
    { names: ['count/configmaps', 'count/deployments.apps', 'count/serviceaccounts', 'pods', 'requests.cpu'], warned: [] },
    // Every namespaced kind's CREATE is sent, whatever its group: a CRD's too.
    { names: ['count/poddisruptionbudgets.policy', 'count/ingresses.networking.k8s.io', 'count/widgets.example.com'], warned: [] },
    // ResourceQuota objects are not, under either name.
    { names: ['count/resourcequotas', 'resourcequotas', 'configmaps'], warned: ['count/resourcequotas', 'resourcequotas'] },
    // What quota never charges is not a routing gap.
    { names: ['count/events', 'count/events.events.k8s.io'], warned: [] },
  ])('$names warns of $warned', ({ names, warned }) => {
    const warnings = unroutedCountWarnings(names);
    expect(warnings.map((w) => w.split(' ')[0])).toEqual(warned);
  });

  it('says why and what happens instead', () => {
    expect(unroutedCountWarnings(['count/resourcequotas'])).toEqual([
      'count/resourcequotas is counted only after the fact: the webhooks are not sent resourcequotas writes (quotas are defined through the ledger), so a create past it is not refused; the reconciler counts what exists',
    ]);
  });
});

describe('unroutedCounts: the object counts a registered configuration does not send', () => {
  const catchAll = { operations: ['CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Namespaced' };
  const oldCountRules = [
    { operations: ['CREATE', 'UPDATE'], apiGroups: [''], resources: ['configmaps', 'secrets'] },
    { operations: ['CREATE'], apiGroups: ['apps'], resources: ['deployments'], scope: '*' },
  ];
  const counts = ['count/configmaps', 'count/deployments.apps', 'count/poddisruptionbudgets.policy', 'count/widgets.example.com'];
  it.each([
    { what: 'the catch-all CREATE rule sends every kind', rules: [catchAll], names: counts, unrouted: [] },
    { what: 'an old fixed list misses the kinds it does not name', rules: oldCountRules, names: counts, unrouted: counts.slice(2) },
    { what: 'no rules: every count', rules: [], names: ['count/configmaps', 'secrets'], unrouted: ['count/configmaps', 'secrets'] },
    {
      what: 'a rule that sends no CREATE sends nothing counted',
      rules: [{ ...catchAll, operations: ['UPDATE', 'DELETE'] }],
      names: ['count/configmaps'],
      unrouted: ['count/configmaps'],
    },
    {
      what: '* operations and */* resources',
      rules: [{ operations: ['*'], apiGroups: ['*'], resources: ['*/*'] }],
      names: counts,
      unrouted: [],
    },
    {
      what: 'a subresource rule is not the resource, nor is another group',
      rules: [{ operations: ['CREATE'], apiGroups: ['policy', 'apps'], resources: ['poddisruptionbudgets/status', 'configmaps'] }],
      names: ['count/poddisruptionbudgets.policy', 'count/configmaps'],
      unrouted: ['count/poddisruptionbudgets.policy', 'count/configmaps'],
    },
    { what: 'a Cluster-scoped rule sends no namespaced kind', rules: [{ ...catchAll, scope: 'Cluster' }], names: counts, unrouted: counts },
    // ResourceQuota objects are never sent (the count webhook's condition leaves them out); what quota never charges is no gap.
    {
      what: 'resourcequotas under both names, and what is never charged',
      rules: [catchAll],
      names: ['count/resourcequotas', 'resourcequotas', 'count/events', 'requests.cpu', 'pods'],
      unrouted: ['count/resourcequotas', 'resourcequotas'],
    },
  ])('$what', ({ rules, names, unrouted }) => {
    expect(unroutedCounts(names, rules)).toEqual(unrouted);
  });
});
