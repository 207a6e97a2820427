import type { GroupResource, KubeObject } from '../kube/types.js';
import type { LedgerEvent, ReleaseReason, TerminationReason } from '../events/events.js';
import { fold, type NamespaceState, type Reservation } from '../events/fold.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { Quantity } from '../quantity/quantity.js';
import { evaluatorFor, isIgnoredResource } from '../usage/registry.js';
import { decideCommit } from './lifecycle.js';
import { releaseEvents } from './stored.js';

/**
 * The reconciler's decision for one namespace: the ledger's live reservations against the
 * objects that really exist, answered with corrective events only (the recount race of
 * docs/architecture.md: usage is never overwritten by a recount). Pure: the listing, the times and the new ids come in.
 */

/** An object the inventory says exists. */
export interface ExistingObject {
  readonly groupResource: GroupResource;
  readonly uid: string;
  readonly name: string;
  readonly object: KubeObject;
}

export interface ReconcileInput {
  /** The resources the listing is complete for; reservations of other resources are left alone. */
  readonly covers: readonly GroupResource[];
  readonly objects: readonly ExistingObject[];
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
  /** Ids for adopted objects, one per call. */
  readonly newId: () => string;
  /**
   * Uids whose reservation was released at or after `listedAt`. The listing may show such an
   * object although it has been deleted since (another reconcile saw it gone and released it),
   * so it is not adopted on this listing; a later listing adopts it if it really exists.
   */
  readonly releasedSinceListing?: ReadonlySet<string>;
}

export type ReconcileAction =
  | { readonly kind: 'commit'; readonly reservationId: string; readonly uid: string }
  | { readonly kind: 'release'; readonly reservationId: string; readonly reason: ReleaseReason; readonly uid?: string }
  | { readonly kind: 'terminate'; readonly reservationId: string; readonly reason: TerminationReason; readonly uid: string }
  | { readonly kind: 'adopt'; readonly reservationId: string; readonly uid: string; readonly name: string; readonly resource: string };

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
   * What no listing can settle: reservations of objects of kinds the inventory does not list
   * (reported: a metric, /readyz, `quotactl describe`). Committed ones stay until released by
   * hand; reserved ones are released `uncovered` after the grace period when a source lists anything.
   */
  readonly uncovered: readonly Uncovered[];
}

