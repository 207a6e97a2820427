import { assert } from '../assert.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { LedgerEvent, ReleaseReason } from './events.js';
import { applyContribution } from './quota-usage.js';
import type { Draft, Reservation } from './state.js';

/** The events of a reservation's life: what the fold (fold.ts) does with each. */
export type ReservationEvent = Extract<LedgerEvent, { readonly type: 'Reserved' | 'Adopted' | 'Committed' | 'Released' | 'Terminated' }>;

const parse = (raw: Readonly<Record<string, string>> | undefined): ResourceList => Resources.resourceList(raw ?? {});

/** A reservation made, adopted, committed, released or terminated: the live reservations and the usage they count move together. */
export function applyReservationEvent(draft: Draft, event: ReservationEvent, version: number, at: number): void {
  switch (event.type) {
    case 'Reserved': {
      const data = event.data;
      const expiresAt = data.expiresAt === undefined ? undefined : Date.parse(data.expiresAt);
      assert(expiresAt === undefined || !Number.isNaN(expiresAt), `reservation ${data.reservationId} has a bad expiresAt`);
      addReservation(draft, {
        id: data.reservationId,
        object: data.object,
        operation: data.operation,
        ...(data.source ? { source: data.source } : {}),
        status: 'reserved',
        contribution: parse(data.charged),
        ...(data.objectUsage ? { objectUsage: parse(data.objectUsage) } : {}),
        ...(data.supersedes ? { supersedes: data.supersedes } : {}),
        scopeFacts: data.scopeFacts,
        ...(data.previousScopeFacts ? { previousScopeFacts: data.previousScopeFacts } : {}),
        ...(data.oldResourceVersion ? { oldResourceVersion: data.oldResourceVersion } : {}),
        version,
        reservedAt: at,
        ...(expiresAt === undefined ? {} : { expiresAt }),
      });
      return;
    }
    case 'Adopted': {
      const data = event.data;
      addReservation(draft, {
        id: data.reservationId,
        object: data.object,
        operation: 'ADOPT',
        status: 'committed',
        contribution: parse(data.usage),
        scopeFacts: data.scopeFacts,
        version,
        reservedAt: at,
        committedAt: at,
      });
      return;
    }
    case 'Committed': {
      commitReservation(draft, event.data.reservationId, at);
      return;
    }
    case 'Released': {
      releaseReservation(draft, event.data.reservationId, event.data.reason);
      return;
    }
    case 'Terminated': {
      terminateReservation(draft, event.data, at);
      return;
    }
  }
}

function addReservation(draft: Draft, reservation: Reservation): void {
  assert(!draft.reservations.has(reservation.id), `reservation ${reservation.id} recorded twice`);
  assert(Resources.negativeKeys(reservation.contribution).length === 0, `reservation ${reservation.id} charges a negative quantity`);
  draft.reservations.set(reservation.id, reservation);
  if (reservation.object.uid) draft.reservationsByUid.set(reservation.object.uid, reservation.id);
  applyContribution(draft, reservation, 1);
}

function commitReservation(draft: Draft, reservationId: string, at: number): void {
  const reservation = draft.reservations.get(reservationId);
  assert(reservation, `reservation ${reservationId} committed but not live`);
  assert(reservation.status === 'reserved', `reservation ${reservationId} committed twice`);
  // A committed update counts the object's whole new usage; the reservation of its
  // previous state is released (superseded) by its own event.
  const { previousScopeFacts: _, oldResourceVersion: __, ...rest } = reservation;
  const committed: Reservation = {
    ...rest,
    status: 'committed',
    contribution: reservation.objectUsage ?? reservation.contribution,
    committedAt: at,
  };
  applyContribution(draft, reservation, -1);
  applyContribution(draft, committed, 1);
  draft.reservations.set(reservationId, committed);
}

function terminateReservation(draft: Draft, data: Extract<ReservationEvent, { readonly type: 'Terminated' }>['data'], at: number): void {
  const { reservationId } = data;
  const reservation = draft.reservations.get(reservationId);
  assert(reservation, `reservation ${reservationId} terminated but not live`);
  assert(reservation.status === 'committed', `reservation ${reservationId} terminated before it was committed`);
  assert(reservation.terminatedAt === undefined, `reservation ${reservationId} terminated twice`);
  const remaining = parse(data.usage);
  // It releases a part of the charge: every key it keeps was charged, and no more of it.
  const unknown = Resources.resourceNames(remaining).filter((name) => !Resources.has(reservation.contribution, name));
  assert(
    unknown.length === 0 && Resources.lessThanOrEqual(remaining, reservation.contribution).ok,
    `reservation ${reservationId} terminated to more than it counted`,
  );
  const terminated: Reservation = { ...reservation, contribution: remaining, terminatedAt: at };
  applyContribution(draft, reservation, -1);
  applyContribution(draft, terminated, 1);
  draft.reservations.set(reservationId, terminated);
}

function releaseReservation(draft: Draft, id: string, _reason: ReleaseReason): void {
  const reservation = draft.reservations.get(id);
  // Released reservations leave the state, so a second release finds nothing: a bug upstream.
  assert(reservation, `reservation ${id} released but not live (released twice?)`);
  draft.reservations.delete(id);
  const uid = reservation.object.uid;
  if (uid && draft.reservationsByUid.get(uid) === id) {
    draft.reservationsByUid.delete(uid);
    // An UPDATE that is released falls back to the reservation it would have superseded.
    if (reservation.supersedes && draft.reservations.has(reservation.supersedes)) {
      draft.reservationsByUid.set(uid, reservation.supersedes);
    }
  }
  draft.releasedCount++;
  applyContribution(draft, reservation, -1);
}
