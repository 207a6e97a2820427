import type { QueuedReservation, WaitingFor } from '../api-types.js';
import { age, resourceList, table } from './table.js';

/**
 * How quotactl prints the reservation queue: what a waiter waits for, the line a
 * queued reserve prints, and `quotactl queue`'s table. Pure: the answer and the clock come in,
 * and every field is read defensively (a server of another version may leave some out).
 */

/**
 * `compute: cpu 1 (used 2/2)`: each quota it waits for and its resources that are short, what it
 * asks and the quota's used/hard; `queued reservation ID` alone when a blocking waiter ahead of it
 * is what it waits for. Several quotas are joined by `; `.
 */
export function waitingForText(waitingFor: readonly WaitingFor[] | undefined): string {
  const parts = (waitingFor ?? []).map((w) => {
    const resources = (w.resources ?? []).map((r) => `${r.resource} ${r.requested} (used ${r.used}/${r.hard})`);
    return resources.length > 0 ? `${w.quota}: ${resources.join(', ')}` : w.quota;
  });
  return parts.length > 0 ? parts.join('; ') : '<unknown>';
}

/** Time until an instant, in kubectl's AGE units (`9m48s`); `0s` once it has passed. */
export function until(timestamp: string | undefined, now: number): string {
  const at = timestamp ? Date.parse(timestamp) : Number.NaN;
  if (Number.isNaN(at)) return '<unknown>';
  return age(new Date(now - Math.max(0, at - now)).toISOString(), now);
}

/**
 * What `reserve --wait` prints on stderr when it is queued: where it stands in which namespace,
 * when it expires, and what it waits for.
 */
export function queuedMessage(
  answer: { id?: string; namespace?: string; position?: number; expiresAt?: string; waitingFor?: readonly WaitingFor[] },
  now: number,
): string {
  const position = answer.position === undefined ? '' : ` at position ${answer.position}`;
  const expires = answer.expiresAt ? `, expires in ${until(answer.expiresAt, now)} (${answer.expiresAt})` : '';
  return `reservation/${answer.id ?? '?'} queued${position} in ${answer.namespace ?? '?'}${expires}\n  waiting for ${waitingForText(answer.waitingFor)}\n`;
}

/** The wait to expect, as `12s (p90 40s)` in kubectl's AGE units; `<none>` without an estimate (fewer than 5 past waits like it). */
export function typicalWait(estimate: QueuedReservation['estimate'] | undefined, now: number): string {
  if (!estimate || typeof estimate.p50Seconds !== 'number' || typeof estimate.p90Seconds !== 'number') return '<none>';
  const span = (seconds: number) => age(new Date(now - seconds * 1000).toISOString(), now);
  return `${span(estimate.p50Seconds)} (p90 ${span(estimate.p90Seconds)})`;
}

/**
 * `quotactl queue`: one row per waiter in queue order (priority, then arrival). AGE is how long it
 * has waited, EXPIRES how long it may still wait, TYPICAL WAIT how long waiters like it waited;
 * WAITING FOR comes last, as free text.
 */
export function queueTable(items: readonly Partial<QueuedReservation>[], now: number): string {
  const rows = items.map((item) => [
    item.position === undefined ? '' : String(item.position),
    item.id ?? '',
    String(item.priority ?? 0),
    resourceList(item.resources),
    age(item.queuedAt, now),
    until(item.expiresAt, now),
    typicalWait(item.estimate, now),
    waitingForText(item.waitingFor),
  ]);
  return table(['POSITION', 'ID', 'PRIORITY', 'RESOURCES', 'AGE', 'EXPIRES', 'TYPICAL WAIT', 'WAITING FOR'], rows);
}
