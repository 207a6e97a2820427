import { assert } from '../assert.js';
import type { GroupResource } from '../kube/types.js';
import type { LedgerEvent, ReleaseReason, TerminationReason } from '../events/events.js';
import { fold, type NamespaceState, type Reservation } from '../events/fold.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { Quantity } from '../quantity/quantity.js';
import { decideCommit } from './lifecycle.js';
import { measureListing, planListed, type ExistingObject, type Listed, type MeasuredObject } from './settle-listed.js';
import { isSameResource, originOf, releaseEvents } from './stored.js';

export type { ExistingObject } from './settle-listed.js';

/**
 * The reconciler's decision for one namespace: the ledger's live reservations against the
 * objects that really exist, answered with corrective events only (the recount race of
 * docs/architecture.md: usage is never overwritten by a recount). Pure: the listing, the times and the new ids come in, as data.
 */

export interface ReconcileInput {
  /** The resources the listing is complete for; reservations of other resources are left alone. */
  readonly covers: readonly GroupResource[];
  readonly objects: readonly ExistingObject[];
  /** The objects measured already (`measureListing`); absent: measured here, at `now`. */
  readonly listed?: readonly Listed[];
  /**
   * When the listing started (epoch ms). An object created after it may be missing from it,
   * so only what was reserved a grace period before it, or committed before it, can be
   * judged absent.
   */
  readonly listedAt: number;
  /** The transaction's time (epoch ms), for TTL expiry and adopted usage. */
  readonly now: number;
  /** A reservation younger than this (at `listedAt`) is never released as stale. */
  readonly graceMs: number;
  /** The ids new reservations get (adopted or measured again), used in order; at most one per listed object. */
  readonly ids: readonly string[];
  /**
   * Uids whose reservation was released at or after `listedAt`. The listing may show such an
   * object although it has been deleted since (another reconcile saw it gone and released it),
   * so it is not adopted on this listing; a later listing adopts it if it really exists.
   */
  readonly releasedSinceListing?: ReadonlySet<string>;
  /** Uids the source saw deleted (Reconcile.deleted): their objects can never exist again. */
  readonly deleted?: ReadonlySet<string>;
}

export type ReconcileAction =
  | { readonly kind: 'commit'; readonly reservationId: string; readonly uid: string }
  | { readonly kind: 'release'; readonly reservationId: string; readonly reason: ReleaseReason; readonly uid?: string }
  | { readonly kind: 'terminate'; readonly reservationId: string; readonly reason: TerminationReason; readonly uid: string }
  | { readonly kind: 'adopt'; readonly reservationId: string; readonly uid: string; readonly name: string; readonly resource: string }
  /** The listing showed the object at other usage than the ledger held, with nothing of it waiting: charged as listed from now on. */
  | { readonly kind: 'remeasure'; readonly reservationId: string; readonly replaces: string; readonly uid: string };

/** A quota whose usage is over hard after the corrections (Kubernetes shows it as used > hard). */
export interface OverHard {
  readonly quota: string;
  readonly resource: string;
  readonly used: string;
  readonly hard: string;
}

/** Live reservations of objects (with a uid) of a resource the listing does not cover, after the corrections. */
export interface Uncovered {
  /** Kubernetes' spelling: `widgets.example.com`. */
  readonly resource: string;
  readonly count: number;
}

export interface ReconcileDecision {
  readonly events: readonly LedgerEvent[];
  readonly actions: readonly ReconcileAction[];
  readonly overHard: readonly OverHard[];
  /** Reservations of covered resources still waiting for their object (younger than grace). */
  readonly pending: number;
  /**
   * Of those, the webhook's whose object the listing does not show: a create that failed after
   * admission, or a forged review (nothing follows it). Released as stale after the grace period.
   */
  readonly unconfirmed: number;
  /**
   * What no listing can settle: reservations of objects of kinds the inventory does not list
   * (reported: a metric, /readyz, `quotactl describe`). Committed ones stay until released by
   * hand; reserved ones are released `uncovered` after the grace period when a source lists anything.
   */
  readonly uncovered: readonly Uncovered[];
  /** Listed objects that could not be read: left out of this pass (their reservations as they were), each reported. */
  readonly unreadable: readonly Unreadable[];
}

