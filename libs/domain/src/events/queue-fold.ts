import { assert } from '../assert.js';
import * as Resources from '../resources/resource-list.js';
import type { AdmittedFromQueue, Cancelled, Expired, Queued } from './events.js';
import type { Draft, Waiter } from './state.js';

/**
 * The queue's order: higher priority first, then arrival (the Queued event's stream
 * version). Admission from the queue, the fold's pass counts and the REST position all use it.
 */
export function compareWaiters(a: Pick<Waiter, 'priority' | 'version'>, b: Pick<Waiter, 'priority' | 'version'>): number {
  return b.priority - a.priority || a.version - b.version;
}

/** The waiters in queue order. */
export function queueOrder(queue: ReadonlyMap<string, Waiter>): Waiter[] {
  return [...queue.values()].sort(compareWaiters);
}

type QueueEvent = Queued | AdmittedFromQueue | Cancelled | Expired;

export function applyQueueEvent(draft: Draft, event: QueueEvent, version: number, at: number): void {
  switch (event.type) {
    case 'Queued': {
      const { data } = event;
      assert(!draft.queue.has(data.reservationId), `reservation ${data.reservationId} queued twice`);
      draft.queue.set(data.reservationId, {
        id: data.reservationId,
        object: data.object,
        resources: Resources.resourceList(data.resources),
        priority: data.priority,
        version,
        queuedAt: at,
        deadline: Date.parse(data.deadline),
        ...(data.ttlMs === undefined ? {} : { ttlMs: data.ttlMs }),
        passed: 0,
        waitingFor: data.waitingFor,
        ...(data.principal === undefined ? {} : { principal: data.principal }),
      });
      return;
    }
    case 'AdmittedFromQueue': {
      const admitted = draft.queue.get(event.data.reservationId);
      assert(admitted, `reservation ${event.data.reservationId} admitted from the queue but not queued`);
      draft.queue.delete(admitted.id);
      // Every waiter ordered before it was passed once more: the BestEffortFIFO bound counts this.
      for (const waiter of draft.queue.values()) {
        if (compareWaiters(waiter, admitted) < 0) draft.queue.set(waiter.id, { ...waiter, passed: waiter.passed + 1 });
      }
      return;
    }
    case 'Cancelled':
    case 'Expired':
      assert(
        draft.queue.delete(event.data.reservationId),
        `reservation ${event.data.reservationId} ${event.type.toLowerCase()} but not queued`,
      );
      return;
  }
}
