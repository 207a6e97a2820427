import { describe, expect, it } from 'vitest';
import { InventoryError } from './inventory.js';
import { DEFAULT_RESOURCES } from './kinds.js';
import { toInventoryObjects } from './objects.js';

const pod = (name: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', uid: `uid-${name}`, ...metadata },
  spec: { containers: [] },
});
const PODS_ONLY = [{ group: '', resource: 'pods' }];
const list = (raw: readonly unknown[], covers = DEFAULT_RESOURCES, maxObjects = 100) =>
  toInventoryObjects('test', 'team-a', raw, covers, maxObjects);
const failure = (raw: readonly unknown[], covers = DEFAULT_RESOURCES, maxObjects = 100): InventoryError => {
  try {
    list(raw, covers, maxObjects);
  } catch (error) {
    if (error instanceof InventoryError) return error;
    throw error;
  }
  throw new Error('the listing was accepted');
};

describe('turning listed objects into inventory objects', () => {
  it('keeps covered objects whole, with their resource, uid and name', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team-a', uid: 'uid-web' },
      spec: { replicas: 2 },
    };
    expect(list([pod('a'), deployment])).toEqual([
      { groupResource: { group: '', resource: 'pods' }, uid: 'uid-a', name: 'a', object: pod('a') },
      { groupResource: { group: 'apps', resource: 'deployments' }, uid: 'uid-web', name: 'web', object: deployment },
    ]);
  });

  it('fills in the namespace of an object that does not state it', () => {
    const [listed] = list([{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', uid: 'u' } }]);
    expect(listed?.object.metadata?.namespace).toBe('team-a');
  });

  it('skips objects of resources it does not cover, and kinds it does not know, even without a uid', () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
    const customJob = { apiVersion: 'example.com/v1', kind: 'Job', metadata: { name: 'j' } };
    expect(list([pod('a'), configMap, widget, customJob], PODS_ONLY).map((o) => o.name)).toEqual(['a']);
  });

  it.each([
    [
      'an object without metadata.uid, naming it',
      [pod('a'), pod('web-1', { uid: undefined })],
      /namespace team-a: Pod team-a\/web-1 has no metadata.uid, so it cannot be matched/,
    ],
    ['an object with an empty uid', [pod('a', { uid: '' })], /Pod team-a\/a has no metadata.uid/],
    ['an object without a name', [{ apiVersion: 'v1', kind: 'Pod', metadata: { uid: 'u' } }], /Pod #0 \(no name\) has no metadata.name/],
    ['an object of another namespace', [pod('a', { namespace: 'team-b' })], /Pod team-b\/a belongs to namespace team-b/],
    ['the same uid twice', [pod('a'), pod('b', { uid: 'uid-a' })], /Pod team-a\/b: uid uid-a is listed twice/],
    ['an item that is not an object', [pod('a'), 'b'], /item #1 is not an object/],
    ['an object without kind', [{ apiVersion: 'v1', metadata: { name: 'x', uid: 'u' } }], /object x has no kind or apiVersion/],
  ])('refuses the whole listing on %s', (_case, raw, message) => {
    const error = failure(raw);
    expect(error.source).toBe('test');
    expect(error.message).toMatch(message);
  });

  it('refuses a listing over its object limit, and takes one exactly at it', () => {
    const three = [pod('a'), pod('b'), pod('c')];
    expect(list(three, DEFAULT_RESOURCES, 3)).toHaveLength(3);
    expect(failure(three, DEFAULT_RESOURCES, 2).message).toMatch(/3 objects, more than the 2 a listing may hold/);
  });
});
