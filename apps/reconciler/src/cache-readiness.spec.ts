import type { CacheState } from '@quota/inventory';
import { describe, expect, it } from 'vitest';
import { cacheReadiness } from './cache-readiness.js';

const cache = (resource: string, state: CacheState['state'], extra: Partial<CacheState> = {}): CacheState => ({
  resource,
  state,
  objects: 0,
  bytes: 0,
  ...extra,
});

describe('cacheReadiness', () => {
  it('is ready while every cache is synced, with uncovered kinds named but not held against it', () => {
    expect(
      cacheReadiness([
        cache('pods', 'synced'),
        cache('leases.coordination.k8s.io', 'forbidden'),
        cache('widgets.example.com', 'not-served'),
      ]),
    ).toEqual({
      ready: true,
      detail: {
        caches: {
          synced: 1,
          uncovered: [
            { resource: 'leases.coordination.k8s.io', state: 'forbidden' },
            { resource: 'widgets.example.com', state: 'not-served' },
          ],
        },
      },
    });
  });

  it.each([
    ['listing', cache('pods', 'listing'), { listing: ['pods'] }],
    ['broken', cache('pods', 'broken', { error: 'HTTP 500' }), { broken: [{ resource: 'pods', error: 'HTTP 500' }] }],
    [
      'over its ceiling',
      cache('configmaps', 'over-ceiling', { objects: 500001, bytes: 9, error: 'over 500000 objects' }),
      { overCeiling: [{ resource: 'configmaps', objects: 500001, bytes: 9, error: 'over 500000 objects' }] },
    ],
  ])('is not ready while a cache is %s, and says which and why', (_case, state, expected) => {
    const readiness = cacheReadiness([cache('secrets', 'synced'), state]);
    expect(readiness.ready).toBe(false);
    expect(readiness.detail).toEqual({ caches: { synced: 1, ...expected } });
  });

  it('is ready without caches (listed per namespace)', () => {
    expect(cacheReadiness(undefined).ready).toBe(true);
  });
});
