import { drainQueue, fairShareOrder, fairShareWeight, nextSharedAdmission, Resources, type LedgerEvent, type NamespaceState } from '@quota/domain';
import type { EventMeta, NamespaceUnitOfWork } from './unit-of-work.js';

/** Most admissions one fair drain makes (the rest wait for the next one, a moment later). */
export const FAIR_DRAIN_ADMISSIONS_MAX = 1000;

/**
 * A shared quota's fair drain, inside one transaction holding the heads of every
 * namespace waiting under it (and of every shared quota covering them): while some namespace's
 * next waiter fits, admit the one of the namespace with the lowest weighted dominant share of the
 * quota (the domain's fairShareOrder; weights from `quota-ledger.io/fair-share-weight`), then ask
 * again. Each unit of work's facts read the shared heads as the admissions before leave them, so
 * the quota is never charged over hard. Returns how many were admitted, per namespace.
 */
export function fairDrain(units: readonly NamespaceUnitOfWork[], key: string, meta: EventMeta, dequeued: { outcome: DequeueOutcome; waitedMs: number }[] = []): Map<string, number> {
  const admitted = new Map<string, number>();
  const append = (unit: NamespaceUnitOfWork, events: readonly LedgerEvent[]): void => {
    dequeued.push(...dequeuedBy(unit.current, events, unit.now));
    unit.append(events, meta);
  };
  for (let n = 0; n < FAIR_DRAIN_ADMISSIONS_MAX; n++) {
    const chosen = fairest(units, key);
    if (chosen) {
      append(chosen.unit, chosen.events);
      admitted.set(chosen.unit.namespace, (admitted.get(chosen.unit.namespace) ?? 0) + 1);
      continue;
    }
    // None of the quota's waiters fits: a waiter that left may have unblocked its namespace's
    // own queue (and what that admits, the shared one's), so each namespace drains its own too.
    let more = false;
    for (const unit of units) {
      const events = drainQueue(unit.facts);
      if (events.length === 0) continue;
      append(unit, events);
      more ||= events.some((event) => event.type === 'AdmittedFromQueue');
    }
    if (!more) break;
  }
  return admitted;
}

/** The next admission by fair share: of the namespaces whose next waiter fits, the one of the lowest weighted dominant share. */
function fairest(units: readonly NamespaceUnitOfWork[], key: string): { unit: NamespaceUnitOfWork; events: LedgerEvent[] } | undefined {
  const next = new Map<string, { unit: NamespaceUnitOfWork; events: LedgerEvent[] }>();
  for (const unit of units) {
    const events = nextSharedAdmission(unit.facts, key);
    if (events) next.set(unit.namespace, { unit, events });
  }
  if (next.size === 0) return undefined;
  const hard = units.find((unit) => unit.current.shared.has(key))?.current.shared.get(key)?.hard ?? Resources.EMPTY;
  const candidates = [...next.values()].map(({ unit }) => ({
    namespace: unit.namespace,
    weight: fairShareWeight(unit.current.object?.definition.metadata),
    used: unit.current.sharedUsed.get(key) ?? Resources.EMPTY,
  }));
  const first = fairShareOrder(candidates, hard)[0];
  return first ? next.get(first.namespace) : undefined;
}

/**
 * The shared quotas whose fair drains should run after a command: those it freed room in
 * (withdrawn from the namespace, or charged less by it: a release, a termination, a commit that
 * charged less), and every one covering the namespace when it has waiters and the command may
 * have made room for them or unblocked them (anything but a new reservation or waiter: a raised
 * local hard, a waiter that left its queue).
 */
export function freedSharedKeys(before: NamespaceState, after: NamespaceState, events: readonly LedgerEvent[]): string[] {
  if ((before.queue.size > 0 || after.queue.size > 0) && events.some((event) => event.type !== 'Reserved' && event.type !== 'Queued')) {
    return [...new Set([...before.shared.keys(), ...after.shared.keys()])];
  }
  const freed: string[] = [];
  for (const [key, used] of before.sharedUsed) {
    const now = after.sharedUsed.get(key);
    if (!after.shared.has(key) || !now || Object.entries(used).some(([resource, amount]) => (Resources.get(now, resource)?.cmp(amount) ?? -1) < 0)) freed.push(key);
  }
  return freed;
}

/** How a queued reservation stopped waiting, as the queue-wait metric labels it. */
export type DequeueOutcome = 'admitted' | 'cancelled' | 'expired';

const DEQUEUE_OUTCOMES: Readonly<Record<string, DequeueOutcome>> = { AdmittedFromQueue: 'admitted', Cancelled: 'cancelled', Expired: 'expired' };

/** Each waiter these events took out of the queue, with how long it waited (`now`: the transaction's time). */
export function dequeuedBy(before: NamespaceState, events: readonly LedgerEvent[], now: number): { outcome: DequeueOutcome; waitedMs: number }[] {
  return events.flatMap((event) => {
    const outcome = DEQUEUE_OUTCOMES[event.type];
    const waiter = outcome && 'reservationId' in event.data ? before.queue.get(event.data.reservationId) : undefined;
    return outcome && waiter ? [{ outcome, waitedMs: now - waiter.queuedAt }] : [];
  });
}
