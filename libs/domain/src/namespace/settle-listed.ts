import { DomainError } from '../errors.js';
import type { TerminationReason } from '../events/events.js';
import type { Reservation } from '../events/fold.js';
import type { GroupResource, KubeObject } from '../kube/types.js';
import type { ResourceList } from '../resources/resource-list.js';
import { evaluatorFor, isIgnoredResource } from '../usage/registry.js';
import { isSettled, originOf, sameState, settledOf, settledStateOf, stateOf, type SettledState } from './stored.js';

/**
 * The reconciler's decision for one listed object the ledger holds (reconcile.ts): which of its
 * pending changes the listing shows, which can no longer be written, which may still be, and
 * whether the ledger's record of it must be measured again. It keeps the invariant of stored.ts —
 * never less than a state the object may be in — and, once nothing of the object may still
 * change without a new review, charges exactly what the listing shows.
 *
 * What may still be written is told by resourceVersions, which Kubernetes lets clients compare
 * for objects of one resource (KEP-5504, stable since v1.35). The API server writes a change only if
 * the object is still at the version its review read (`oldResourceVersion`), so a listing that
 * shows a later version shows the change's fate: written (maybe changed again since), or never
 * to be. A change read at the listed version or later may be written after the listing was
 * taken: it is left waiting (until the grace period passes), and so is everything else of the
 * object, since committing an older state or measuring the object again could charge less than
 * that change asks. Without comparable versions (a change recorded before they were, a source
 * whose objects carry none), a change the listing matches counts as shown, and one it does not
 * match may still be written until the grace period passes.
 */

/** An object the inventory says exists. */
export interface ExistingObject {
  readonly groupResource: GroupResource;
  readonly uid: string;
  readonly name: string;
  readonly object: KubeObject;
}

/** A listed object as its kind's evaluator measures it, or why it cannot be read. */
export type Listed = MeasuredObject | UnreadableObject;

export interface MeasuredObject {
  readonly readable: true;
  readonly existing: ExistingObject;
  /** Its usage measured as admission measures (as though alive), and its scope facts. */
  readonly state: SettledState;
  /** What it counts now: a terminal pod only its object count. */
  readonly usage: ResourceList;
  /** Why it is at the end of its life although it still exists, if it is. */
  readonly endOfLife?: TerminationReason;
  /** Its `metadata.resourceVersion`, when that is a decimal number (etcd's revision). */
  readonly resourceVersion?: bigint;
}

export interface UnreadableObject {
  readonly readable: false;
  readonly existing: ExistingObject;
  readonly reason: string;
}

/**
 * Measures a listed object once for every decision of the pass. It is decoded as the API server
 * stored it (UsageOptions.stored: no more strictly than Kubernetes decodes); one that still
 * cannot be read is reported, and the rest of the listing is reconciled without it.
 */
