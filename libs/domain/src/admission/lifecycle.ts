import type { LedgerEvent, ReleaseReason } from '../events/events.js';
import type { NamespaceState, Reservation } from '../events/fold.js';

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
    return { kind: 'Expired', events: [{ type: 'Released', data: { reservationId, reason: 'expired' } }] };
  }
  const superseded = supersededBy(state, reservation).map(
    (id): LedgerEvent => ({ type: 'Released', data: { reservationId: id, reason: 'superseded' } }),
  );
  return { kind: 'Commit', events: [{ type: 'Committed', data: { reservationId } }, ...superseded] };
}

/**
 * The live reservations a committed one replaces: the chain of `supersedes` back from it.
 * Two updates of one object may be pending at once; committing the later one retires the
 * earlier pending one and the object's committed state before both.
 */
function supersededBy(state: NamespaceState, reservation: Reservation): string[] {
  const ids: string[] = [];
  const seen = new Set<string>([reservation.id]);
  let next = reservation.supersedes;
  while (next !== undefined && !seen.has(next)) {
    seen.add(next);
    const previous = state.reservations.get(next);
    if (previous) ids.push(next);
    next = previous?.supersedes;
  }
  return ids;
}

export type ReleaseOutcome =
  | { readonly kind: 'Release'; readonly events: readonly LedgerEvent[] }
  /** Not live: nothing to append (release is idempotent; the ledger tells a 404 from a repeat). */
  | { readonly kind: 'NotLive' };

export function decideRelease(state: NamespaceState, reservationId: string, reason: ReleaseReason): ReleaseOutcome {
  if (!state.reservations.has(reservationId)) return { kind: 'NotLive' };
  return { kind: 'Release', events: [{ type: 'Released', data: { reservationId, reason } }] };
}
