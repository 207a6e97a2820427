import { describe, expect, it } from 'vitest';
import { unroutedCountWarnings } from './unrouted-counts.js';

describe('unroutedCountWarnings: the object counts a quota names that admission never sees', () => {
  it.each([
    { names: ['count/configmaps', 'count/deployments.apps', 'count/serviceaccounts', 'pods', 'requests.cpu'], custom: [], warned: [] },
    { names: ['count/poddisruptionbudgets.policy'], custom: [], warned: ['count/poddisruptionbudgets.policy'] },
    { names: ['count/ingresses.networking.k8s.io', 'count/secrets'], custom: [], warned: ['count/ingresses.networking.k8s.io'] },
    {
      names: ['count/widgets.example.com'],
      custom: [{ group: 'example.com', resource: 'widgets' }],
      warned: [],
    },
    { names: ['count/widgets.example.com'], custom: [], warned: ['count/widgets.example.com'] },
    // What quota never charges is not a routing gap.
    { names: ['count/events', 'count/events.events.k8s.io'], custom: [], warned: [] },
  ])('$names with custom $custom warns of $warned', ({ names, custom, warned }) => {
    const warnings = unroutedCountWarnings(names, custom);
    expect(warnings.map((w) => w.split(' ')[0])).toEqual(warned);
  });

  it('says what to do', () => {
    expect(unroutedCountWarnings(['count/poddisruptionbudgets.policy'], [])).toEqual([
      'count/poddisruptionbudgets.policy is counted only after the fact: the webhooks are not sent poddisruptionbudgets.policy writes, so a create past it is not refused; name it in CUSTOM_RESOURCES and in quotactl webhook-config --custom-resource (poddisruptionbudgets.policy/<version>=<Kind>) to enforce it at admission',
    ]);
  });
});
