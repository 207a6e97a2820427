import type { LedgerEvent, ReleaseReason, ReservationSource } from '../events/events.js';
import type { NamespaceState, Reservation } from '../events/fold.js';
import type { GroupResource } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { ScopeFacts } from '../scopes/facts.js';

/**
 * What the ledger itself holds for one object (by its uid): the only thing an UPDATE or a
 * repeated CREATE is charged against. A request's `oldObject` is the caller's claim about the
 * object; the ledger's reservations are what it has counted. (Kubernetes' own quota trusts the
 * API server's oldObject; we are reached by callers we cannot trust that far.)
 *
 * An object has at most one *settled* reservation — committed (or adopted), else its pending
 * CREATE — and any number of pending UPDATEs, each charged the increase over the settled
 * usage while it waits to be confirmed. Charging over the settled state, not over the newest
 * pending one, keeps usage at or above every state the object can really be in: any pending
 * update may turn out never to have happened.
 *
 * The invariant, which admission, commits and the reconciler's corrections all keep: for every
 * object the ledger holds, what it charges (the settled contribution plus every pending change's
 * charge) is at least the usage of every state the object may be in — the settled one, each
 * change that may still be written, and so what its spec asks now. Hence, while a change waits,
 * every further change is recorded, even one back to the settled state (object-reservation.ts); a change
 * is committed only when no later one that may still be written would be charged less over it
 * (lifecycle.ts); and the reconciler lowers nothing while the listing may not show a change yet
 * (settle-listed.ts).
 */

/** Who a reservation answers to: the cluster's webhook, a REST call, or the cluster's listing (adopted). */
export type ReservationOrigin = ReservationSource | 'adopted';

/**
 * Where a reservation came from. Reservations recorded before their source was are
 * told by their request key when it is known (`review:` the webhook's, `rest:` a REST call's);
 * else one with an object uid is taken as the webhook's, the safe side: a REST call can then no
 * longer release it, the reconciler still can.
 */
export function originOf(reservation: Pick<Reservation, 'operation' | 'source' | 'object'>, requestId?: string): ReservationOrigin {
  if (reservation.operation === 'ADOPT') return 'adopted';
  if (reservation.source) return reservation.source;
  if (requestId?.startsWith('review:')) return 'webhook';
  if (requestId?.startsWith('rest:')) return 'rest';
  return reservation.object.uid === undefined ? 'rest' : 'webhook';
}

/** Most live reservations of one object: its settled state and the changes waiting to be confirmed. */
export const LIVE_PER_OBJECT_MAX = 16;

/** The live reservations of the object with this uid, oldest first (as many as the state holds). */
export function liveReservationsOf(state: NamespaceState, uid: string): Reservation[] {
  const live: Reservation[] = [];
  for (const reservation of state.reservations.values()) if (reservation.object.uid === uid) live.push(reservation);
  return live.sort((a, b) => a.version - b.version);
}

export function isSameResource(reservation: Reservation, groupResource: GroupResource): boolean {
  return reservation.object.group === groupResource.group && reservation.object.resource === groupResource.resource;
}

/** A reservation that records the object as it is (not a change waiting to be confirmed). */
export function isSettled(reservation: Reservation): boolean {
  return reservation.status === 'committed' || reservation.operation !== 'UPDATE';
}

/** The settled reservation of an object's live ones; undefined when only pending changes are left. */
export function settledOf(live: readonly Reservation[]): Reservation | undefined {
  return live.find(isSettled);
}

/** The object's usage and scope facts as the ledger counts them in a settled reservation. */
export interface SettledState {
  readonly usage: ResourceList;
  readonly scopeFacts: ScopeFacts;
}

export function settledStateOf(reservation: Reservation): SettledState {
  return { usage: reservation.contribution, scopeFacts: reservation.scopeFacts };
}

/**
 * The state a live reservation says the object is in: a pending change's new usage, or what the
 * settled one counts.
 */
export function stateOf(reservation: Reservation): SettledState {
  if (isSettled(reservation)) return settledStateOf(reservation);
  return { usage: reservation.objectUsage ?? reservation.contribution, scopeFacts: reservation.scopeFacts };
}

/** The same usage (every key, as quantities) and the same scope facts. */
export function sameState(a: SettledState, b: SettledState): boolean {
  return Resources.equals(a.usage, b.usage) && sameFacts(a.scopeFacts, b.scopeFacts);
}

/** The same facts, key by key (a fact one side lacks differs). Cheap: the reconciler asks it of every listed object. */
export function sameFacts(a: ScopeFacts, b: ScopeFacts): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => sameFact(a[key], b[key]));
}

function sameFact(a: ScopeFacts[string] | undefined, b: ScopeFacts[string] | undefined): boolean {
  if (typeof a === 'boolean' || typeof b === 'boolean' || a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

/**
 * The events that release a reservation: it, and — when it holds the object's settled state —
 * every pending change of the same object too. A change can only be confirmed on top of the
 * state it was charged against; once that state is gone (the object was deleted, never
 * created, expired or given up), no change of it can happen, and letting one be committed
 * later would count its whole new usage against a check that assumed the settled usage was
 * still there. `superseded` releases (a commit replacing older states) never cascade.
 */
export function releaseEvents(
  state: NamespaceState,
  reservation: Reservation,
  reason: ReleaseReason,
  alreadyReleased: ReadonlySet<string> = new Set(),
): LedgerEvent[] {
  const events: LedgerEvent[] = [{ type: 'Released', data: { reservationId: reservation.id, reason } }];
  const uid = reservation.object.uid;
  if (reason === 'superseded' || uid === undefined || !isSettled(reservation)) return events;
  for (const other of liveReservationsOf(state, uid)) {
    if (other.id === reservation.id || isSettled(other) || alreadyReleased.has(other.id) || !isSameResource(other, reservation.object))
      continue;
    events.push({ type: 'Released', data: { reservationId: other.id, reason } });
  }
  return events;
}
