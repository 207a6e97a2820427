import type { LedgerEvent, ReleaseReason } from '../events/events.js';
import type { NamespaceState, Reservation } from '../events/fold.js';
import type { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { isSameResource, isSettled, liveReservationsOf, releaseEvents, sameFacts, settledOf, settledStateOf, stateOf } from './stored.js';

/**
 * What happens to a reservation after admission: it is committed when its object is known
 * to exist, or released. Pure deciders over the folded state; the caller appends the events.
 */
export type CommitOutcome =
  /** Append these: the commit, and the release of every earlier state of the object it replaces. */
  | { readonly kind: 'Commit'; readonly events: readonly LedgerEvent[] }
  /** Already committed: nothing to append (commit is idempotent). */
  | { readonly kind: 'AlreadyCommitted' }
  /** A REST reservation past its expiry: release it instead (the caller answers 410 Gone). */
  | { readonly kind: 'Expired'; readonly events: readonly LedgerEvent[] }
  /**
   * A later change of the object waits, charged over the settled state this commit would lower:
   * committing now would charge less than that change asks if it is written (stored.ts). It waits
   * until the later change is committed or released.
   */
  | { readonly kind: 'Blocked'; readonly by: string }
  /** Not live: never made, or released already (the ledger's history tells which). */
  | { readonly kind: 'NotLive' };

/** `released`: reservations the caller releases in the same transaction, before this commit. */
export function decideCommit(
  state: NamespaceState,
  reservationId: string,
  now: number,
  released: ReadonlySet<string> = NONE,
): CommitOutcome {
  const reservation = state.reservations.get(reservationId);
  if (!reservation || released.has(reservationId)) return { kind: 'NotLive' };
  if (reservation.status === 'committed') return { kind: 'AlreadyCommitted' };
  if (reservation.expiresAt !== undefined && reservation.expiresAt <= now) {
    return { kind: 'Expired', events: releaseEvents(state, reservation, 'expired', released) };
  }
  const live = objectReservations(state, reservation).filter((other) => !released.has(other.id));
  const blocker = laterChangeUnderCharged(live, reservation);
  if (blocker) return { kind: 'Blocked', by: blocker.id };
  const superseded = live
    .filter((other) => other.version < reservation.version)
    .map((other): LedgerEvent => ({ type: 'Released', data: { reservationId: other.id, reason: 'superseded' } }));
  return { kind: 'Commit', events: [{ type: 'Committed', data: { reservationId } }, ...superseded] };
}

const NONE: ReadonlySet<string> = new Set();

/**
 * The live reservations of the reservation's object (itself included), oldest first. The state
 * must hold them all (the service loads them by uid).
 */
function objectReservations(state: NamespaceState, reservation: Reservation): Reservation[] {
  const uid = reservation.object.uid;
  if (uid === undefined) return [reservation];
  return liveReservationsOf(state, uid).filter((other) => isSameResource(other, reservation.object));
}

/**
 * A later pending change that committing `reservation` would leave charged less than it asks.
 * Each pending change is charged its increase over the settled state; committing an earlier
 * change makes that change the settled state, so a later one stays covered only if the commit
 * lowers nothing: the same scope facts and at least the settled usage on every resource. (Every
 * older state is retired with the commit, so only later changes matter.)
 */
export function laterChangeUnderCharged(live: readonly Reservation[], reservation: Reservation): Reservation | undefined {
  const later = live.find((other) => other.version > reservation.version && !isSettled(other));
  const settled = settledOf(live);
  // Without a settled state every pending change is charged its whole usage.
  if (!later || !settled || settled.id === reservation.id) return undefined;
  const before = settledStateOf(settled);
  const after = stateOf(reservation);
  return sameFacts(before.scopeFacts, after.scopeFacts) && covers(after.usage, before.usage) ? undefined : later;
}

/** Whether `a` is at least `b` on every resource `b` names (a resource `a` lacks counts as zero). */
function covers(a: ResourceList, b: ResourceList): boolean {
  return Resources.resourceNames(b).every((name) => {
    const want = Resources.get(b, name) as Quantity;
    const have = Resources.get(a, name);
    return have === undefined ? want.sign() <= 0 : have.cmp(want) >= 0;
  });
}

export type ReleaseOutcome =
  | { readonly kind: 'Release'; readonly events: readonly LedgerEvent[] }
  /** Not live: nothing to append (release is idempotent; the ledger tells a 404 from a repeat). */
  | { readonly kind: 'NotLive' };

/** Releases a reservation, and with an object's settled state its pending changes (see `releaseEvents`). */
export function decideRelease(state: NamespaceState, reservationId: string, reason: ReleaseReason): ReleaseOutcome {
  const reservation = state.reservations.get(reservationId);
  if (!reservation) return { kind: 'NotLive' };
  return { kind: 'Release', events: releaseEvents(state, reservation, reason) };
}
