import type { AppConfig } from '@quota/config';

/**
 * Before which instant a webhook reservation that is still reserved counts as unsettled: two
 * grace periods and two reconcile intervals ago. A reconciler with an inventory source commits,
 * or releases as stale or uncovered, every reservation of an object well before then; one still
 * reserved is of a kind no inventory lists, or no reconciler runs, and would hold Used up for good.
 */
export function unsettledBefore(config: Pick<AppConfig, 'reconcileGraceSeconds' | 'reconcileIntervalSeconds'>, now: number): string {
  return new Date(now - unsettledAfterMs(config) * 2).toISOString();
}

/** One grace period and one reconcile interval, in ms. */
export function unsettledAfterMs(config: Pick<AppConfig, 'reconcileGraceSeconds' | 'reconcileIntervalSeconds'>): number {
  return 1000 * (config.reconcileGraceSeconds + config.reconcileIntervalSeconds);
}
