import { assert } from '../assert.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { factsMatchAll } from '../scopes/facts.js';
import type { Draft, NamespaceState, QuotaState, Reservation } from './state.js';

/**
 * What live reservations count toward a namespace's quotas: computed from scratch (a quota just
 * defined, a check of the fold), and kept up incrementally as the fold adds and removes them.
 */

/** The usage of one quota computed from scratch; the fold's incremental `used` must equal it. */
export function recomputeUsed(state: NamespaceState, quotaName: string): ResourceList | undefined {
  const quota = state.quotas.get(quotaName);
  if (!quota) return undefined;
  return usedFor(quota, state.reservations.values(), state.quotas.size);
}

/** What the namespace contributes to a shared quota, computed from scratch; the fold's `sharedUsed` must equal it. */
export function recomputeSharedUsed(state: NamespaceState, key: string): ResourceList | undefined {
  const quota = state.shared.get(key);
  if (!quota) return undefined;
  return usedFor(quota, state.reservations.values());
}

/**
 * A quota's usage over these reservations. With `quotaCount` (a namespace's own quota), its
 * `count/resourcequotas` and `resourcequotas` are the number of quotas the namespace holds, as
 * Kubernetes counts ResourceQuota objects: here quotas are the ledger's definitions, not reserved
 * objects, so reservations (an adopted ResourceQuota of the cluster) do not count toward them.
 */
export function usedFor(quota: QuotaState, reservations: Iterable<Reservation>, quotaCount?: number): ResourceList {
  const counted = quotaCount === undefined ? NO_NAMES : quotaCountNames(quota);
  const names = counted.length === 0 ? quota.hardNames : quota.hardNames.filter((name) => !counted.includes(name));
  let used = zeros(quota.hard);
  for (const reservation of reservations) {
    const amount = contributionTo(reservation, quota);
    if (amount) used = Resources.add(used, Resources.mask(amount, names));
  }
  if (counted.length > 0)
    used = Resources.add(used, Resources.fromEntries(counted.map((name) => [name, Quantity.fromInt(BigInt(quotaCount ?? 0))])));
  return used;
}

const NO_NAMES: readonly string[] = [];
/** Kubernetes' two names for the count of ResourceQuota objects. */
const QUOTA_COUNT_NAMES: readonly string[] = ['count/resourcequotas', 'resourcequotas'];

/**
 * The hard names of a namespace's quota that count the namespace's quotas: none for a scoped quota
 * (Kubernetes' object-count evaluator matches no scope). Cheap: it runs in the fold's hot loop.
 */
export function quotaCountNames(quota: QuotaState): readonly string[] {
  if (quota.requirements.length > 0) return NO_NAMES;
  const has0 = Resources.has(quota.hard, 'count/resourcequotas');
  const has1 = Resources.has(quota.hard, 'resourcequotas');
  return has0 && has1 ? QUOTA_COUNT_NAMES : has0 ? ['count/resourcequotas'] : has1 ? ['resourcequotas'] : NO_NAMES;
}

/** After a quota is defined or removed: every quota counting the namespace's quotas shows the new number. */
export function recountQuotaObjects(draft: Draft): void {
  for (const quota of draft.quotas.values()) {
    const counted = quotaCountNames(quota);
    if (counted.length === 0) continue;
    const current = draft.used.get(quota.name) ?? zeros(quota.hard);
    const next: Record<string, Quantity> = { ...current };
    for (const name of counted) next[name] = Quantity.fromInt(BigInt(draft.quotas.size));
    draft.used.set(quota.name, Object.freeze(next));
  }
}

/**
 * What a live reservation counts toward one quota, or undefined when its scopes do not
 * match. A pending update counts only its increase toward the quotas the object was already
 * in, and its whole new usage toward a quota it moves into (Kubernetes' UPDATE charge).
 */
export function contributionTo(reservation: Reservation, quota: QuotaState): ResourceList | undefined {
  if (!factsMatchAll(reservation.scopeFacts, quota.requirements)) return undefined;
  const previous = reservation.previousScopeFacts;
  if (reservation.status === 'reserved' && previous && reservation.objectUsage && !factsMatchAll(previous, quota.requirements)) {
    return reservation.objectUsage;
  }
  return reservation.contribution;
}

export function zeros(hard: ResourceList): ResourceList {
  return Resources.fromEntries(Object.entries(hard).map(([name, q]) => [name, q.sub(q)]));
}

/**
 * Adds (sign 1) or removes (sign -1) what a reservation counts toward every quota, on the
 * quota's hard resources only. The hot loop of the fold: it touches only the keys involved.
 */
export function applyContribution(draft: Draft, reservation: Reservation, sign: 1 | -1): void {
  applyTo(draft.quotas, draft.used, reservation, sign, true);
  if (draft.shared.size > 0) applyTo(draft.shared, draft.sharedUsed, reservation, sign, false);
}

function applyTo(
  quotas: ReadonlyMap<string, QuotaState>,
  usedByQuota: Map<string, ResourceList>,
  reservation: Reservation,
  sign: 1 | -1,
  ownQuotas: boolean,
): void {
  for (const quota of quotas.values()) {
    const amount = contributionTo(reservation, quota);
    if (!amount) continue;
    const current = usedByQuota.get(quota.name) ?? zeros(quota.hard);
    const counted = ownQuotas ? quotaCountNames(quota) : NO_NAMES;
    let next: Record<string, Quantity> | undefined;
    for (const name of quota.hardNames) {
      if (counted.length > 0 && counted.includes(name)) continue;
      const change = Resources.get(amount, name);
      if (change === undefined || change.isZero()) continue;
      next ??= { ...current };
      const before = next[name] as Quantity;
      const after = sign === 1 ? before.add(change) : before.sub(change);
      assert(after.sign() >= 0, `usage of quota ${quota.name} went negative on ${name}`);
      next[name] = after;
    }
    if (next) usedByQuota.set(quota.name, Object.freeze(next));
  }
}
