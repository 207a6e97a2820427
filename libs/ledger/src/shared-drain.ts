import { fairShareOrder, fairShareWeight, nextSharedAdmission, Resources, type LedgerEvent, type NamespaceState } from '@quota/domain';
import type { EventMeta, NamespaceUnitOfWork } from './unit-of-work.js';

/** Most admissions one fair drain makes (the rest wait for the next one, a moment later). */
export const FAIR_DRAIN_ADMISSIONS_MAX = 1000;

/**
 * A shared quota's fair drain (issue 41), inside one transaction holding the heads of every
 * namespace waiting under it (and of every shared quota covering them): while some namespace's
 * next waiter fits, admit the one of the namespace with the lowest weighted dominant share of the
 * quota (the domain's fairShareOrder; weights from `quota-ledger.io/fair-share-weight`), then ask
 * again. Each unit of work's facts read the shared heads as the admissions before leave them, so
 * the quota is never charged over hard. Returns how many were admitted, per namespace.
 */
export function fairDrain(units: readonly NamespaceUnitOfWork[], key: string, meta: EventMeta): Map<string, number> {
  const admitted = new Map<string, number>();
  for (let n = 0; n < FAIR_DRAIN_ADMISSIONS_MAX; n++) {
    const next = new Map<string, { unit: NamespaceUnitOfWork; events: LedgerEvent[] }>();
    for (const unit of units) {
      const events = nextSharedAdmission(unit.facts, key);
      if (events) next.set(unit.namespace, { unit, events });
    }
    if (next.size === 0) break;
    const hard = units.find((unit) => unit.current.shared.has(key))?.current.shared.get(key)?.hard ?? Resources.EMPTY;
    const candidates = [...next.values()].map(({ unit }) => ({
      namespace: unit.namespace,
      weight: fairShareWeight(unit.current.object?.definition.metadata),
      used: unit.current.sharedUsed.get(key) ?? Resources.EMPTY,
    }));
    const first = fairShareOrder(candidates, hard)[0];
    const chosen = first ? next.get(first.namespace) : undefined;
    if (!chosen) break;
    chosen.unit.append(chosen.events, meta);
    admitted.set(chosen.unit.namespace, (admitted.get(chosen.unit.namespace) ?? 0) + 1);
  }
  return admitted;
}

/**
 * The shared quotas a command freed room in: withdrawn from the namespace, or charged less by it
 * (a release, a termination, a commit that charged less). Their fair drains should run now.
 */
export function freedSharedKeys(before: NamespaceState, after: NamespaceState): string[] {
  const freed: string[] = [];
  for (const [key, used] of before.sharedUsed) {
    const now = after.sharedUsed.get(key);
    if (!after.shared.has(key) || !now || Object.entries(used).some(([resource, amount]) => (Resources.get(now, resource)?.cmp(amount) ?? -1) < 0)) freed.push(key);
  }
  return freed;
}