/** A listed object its kind's evaluator cannot read, even as the API server stored it. */
export interface Unreadable {
  /** Kubernetes' spelling: `pods`, `widgets.example.com`. */
  readonly resource: string;
  readonly name: string;
  readonly uid: string;
  readonly reason: string;
}

const key = (gr: GroupResource): string => `${gr.resource}.${gr.group}`;
const spelling = (gr: GroupResource): string => (gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`);

export function decideReconcile(state: NamespaceState, input: ReconcileInput): ReconcileDecision {
  const covered = new Set(input.covers.map(key));
  const listed = new Map<string, Listed>();
  for (const object of input.listed ?? measureListing(input.objects, input.now)) {
    if (covered.has(key(object.existing.groupResource))) listed.set(object.existing.uid, object);
  }
  const existing = new Set(input.objects.filter((object) => covered.has(key(object.groupResource))).map((object) => object.uid));
  const pass = new Corrections(state, input);
  // The live reservations of each listed object, oldest first: settled together (settle-listed.ts),
  // when the loop meets the first of them.
  const held = new Map<string, Reservation[]>();
  for (const reservation of state.reservations.values()) {
    const uid = reservation.object.uid;
    if (uid !== undefined && existing.has(uid)) held.set(uid, [...(held.get(uid) ?? []), reservation]);
  }
  for (const reservation of state.reservations.values()) {
    if (pass.retired.has(reservation.id)) continue;
    if (reservation.status === 'reserved' && reservation.expiresAt !== undefined && reservation.expiresAt <= input.now) {
      pass.release(reservation, 'expired');
      continue;
    }
    const uid = reservation.object.uid;
    // Without a uid (a REST reservation of a plain list) nothing can match it: its client
    // commits and releases it, and its TTL bounds it.
    if (uid === undefined) continue;
    if (!covered.has(key(reservation.object))) pass.uncovered(reservation);
    else if (!existing.has(uid)) pass.absent(reservation);
    else {
      const object = listed.get(uid);
      const live = held.get(uid);
      held.delete(uid);
      // One that cannot be read is left as it is (reported below); being listed, it is not released either.
      if (object?.readable && live)
        pass.settle(
          live.filter((held) => isSameResource(held, object.existing.groupResource)),
          object,
        );
    }
  }
  adopt(state, listed.values(), pass, input);
  const unreadable = [...listed.values()].flatMap((object) => (object.readable ? [] : [unreadableOf(object.existing, object.reason)]));
  const { events, actions } = pass;
  return {
    events,
    actions,
    overHard: events.length > 0 ? overHardOf(state, events, input.now) : [],
    pending: pass.pending,
    unconfirmed: pass.unconfirmed,
    uncovered: uncoveredOf(state, covered, pass.retired),
    unreadable,
  };
}

/** The events and actions of one pass, and the reservations it has released so far. */
class Corrections {
  readonly events: LedgerEvent[] = [];
  readonly actions: ReconcileAction[] = [];
  readonly retired = new Set<string>();
  /** Uids this pass gave a new reservation (re-measured): not adopted again. */
  readonly claimed = new Set<string>();
  pending = 0;
  unconfirmed = 0;
  /** How many of the input's ids new reservations have taken. */
  private idsUsed = 0;

  constructor(
    private readonly state: NamespaceState,
    private readonly input: ReconcileInput,
  ) {}

  /** The next of the input's ids, for a new reservation. */
  nextId(): string {
    const id = this.input.ids[this.idsUsed++];
    assert(id !== undefined, `a reconcile was given ${this.input.ids.length} ids for new reservations, and needs more`);
    return id;
  }

  /** With an object's settled state go its pending changes (stored.ts), each released once. */
  release(reservation: Reservation, reason: ReleaseReason): void {
    for (const event of releaseEvents(this.state, reservation, reason, this.retired)) {
      if (event.type !== 'Released') continue;
      this.retired.add(event.data.reservationId);
      this.events.push(event);
      this.actions.push({
        kind: 'release',
        reservationId: event.data.reservationId,
        reason,
        ...(reservation.object.uid ? { uid: reservation.object.uid } : {}),
      });
    }
  }

  /**
   * A reservation of a kind the listing does not cover: its object can never be seen here. Like an
   * object that never appeared, a reserved one goes after the grace period, unless there is no
   * source at all (INVENTORY_SOURCE=none: nothing is listed, so nothing is judged; it is only reported).
   */
  uncovered(reservation: Reservation): void {
    const { input } = this;
    const judged = input.covers.length > 0 && reservation.status === 'reserved' && input.listedAt - reservation.reservedAt >= input.graceMs;
    if (judged) this.release(reservation, 'uncovered');
  }

  /** A reservation whose object the listing does not show. */
  absent(reservation: Reservation): void {
    const { input } = this;
    // Seen deleted: whenever it was reserved or committed, its object is gone for good.
    if (reservation.object.uid !== undefined && input.deleted?.has(reservation.object.uid)) this.release(reservation, 'deleted');
    else if (reservation.status === 'committed') {
      if ((reservation.committedAt ?? reservation.reservedAt) < input.listedAt) this.release(reservation, 'deleted');
    } else if (input.listedAt - reservation.reservedAt >= input.graceMs) this.release(reservation, 'stale');
    else {
      this.pending++;
      if (originOf(reservation) === 'webhook') this.unconfirmed++;
    }
  }

  /** A listed object's live reservations, as settle-listed.ts plans them. */
  settle(held: readonly Reservation[], listed: MeasuredObject): void {
    const live = held.filter((reservation) => !this.retired.has(reservation.id));
    if (live.length === 0) return;
    const plan = planListed(live, listed, this.input);
    for (const { reservation, reason } of plan.release) this.release(reservation, reason);
    this.pending += plan.waiting;
    if (plan.remeasure) {
      this.remeasure(plan.remeasure, listed);
      return;
    }
    let holder = live.find((reservation) => reservation.status === 'committed' && !this.retired.has(reservation.id));
    for (const reservation of plan.commit) {
      if (this.commit(reservation, listed.existing.uid)) holder = reservation;
      else this.pending++;
    }
    // Committed, it counts the object's whole usage: a pod that ran to completion before this
    // listing saw it is cut down at once.
    if (holder)
      this.terminate(holder, holder.status === 'committed' ? holder.contribution : (holder.objectUsage ?? holder.contribution), listed);
  }

  private commit(reservation: Reservation, uid: string): boolean {
    const outcome = decideCommit(this.state, reservation.id, this.input.now, this.retired);
    if (outcome.kind !== 'Commit') return false;
    this.events.push(...outcome.events);
    this.actions.push({ kind: 'commit', reservationId: reservation.id, uid });
    for (const event of outcome.events) {
      if (event.type !== 'Released') continue;
      this.retired.add(event.data.reservationId);
      this.actions.push({ kind: 'release', reservationId: event.data.reservationId, reason: 'superseded', uid });
    }
    return true;
  }

  /** The object is charged as listed from now on: a new reservation of its measure, superseding the ledger's record. */
  private remeasure(settled: Reservation, listed: MeasuredObject): void {
    const reservationId = this.nextId();
    const { uid } = listed.existing;
    this.events.push(adoptedEvent(reservationId, listed, settled.id), {
      type: 'Released',
      data: { reservationId: settled.id, reason: 'superseded' },
    });
    this.retired.add(settled.id);
    this.claimed.add(uid);
    this.actions.push({ kind: 'remeasure', reservationId, replaces: settled.id, uid });
  }

  /**
   * A committed object that is terminal but still listed keeps only its object count (Kubernetes'
   * QuotaV1Pod): the rest of its charge is released by a Terminated event, once.
   */
  private terminate(reservation: Reservation, counted: ResourceList, listed: MeasuredObject): void {
    if (reservation.terminatedAt !== undefined || listed.endOfLife === undefined) return;
    const kept = keptPart(counted, listed.usage);
    if (Resources.equals(kept, counted)) return;
    this.events.push({
      type: 'Terminated',
      data: { reservationId: reservation.id, reason: listed.endOfLife, usage: Resources.canonicalResourceList(kept) },
    });
    this.actions.push({ kind: 'terminate', reservationId: reservation.id, reason: listed.endOfLife, uid: listed.existing.uid });
  }
}

/**
 * Every listed object no live reservation claims is adopted: charged as it is now, unless it was
 * released since the listing began (its delete is in flight), cannot be read or its kind is not charged.
 */
function adopt(state: NamespaceState, listed: Iterable<Listed>, pass: Corrections, input: ReconcileInput): void {
  const claimed = new Set<string>(pass.claimed);
  for (const reservation of state.reservations.values()) {
    if (!pass.retired.has(reservation.id) && reservation.object.uid !== undefined) claimed.add(reservation.object.uid);
  }
  for (const object of listed) {
    const { uid } = object.existing;
    if (!object.readable || claimed.has(uid) || input.releasedSinceListing?.has(uid)) continue;
    const reservationId = pass.nextId();
    pass.events.push(adoptedEvent(reservationId, object));
    pass.actions.push({ kind: 'adopt', reservationId, uid, name: object.existing.name, resource: key(object.existing.groupResource) });
  }
}

function adoptedEvent(reservationId: string, listed: MeasuredObject, replaces?: string): LedgerEvent {
  const { groupResource, object, name, uid } = listed.existing;
  return {
    type: 'Adopted',
    data: {
      reservationId,
      object: { group: groupResource.group, resource: groupResource.resource, ...(object.kind ? { kind: object.kind } : {}), name, uid },
      usage: Resources.canonicalResourceList(listed.usage),
      scopeFacts: listed.state.scopeFacts,
      ...(replaces ? { replaces } : {}),
    },
  };
}

function unreadableOf(object: ExistingObject, reason: string): Unreadable {
  return { resource: spelling(object.groupResource), name: object.name, uid: object.uid, reason };
}

function uncoveredOf(state: NamespaceState, covered: ReadonlySet<string>, retired: ReadonlySet<string>): Uncovered[] {
  const counts = new Map<string, number>();
  for (const reservation of state.reservations.values()) {
    if (reservation.object.uid === undefined || retired.has(reservation.id) || covered.has(key(reservation.object))) continue;
    const resource = spelling(reservation.object);
    counts.set(resource, (counts.get(resource) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([resource, count]) => ({ resource, count }));
}

/** What a terminal object still counts of its charge: the keys its usage keeps, never more than charged. */
function keptPart(counted: ResourceList, usage: ResourceList): ResourceList {
  const kept: [string, Quantity][] = [];
  for (const name of Resources.resourceNames(counted)) {
    const now = Resources.get(usage, name);
    const before = Resources.get(counted, name) as Quantity;
    if (now !== undefined) kept.push([name, now.cmp(before) < 0 ? now : before]);
  }
  return Resources.fromEntries(kept);
}

function overHardOf(state: NamespaceState, events: readonly LedgerEvent[], now: number): OverHard[] {
  let version = state.version;
  const after = fold(
    events.map((event) => ({ ...event, version: ++version, at: now })),
    state,
  );
  const over: OverHard[] = [];
  for (const quota of after.quotas.values()) {
    const used = after.used.get(quota.name) ?? Resources.EMPTY;
    for (const name of quota.hardNames) {
      const u = Resources.get(used, name);
      const h = Resources.get(quota.hard, name);
      if (u && h && u.cmp(h) > 0) over.push({ quota: quota.name, resource: name, used: u.toString(), hard: h.toString() });
    }
  }
  return over;
}
