import { assert, decideFairDrain, type LedgerEvent, type NamespaceState } from '@quota/domain';
import type { EventMeta, NamespaceUnitOfWork } from './unit-of-work.js';

/**
 * A shared quota's fair drain, inside one transaction holding the heads of every namespace
 * waiting under it (and of every shared quota covering them): the domain decides which waiters to
 * admit, in which order, by weighted fair share (decideFairDrain, on each unit of work's facts as
 * the transaction read them); each unit appends its namespace's events in that order.
 * Returns how many were admitted, per namespace.
 */
export function fairDrain(
  units: readonly NamespaceUnitOfWork[],
  key: string,
  meta: EventMeta,
  dequeued: { outcome: DequeueOutcome; waitedMs: number }[] = [],
): Map<string, number> {
  const byNamespace = new Map(units.map((unit) => [unit.namespace, unit]));
  const decision = decideFairDrain(
    units.map((unit) => unit.facts),
    key,
  );
  for (const { namespace, events } of decision.steps) {
    const unit = byNamespace.get(namespace);
    assert(unit, `the fair drain decided on namespace ${namespace}, which it was given`);
    dequeued.push(...dequeuedBy(unit.current, events, unit.now));
    unit.append(events, meta);
  }
  return new Map(decision.admitted);
}

/** How a queued reservation stopped waiting, as the queue-wait metric labels it. */
export type DequeueOutcome = 'admitted' | 'cancelled' | 'expired';

const DEQUEUE_OUTCOMES: Readonly<Record<string, DequeueOutcome>> = {
  AdmittedFromQueue: 'admitted',
  Cancelled: 'cancelled',
  Expired: 'expired',
};

/** Each waiter these events took out of the queue, with how long it waited (`now`: the transaction's time). */
export function dequeuedBy(
  before: NamespaceState,
  events: readonly LedgerEvent[],
  now: number,
): { outcome: DequeueOutcome; waitedMs: number }[] {
  return events.flatMap((event) => {
    const outcome = DEQUEUE_OUTCOMES[event.type];
    const waiter = outcome && 'reservationId' in event.data ? before.queue.get(event.data.reservationId) : undefined;
    return outcome && waiter ? [{ outcome, waitedMs: now - waiter.queuedAt }] : [];
  });
}
