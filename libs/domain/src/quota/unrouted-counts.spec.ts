import { describe, expect, it } from 'vitest';
import { unroutedCountWarnings } from './unrouted-counts.js';

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