const key = (gr: GroupResource): string => `${gr.resource}.${gr.group}`;
const spelling = (gr: GroupResource): string => (gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`);

export function decideReconcile(state: NamespaceState, input: ReconcileInput): ReconcileDecision {
  const covered = new Set(input.covers.map(key));
  const existing = new Map<string, ExistingObject>();
  for (const object of input.objects) if (covered.has(key(object.groupResource))) existing.set(object.uid, object);

  const events: LedgerEvent[] = [];
  const actions: ReconcileAction[] = [];
  const retired = new Set<string>();
  let pending = 0;
  // With an object's settled state go its pending changes (stored.ts), each released once.
  const release = (reservation: Reservation, reason: ReleaseReason): void => {
    for (const event of releaseEvents(state, reservation, reason, retired)) {
      if (event.type !== 'Released') continue;
      retired.add(event.data.reservationId);
      events.push(event);
      actions.push({ kind: 'release', reservationId: event.data.reservationId, reason, ...(reservation.object.uid ? { uid: reservation.object.uid } : {}) });
    }
  };

  // A committed object that is terminal but still listed keeps only its object count (Kubernetes'
  // QuotaV1Pod): the rest of its charge is released by a Terminated event, once.
  const terminate = (reservation: Reservation, counted: ResourceList, object: ExistingObject): void => {
    if (reservation.terminatedAt !== undefined) return;
    const evaluator = evaluatorFor(object.groupResource);
    const reason = evaluator.endOfLife?.(object.object, { now: input.now });
    if (reason === undefined) return;
    const kept = keptPart(counted, evaluator.usage(object.object, { now: input.now }));
    if (Resources.equals(kept, counted)) return;
    events.push({ type: 'Terminated', data: { reservationId: reservation.id, reason, usage: Resources.canonicalResourceList(kept) } });
    actions.push({ kind: 'terminate', reservationId: reservation.id, reason, uid: object.uid });
  };

  for (const reservation of state.reservations.values()) {
    if (retired.has(reservation.id)) continue;
    if (reservation.status === 'reserved' && reservation.expiresAt !== undefined && reservation.expiresAt <= input.now) {
      release(reservation, 'expired');
      continue;
    }
    const uid = reservation.object.uid;
    // Without a uid (a REST reservation of a plain list) nothing can match it: its client
    // commits and releases it, and its TTL bounds it.
    if (uid === undefined) continue;
    if (!covered.has(key(reservation.object))) {
      // Its object can never be seen here. Like an object that never appeared, a reserved one
      // goes after the grace period, unless there is no source at all (INVENTORY_SOURCE=none:
      // nothing is listed, so nothing is judged; it is only reported).
      const judged = input.covers.length > 0 && reservation.status === 'reserved' && input.listedAt - reservation.reservedAt >= input.graceMs;
      if (judged) release(reservation, 'uncovered');
      continue;
    }
    const object = existing.get(uid);
    if (reservation.status === 'committed') {
      if (object) terminate(reservation, reservation.contribution, object);
      else if ((reservation.committedAt ?? reservation.reservedAt) < input.listedAt) release(reservation, 'deleted');
      continue;
    }
    if (object && updateHappened(reservation, object, input.now)) {
      const outcome = decideCommit(state, reservation.id, input.now);
      if (outcome.kind === 'Commit') {
        // What this pass released already (an older change gone stale) is not released again.
        const fresh = outcome.events.filter((event) => event.type !== 'Released' || !retired.has(event.data.reservationId));
        for (const event of fresh) if (event.type === 'Released') retired.add(event.data.reservationId);
        events.push(...fresh);
        actions.push({ kind: 'commit', reservationId: reservation.id, uid });
        for (const event of fresh) {
          if (event.type === 'Released') actions.push({ kind: 'release', reservationId: event.data.reservationId, reason: 'superseded', uid });
        }
        // Committed, it counts the object's whole usage: a pod that ran to completion before this
        // listing saw it is cut down at once.
        terminate(reservation, reservation.objectUsage ?? reservation.contribution, object);
      }
      continue;
    }
    if (input.listedAt - reservation.reservedAt >= input.graceMs) release(reservation, 'stale');
    else pending++;
  }

  adopt(state, existing.values(), retired, input, events, actions);
  return { events, actions, overHard: events.length > 0 ? overHardOf(state, events, input.now) : [], pending, uncovered: uncoveredOf(state, covered, retired) };
}

/**
 * Every listed object no live reservation claims is adopted: charged as it is now, unless it was
 * released since the listing began (its delete is in flight) or its kind is not charged.
 */
function adopt(state: NamespaceState, listed: Iterable<ExistingObject>, retired: ReadonlySet<string>, input: ReconcileInput, events: LedgerEvent[], actions: ReconcileAction[]): void {
  const claimed = new Set<string>();
  for (const reservation of state.reservations.values()) {
    if (!retired.has(reservation.id) && reservation.object.uid !== undefined) claimed.add(reservation.object.uid);
  }
  for (const object of listed) {
    if (claimed.has(object.uid) || input.releasedSinceListing?.has(object.uid) || isIgnoredResource(object.groupResource)) continue;
    const evaluator = evaluatorFor(object.groupResource);
    const reservationId = input.newId();
    events.push({
      type: 'Adopted',
      data: {
        reservationId,
        object: {
          group: object.groupResource.group,
          resource: object.groupResource.resource,
          ...(object.object.kind ? { kind: object.object.kind } : {}),
          name: object.name,
          uid: object.uid,
        },
        usage: Resources.canonicalResourceList(evaluator.usage(object.object, { now: input.now })),
        scopeFacts: evaluator.scopeFacts(object.object),
      },
    });
    actions.push({ kind: 'adopt', reservationId, uid: object.uid, name: object.name, resource: key(object.groupResource) });
  }
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

/**
 * Whether the object as listed shows the reserved change. A CREATE: it exists. An UPDATE:
 * its whole usage, measured as admission measured it (as though alive), is what the update
 * would make it. An update that failed leaves the old usage, and its reservation goes stale;
 * so does one whose object shows only some of it (issue 33: comparing only the keys of a
 * terminal state's usage committed a resize that claimed the pod had finished). That the object
 * reached its end is then this listing's to say (`terminate`).
 */
function updateHappened(reservation: Reservation, existing: ExistingObject, now: number): boolean {
  if (reservation.operation !== 'UPDATE' || !reservation.objectUsage) return true;
  const usage = evaluatorFor(existing.groupResource).usage(existing.object, { now, asLive: true });
  return Resources.equals(usage, reservation.objectUsage);
}

function overHardOf(state: NamespaceState, events: readonly LedgerEvent[], now: number): OverHard[] {
  let version = state.version;
  const after = fold(events.map((event) => ({ ...event, version: ++version, at: now })), state);
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