export function measureListed(existing: ExistingObject, now: number): Listed {
  const evaluator = evaluatorFor(existing.groupResource);
  const { object } = existing;
  const options = { now, stored: true, specFloor: true } as const;
  try {
    const endOfLife = evaluator.endOfLife?.(object, options);
    const resourceVersion = versionOf(object.metadata?.resourceVersion);
    const usage = evaluator.usage(object, { ...options, asLive: true });
    return {
      readable: true,
      existing,
      state: { usage, scopeFacts: evaluator.scopeFacts(object, options) },
      // Alive, it counts what it would as though alive.
      usage: endOfLife === undefined ? usage : evaluator.usage(object, options),
      ...(endOfLife === undefined ? {} : { endOfLife }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { readable: false, existing, reason: error.message };
  }
}

/**
 * Every listed object of a kind quota charges, measured (`measureListed`) as of `at`: done by the
 * ledger before the reconcile's transaction (its end of life judged at the listing's start).
 */
export function measureListing(objects: readonly ExistingObject[], at: number): Listed[] {
  return objects.filter((object) => !isIgnoredResource(object.groupResource)).map((object) => measureListed(object, at));
}

/** What to append for one listed object; reconcile.ts turns it into events. */
export interface ListedPlan {
  /**
   * Pending changes to release: `superseded`, those the listing shows were overtaken by a later
   * one it shows; `stale`, those it shows were never written, or that waited the grace period
   * without showing.
   */
  readonly release: readonly { readonly reservation: Reservation; readonly reason: 'stale' | 'superseded' }[];
  /** To commit, in order: a reserved CREATE (the object exists), then the change the listing shows (its older states retired with it). */
  readonly commit: readonly Reservation[];
  /** The settled record to replace by the listed object's measure (nothing of it waits, none of it matches). */
  readonly remeasure?: Reservation;
  /** Pending changes left waiting: they may still be written. */
  readonly waiting: number;
}

/** `live`: the object's live reservations, oldest first. */
export function planListed(
  live: readonly Reservation[],
  listed: MeasuredObject,
  at: { readonly listedAt: number; readonly graceMs: number },
): ListedPlan {
  const settled = settledOf(live);
  const changes = live.filter((reservation) => !isSettled(reservation));
  // The newest change the listing shows is the one that holds.
  const shown = changes.findLast((change) => sameState(stateOf(change), listed.state) && (listedPast(change, listed) ?? true));
  const release: { reservation: Reservation; reason: 'stale' | 'superseded' }[] = [];
  let open = 0;
  for (const change of changes) {
    if (change === shown) continue;
    // Without versions to compare, a change the listing matches counts as shown.
    const decided = listedPast(change, listed) ?? sameState(stateOf(change), listed.state);
    // Overtaken by the change that holds; else never written.
    if (decided && shown !== undefined && change.version < shown.version) release.push({ reservation: change, reason: 'superseded' });
    else if (decided || at.listedAt - change.reservedAt >= at.graceMs) release.push({ reservation: change, reason: 'stale' });
    else open++;
  }
  const commit = settled?.status === 'reserved' ? [settled] : [];
  if (open > 0) return { release, commit, waiting: changes.length - release.length };
  // The commit supersedes every older state itself.
  if (shown) return { release: release.filter((r) => r.reason === 'stale'), commit: [...commit, shown], waiting: 0 };
  if (settled && remeasurable(settled, listed, at.listedAt)) return { release, commit: [], remeasure: settled, waiting: 0 };
  return { release, commit, waiting: 0 };
}

/**
 * Whether the listing shows an object at a later version than the one the change was read at
 * (so shows its fate); undefined when either version is unknown.
 */
function listedPast(change: Reservation, listed: MeasuredObject): boolean | undefined {
  const base = versionOf(change.oldResourceVersion);
  if (base === undefined || listed.resourceVersion === undefined) return undefined;
  return base < listed.resourceVersion;
}

/**
 * Whether the ledger's settled record of the object is to be measured again from the listing:
 * it differs from what the listing shows (a change the webhook never reviewed, a commit from an
 * older listing), and the listing began after the ledger recorded it (an older listing may show
 * the object before it). An object at its end is the Terminated event's to cut down; what a REST
 * call reserved is its client's to say (it may charge a resource list no evaluator measures).
 */
function remeasurable(settled: Reservation, listed: MeasuredObject, listedAt: number): boolean {
  if (settled.terminatedAt !== undefined || listed.endOfLife !== undefined || originOf(settled) === 'rest') return false;
  if (sameState(settledStateOf(settled), listed.state)) return false;
  return (settled.committedAt ?? settled.reservedAt) < listedAt;
}

/** Kubernetes' comparable form (KEP-5504, stable since v1.35): a positive integer without leading zeros. */
const DECIMAL = /^[1-9][0-9]{0,39}$/;

/** A resourceVersion as a number to compare (objects of one resource only), or undefined when it is not in the comparable form. */
function versionOf(text: string | undefined): bigint | undefined {
  return text !== undefined && DECIMAL.test(text) ? BigInt(text) : undefined;
}
