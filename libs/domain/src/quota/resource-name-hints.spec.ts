import { describe, expect, it } from 'vitest';
import { editDistance, nearestResourceName, OBJECT_COUNT_NAMES } from './resource-name-hints.js';

describe('editDistance', () => {
  it.each([
    ['pod', 'pods', 1],
    ['requests.cpus', 'requests.cpu', 1],
    ['memroy', 'memory', 1],
    ['request.cpu', 'requests.cpu', 1],
    ['cpu', 'memory', 6],
    ['', 'abc', 3],
  ])('%s → %s: %i', (a, b, expected) => {
    expect(editDistance(a, b)).toBe(expected);
    expect(editDistance(b, a)).toBe(expected);
  });

  it('stops above max', () => {
    expect(editDistance('cpu', 'ephemeral-storage', 2)).toBe(3);
  });
});

describe('nearestResourceName', () => {
  const none = new Set<string>();
  it.each([
    ['requests.cpus', none, 'requests.cpu'],
    ['pod', none, 'pods'],
    ['Pods', none, 'pods'],
    ['limit.memory', none, 'limits.memory'],
    ['memroy', none, 'memory'],
    ['count/pod', none, 'count/pods'],
    ['count/deployment.apps', none, 'count/deployments.apps'],
    ['count/deployments', none, 'count/deployments.apps'],
    // Another spelling of the same quantity, when a quota limits that one.
    ['cpu', new Set(['requests.cpu']), 'requests.cpu'],
    ['requests.memory', new Set(['memory']), 'memory'],
    ['pods', new Set(['count/pods']), 'count/pods'],
    // A name the caller's quotas limit, before a standard one at the same distance.
    ['example.com/gpus', new Set(['example.com/gpu']), 'example.com/gpu'],
    ['requests.nvidia.com/gpus', new Set(['requests.nvidia.com/gpu']), 'requests.nvidia.com/gpu'],
  ])('%s (limited: %j) → %s', (name, limited, expected) => {
    expect(nearestResourceName(name, limited)).toBe(expected);
  });

  it('suggests nothing far from every name, nor the name itself', () => {
    expect(nearestResourceName('example.com/widgets', none)).toBeUndefined();
    expect(nearestResourceName('bananas', none)).toBeUndefined();
    expect(nearestResourceName('requests.cpu', none)).toBeUndefined();
  });

  it('knows the object count of every kind the service charges, as a quota names it', () => {
    expect(OBJECT_COUNT_NAMES).toEqual(
      expect.arrayContaining(['count/pods', 'count/deployments.apps', 'count/jobs.batch', 'count/resourceclaims.resource.k8s.io']),
    );
  });
});
