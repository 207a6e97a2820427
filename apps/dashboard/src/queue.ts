import type { QueuedReservation, WaitingFor } from '@quota/api';
import { age } from './format.js';

/**
 * The namespace's queue as the page reads it: each waiter's place, what it waits for
 * in words, how long it has waited and may still wait. Pure: the answer and the clock come in,
 * and every field is read defensively (a service of another version may leave some out).
 */

/** One line per quota a waiter waits for: `compute` and `requests.cpu needs 1, 2 of 2 used`. */
export interface WaitingLine {
  readonly quota: string;
  /** Empty when what it waits for is a blocking reservation ahead of it (the quota names it). */
  readonly detail: string;
}

export function waitingLines(waitingFor: readonly WaitingFor[] | undefined): WaitingLine[] {
  return (waitingFor ?? []).map((w) => ({
    quota: w.quota,
    detail: (w.resources ?? []).map((r) => `${r.resource} needs ${r.requested}, ${r.used} of ${r.hard} used`).join('; '),
  }));
}

/** "in 9 min" until an instant, "due" once it has passed (the sweep expires it within a second or so). */
export function timeLeft(iso: string | undefined, nowMs: number): string {
  const at = iso ? Date.parse(iso) : Number.NaN;
  if (Number.isNaN(at)) return '—';
  if (at <= nowMs) return 'due';
  return `in ${age(new Date(nowMs - (at - nowMs)).toISOString(), nowMs)}`;
}

/** The object a waiter is for: "Job train-1", else its resource. */
export function objectLabel(object: Partial<QueuedReservation['object']> | undefined): string {
  const type = object?.kind ?? object?.resource ?? 'object';
  return object?.name ? `${type} ${object.name}` : type;
}

/** What a table row shows of one waiter. */
export interface QueueRow {
  readonly id: string;
  readonly position: string;
  readonly object: string;
  readonly priority: string;
  /** How often reservations behind it were admitted before it (the BestEffortFIFO bound counts these); empty for none. */
  readonly passed: string;
  readonly waiting: WaitingLine[];
  readonly waited: string;
  /** `typically 42s (p90 3m5s)`: how long recent waiters like it waited; empty without an estimate. */
  readonly typical: string;
  readonly expires: string;
}

export function queueRow(item: Partial<QueuedReservation>, nowMs: number): QueueRow {
  const passed = item.passed ?? 0;
  return {
    id: item.id ?? '',
    position: item.position === undefined ? '—' : String(item.position),
    object: objectLabel(item.object),
    priority: String(item.priority ?? 0),
    passed: passed > 0 ? `passed ${passed}×` : '',
    waiting: waitingLines(item.waitingFor),
    waited: item.queuedAt ? age(item.queuedAt, nowMs) : '—',
    typical: typicalWait(item.estimate, nowMs),
    expires: timeLeft(item.expiresAt, nowMs),
  };
}

function typicalWait(estimate: QueuedReservation['estimate'] | undefined, nowMs: number): string {
  if (typeof estimate?.p50Seconds !== 'number' || typeof estimate.p90Seconds !== 'number') return '';
  const span = (seconds: number) => age(new Date(nowMs - seconds * 1000).toISOString(), nowMs);
  return `typically ${span(estimate.p50Seconds)} (p90 ${span(estimate.p90Seconds)})`;
}

/** One waiter of a shared quota, with its namespace and that namespace's fair-share weight. */
export interface SharedWaiter {
  readonly namespace: string;
  readonly weight: number;
  readonly item: Partial<QueuedReservation>;
}

/**
 * A shared quota's queue (`GET …/queue` of a ClusterResourceQuota or a HierarchicalResourceQuota)
 * as rows: its namespaces in the order its fair drain serves them (the lowest weighted dominant
 * share first, as the server answers), each namespace's waiters in its own queue's order.
 */
export function sharedWaiters(
  queue:
    | {
        readonly namespaces?: readonly {
          readonly namespace: string;
          readonly weight?: number;
          readonly items?: readonly Partial<QueuedReservation>[];
        }[];
      }
    | undefined,
): SharedWaiter[] {
  return (queue?.namespaces ?? []).flatMap((waiting) =>
    [...(waiting.items ?? [])]
      .sort((a, b) => (a.position ?? Infinity) - (b.position ?? Infinity))
      .map((item) => ({ namespace: waiting.namespace, weight: waiting.weight ?? 1, item })),
  );
}
