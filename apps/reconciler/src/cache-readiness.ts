import type { CacheState } from '@quota/inventory';
import type { Readiness } from '@quota/ops';

/**
 * The reconciler's GET /readyz: ready while every kind's cache it settles from is synced. A cache
 * being listed (a start, a relist), whose watch is broken or that is over its ceiling is named with
 * why (its listings fail closed meanwhile: nothing is released from it). Kinds left uncovered by
 * design (forbidden to its RBAC, not served, no longer served) are listed, and do not make it unready.
 */
export function cacheReadiness(states: readonly CacheState[] | undefined): Readiness {
  if (states === undefined) return { ready: true, detail: { caches: 'none: listed per namespace' } };
  const named = (state: CacheState['state']) => states.filter((cache) => cache.state === state);
  const listing = named('listing').map((cache) => cache.resource);
  const broken = named('broken').map(({ resource, error }) => ({ resource, ...(error ? { error } : {}) }));
  const overCeiling = named('over-ceiling').map(({ resource, objects, bytes, error }) => ({
    resource,
    objects,
    bytes,
    ...(error ? { error } : {}),
  }));
  const uncovered = states.filter((cache) => ['forbidden', 'not-served', 'stopped'].includes(cache.state));
  return {
    ready: listing.length + broken.length + overCeiling.length === 0,
    detail: {
      caches: {
        synced: named('synced').length,
        ...(listing.length ? { listing } : {}),
        ...(broken.length ? { broken } : {}),
        ...(overCeiling.length ? { overCeiling } : {}),
        ...(uncovered.length ? { uncovered: uncovered.map(({ resource, state }) => ({ resource, state })) } : {}),
      },
    },
  };
}
