import { evaluatorFor, ObjectCountEvaluator } from '@quota/domain';
import { describe, expect, it } from 'vitest';
import { discoverKinds, listableKinds, mergeKinds, preferredVersions } from './discovery.js';
import { KNOWN_KINDS, needsWholeObject } from './kinds.js';

const resource = (name: string, kind: string, namespaced = true, verbs = ['get', 'list', 'watch']) => ({ name, kind, namespaced, verbs });

describe('discovery: the kinds an inventory lists', () => {
  it('keeps namespaced resources that can be listed and watched, not subresources, cluster-scoped ones or what quota never charges', () => {
    const list = {
      resources: [
        resource('serviceaccounts', 'ServiceAccount'),
        resource('serviceaccounts/token', 'TokenRequest', true, ['create']),
        resource('pods/status', 'Pod'),
        resource('events', 'Event'),
        resource('namespaces', 'Namespace', false),
        resource('bindings', 'Binding', true, ['create']),
        resource('listonly', 'ListOnly', true, ['list']),
      ],
    };
    expect(listableKinds('v1', list)).toEqual([
      { kind: 'ServiceAccount', apiVersion: 'v1', groupResource: { group: '', resource: 'serviceaccounts' } },
    ]);
    expect(listableKinds('policy/v1', { resources: [resource('poddisruptionbudgets', 'PodDisruptionBudget')] })).toEqual([
      { kind: 'PodDisruptionBudget', apiVersion: 'policy/v1', groupResource: { group: 'policy', resource: 'poddisruptionbudgets' } },
    ]);
    expect(listableKinds('v1', null)).toEqual([]);
  });

  it("takes each group's preferred version, else its first", () => {
    const groups = {
      groups: [
        { versions: [{ groupVersion: 'a.io/v2' }, { groupVersion: 'a.io/v1' }], preferredVersion: { groupVersion: 'a.io/v1' } },
        { versions: [{ groupVersion: 'b.io/v1beta1' }] },
      ],
    };
    expect(preferredVersions(groups)).toEqual(['a.io/v1', 'b.io/v1beta1']);
  });

  it('a group whose version answers 404 adds nothing; any other failure rejects', async () => {
    const documents: Record<string, unknown> = {
      '/api/v1': { resources: [resource('serviceaccounts', 'ServiceAccount')] },
      '/apis': { groups: [{ preferredVersion: { groupVersion: 'policy/v1' } }, { preferredVersion: { groupVersion: 'gone.io/v1' } }] },
      '/apis/policy/v1': { resources: [resource('poddisruptionbudgets', 'PodDisruptionBudget')] },
      '/apis/gone.io/v1': null,
    };
    const kinds = await discoverKinds(async (path) => documents[path]);
    expect(kinds.map((k) => `${k.groupResource.resource}.${k.groupResource.group}`)).toEqual([
      'serviceaccounts.',
      'poddisruptionbudgets.policy',
    ]);
    await expect(
      discoverKinds(async (path) => (path === '/apis' ? Promise.reject(new Error('HTTP 500')) : documents[path])),
    ).rejects.toThrow('HTTP 500');
  });

  it('a fixed kind keeps its apiVersion over the discovered one', () => {
    const discovered = [
      { kind: 'Deployment', apiVersion: 'apps/v2', groupResource: { group: 'apps', resource: 'deployments' } },
      { kind: 'PodDisruptionBudget', apiVersion: 'policy/v1', groupResource: { group: 'policy', resource: 'poddisruptionbudgets' } },
    ];
    const merged = mergeKinds(KNOWN_KINDS, discovered);
    expect(merged.find((k) => k.groupResource.resource === 'deployments')?.apiVersion).toBe('apps/v1');
    expect(merged.at(-1)?.kind).toBe('PodDisruptionBudget');
    expect(merged).toHaveLength(KNOWN_KINDS.length + 1);
  });

  it('reads whole exactly the kinds whose charge is not one per object (metadata-only for the rest)', () => {
    for (const { groupResource } of [...KNOWN_KINDS, { groupResource: { group: 'policy', resource: 'poddisruptionbudgets' } }]) {
      expect(needsWholeObject(groupResource), `${groupResource.resource}.${groupResource.group}`).toBe(
        !(evaluatorFor(groupResource) instanceof ObjectCountEvaluator),
      );
    }
  });
});
