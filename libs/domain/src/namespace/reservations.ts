import { assert } from '../assert.js';
import { decideCommit, decideRelease } from './lifecycle.js';
import { decideReconcile } from './reconcile.js';
import { notFound, refusal, type Refusal } from './answers.js';
import type {
  CommitAnswer,
  CommitReservation,
  Decided,
  Reconcile,
  ReconcileAnswer,
  ReleaseAnswer,
  ReleaseReservation,
} from './commands.js';
import { liveLoadedFor, type NamespaceFacts, type RecordedReservation } from './facts.js';

/**
 * What happens to a reservation after admission (commit, release) and the reconciler's
 * corrections, on the facts the ledger holds: the reservation's record (released ones too,
 * so that a repeat is told from a reservation that never was) and its object's live ones.
 */

const iso = (ms: number): string => new Date(ms).toISOString();

export function decideCommitReservation(command: CommitReservation, facts: NamespaceFacts): Decided<CommitAnswer> {
  const id = command.reservationId;
  const found = recordOf(id, facts, command.by);
  if ('refused' in found) return { events: [], answer: found.refused };
  const { record } = found;
  if (record.status === 'released') {
    if (record.releaseReason === 'expired') return { events: [], answer: expired(id, record.expiresAt) };
    const message = `reservation "${id}" was released (${record.releaseReason ?? 'unknown'}) at ${iso(record.releasedAt ?? 0)} and cannot be committed; reserve again`;
    return { events: [], answer: refusal('Conflict', message, 'reservations', id) };
  }
  // A commit replaces every older state of the object; an expiry takes its pending changes along.
  const outcome = decideCommit(facts.state, id, facts.now);
  switch (outcome.kind) {
    case 'AlreadyCommitted':
      return { events: [], answer: { kind: 'AlreadyCommitted' } };
    case 'Expired':
      // The release is appended; the caller is told why its commit did not happen.
      return { events: outcome.events, answer: expired(id, facts.state.reservations.get(id)?.expiresAt) };
    case 'Commit':
      return { events: outcome.events, answer: { kind: 'Committed' } };
    case 'Blocked': {
      const message = `reservation "${id}" cannot be committed while a later change of its object (reservation "${outcome.by}") waits: it would be charged less than it asks; commit or release that one first`;
      return { events: [], answer: refusal('Conflict', message, 'reservations', id) };
    }
    case 'NotLive':
      return { events: [], answer: notFound('reservations', id) };
  }
}

export function decideReleaseReservation(command: ReleaseReservation, facts: NamespaceFacts): Decided<ReleaseAnswer> {
  const found = recordOf(command.reservationId, facts, command.by);
  if ('refused' in found) return { events: [], answer: found.refused };
  // Releasing an object's settled state releases its pending changes too.
  const outcome = decideRelease(facts.state, command.reservationId, command.reason);
  if (outcome.kind === 'NotLive') return { events: [], answer: { kind: 'AlreadyReleased' } };
  return { events: outcome.events, answer: { kind: 'Released' } };
}

/**
 * The reconciler's corrections (decideReconcile) on every live reservation. A listed object no
 * live reservation claims is adopted, unless its reservation was released after the listing
 * started (the listing may show an object deleted since).
 */
export function decideReconciliation(command: Reconcile, facts: NamespaceFacts): Decided<ReconcileAnswer> {
  // A namespace that holds only its Namespace object is not managed: nothing is charged there to reconcile.
  if (!facts.known || facts.state.objectOnly)
    return {
      events: [],
      answer: { kind: 'Reconciled', actions: [], overHard: [], pending: 0, unconfirmed: 0, uncovered: [], unreadable: [] },
    };
  assert(facts.liveLoaded === 'all', 'every live reservation was loaded before reconciling');
  assert(facts.releasedSince?.since === command.listedAt, 'the releases since the listing were looked up before reconciling');
  const decision = decideReconcile(facts.state, {
    covers: command.covers,
    objects: command.objects,
    ...(command.listed ? { listed: command.listed } : {}),
    listedAt: command.listedAt,
    now: facts.now,
    graceMs: command.graceMs,
    ids: command.ids,
    releasedSinceListing: facts.releasedSince.uids,
    ...(command.deleted?.length ? { deleted: new Set(command.deleted) } : {}),
  });
  // A complete listing begun after the namespace became managed, and after the webhooks were sent
  // its writes (`countable`), has adopted what exists: its first count.
  const since = facts.state.awaitingCountSince;
  const counted = since !== undefined && command.covers.length > 0 && command.listedAt >= since && command.countable !== false;
  const events = counted ? [...decision.events, { type: 'Counted', data: { listedAt: iso(command.listedAt) } } as const] : decision.events;
  return {
    events,
    answer: {
      kind: 'Reconciled',
      actions: decision.actions,
      overHard: decision.overHard,
      pending: decision.pending,
      unconfirmed: decision.unconfirmed,
      uncovered: decision.uncovered,
      unreadable: decision.unreadable,
      ...(counted ? { counted: true } : {}),
    },
  };
}

/** The listed uids no live reservation claims: those whose releases since the listing matter. */
export function unclaimedUids(command: Reconcile, facts: NamespaceFacts): string[] {
  const claimed = new Set<string>();
  for (const reservation of facts.state.reservations.values())
    if (reservation.object.uid !== undefined) claimed.add(reservation.object.uid);
  return [...new Set(command.objects.map((o) => o.uid))].filter((uid) => !claimed.has(uid));
}

function recordOf(
  id: string,
  facts: NamespaceFacts,
  by: 'rest' | undefined,
): { readonly record: RecordedReservation } | { readonly refused: Refusal } {
  if (!facts.known)
    return { refused: refusal('NamespaceNotFound', `namespaces "${facts.namespace}" not found`, 'namespaces', facts.namespace) };
  const record = facts.reservations.get(id);
  assert(record !== undefined, `reservation ${id} was looked up before deciding`);
  if (record === null) return { refused: notFound('reservations', id) };
  if (by === 'rest' && record.origin !== 'rest') return { refused: clusterOwned(record) };
  const uid = record.object.uid;
  assert(
    record.status === 'released' || uid === undefined || liveLoadedFor(facts, uid),
    `the live reservations of ${uid} were loaded before deciding`,
  );
  return { record };
}

/** A REST call aimed at a reservation the cluster made: only the API server's reviews and the reconciler's listing settle it. */
function clusterOwned(record: RecordedReservation): Refusal {
  const { object } = record;
  const what = `${object.group ? `${object.resource}.${object.group}` : object.resource}${object.name ? ` "${object.name}"` : ''}`;
  const how = record.origin === 'adopted' ? 'found in the cluster by the reconciler' : "made by the cluster's admission webhook";
  const message = `reservation "${record.id}" (${what}) was ${how}: it is committed and released from what the cluster holds, by the reconciler, never by a REST call`;
  return refusal('Forbidden', message, 'reservations', record.id);
}

function expired(id: string, expiresAt: number | undefined): Refusal {
  const at = expiresAt === undefined ? '' : ` at ${iso(expiresAt)}`;
  return refusal(
    'Expired',
    `reservation "${id}" expired${at} before it was committed and has been released; reserve again`,
    'reservations',
    id,
  );
}
