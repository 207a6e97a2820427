import type { LedgerEvent, ReleaseReason } from '../events/events.js';
import type { NamespaceState, Reservation } from '../events/fold.js';
import { isSameResource, liveReservationsOf, releaseEvents } from './stored.js';

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
  /** Not live: never made, or released already (the ledger's history tells which). */
  | { readonly kind: 'NotLive' };

export function decideCommit(state: NamespaceState, reservationId: string, now: number): CommitOutcome {
  const reservation = state.reservations.get(reservationId);
  if (!reservation) return { kind: 'NotLive' };
  if (reservation.status === 'committed') return { kind: 'AlreadyCommitted' };
  if (reservation.expiresAt !== undefined && reservation.expiresAt <= now) {
    return { kind: 'Expired', events: releaseEvents(state, reservation, 'expired') };
  }
  const superseded = supersededBy(state, reservation).map(
    (id): LedgerEvent => ({ type: 'Released', data: { reservationId: id, reason: 'superseded' } }),
  );
  return { kind: 'Commit', events: [{ type: 'Committed', data: { reservationId } }, ...superseded] };
}

/**
 * The live reservations a committed one replaces: every older one of the same object (its
 * settled state and the changes made before it), whether or not a `supersedes` link still
 * reaches them. The state must hold the object's live reservations (the service loads them by
 * uid). Later pending changes stay: they may still happen.
 */
function supersededBy(state: NamespaceState, reservation: Reservation): string[] {
  const uid = reservation.object.uid;
  if (uid === undefined) return [];
  return liveReservationsOf(state, uid)
    .filter((other) => other.version < reservation.version && isSameResource(other, reservation.object))
    .map((other) => other.id);
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
