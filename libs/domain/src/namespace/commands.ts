import type { ReleaseReason, LedgerEvent, LimitRangeDefinition, QuotaDefinition, ReservationSource } from '../events/events.js';
import type { GroupResource, RawQuantities, ResourceQuotaSpec } from '../kube/types.js';
import type { NamespaceDefinition, SharedQuotaRef } from '../shared/shared-quota.js';
import type { AdmissionRequest } from './admission-decision.js';
import type { ExistingObject, OverHard, ReconcileAction, Uncovered, Unreadable } from './reconcile.js';
import type { Listed } from './settle-listed.js';
import type { LimitedResource } from '../quota/check.js';
import type { AdmissionPlugin } from './plugins.js';
import type { AdmissionResult, Refusal } from './answers.js';

/**
 * Everything that can be asked of one namespace's stream, in the imperative. `decide` (decide.ts)
 * turns a command and the namespace's facts into the events to append and the answer to give;
 * ids and times come in (the domain draws none).
 */
export type NamespaceCommand =
  | AdmitObject
  | AdmitResources
  | CommitReservation
  | ReleaseReservation
  | Reconcile
  | PutQuota
  | RemoveQuota
  | PutLimitRange
  | RemoveLimitRange
  | PutNamespace
  | RemoveNamespace
  | SyncSharedQuotas
  | CancelQueued
  | SweepQueue;

export type NamespaceCommandType = NamespaceCommand['type'];

/** What an admission, of an object or of a resource list, says about itself. */
interface AdmissionCommon {
  /**
   * Idempotency key, unique per namespace (`review:<uid>`, `rest:<requestId>`): a repeated key
   * gets the first answer and decides nothing. Dry runs never use it.
   */
  readonly requestKey?: string;
  /** With a request key: a digest of the whole request; the same key with another digest is a conflict. */
  readonly requestDigest?: string;
  readonly dryRun: boolean;
  /** The id a new reservation gets. */
  readonly reservationId: string;
  /** The reservation expires unless committed within this many ms (REST). */
  readonly ttlMs?: number;
  /** Refuse with NamespaceNotFound where no quota or limit range was ever defined (REST); else admit uncharged. */
  readonly requireKnownNamespace?: boolean;
  /** Allowed: warn of every charged resource at or above this percent of its hard limit (nearLimitWarnings); absent, no warnings. */
  readonly warnAtPercent?: number;
  /** The admission plugins that run (ADMISSION_PLUGINS_ENABLE / _DISABLE), in any order; absent: the defaults. */
  readonly plugins?: readonly AdmissionPlugin[];
  /** Who asks (recorded on the reservation): a REST call may not change what the cluster admitted. */
  readonly source?: ReservationSource;
}

/** Admit a Kubernetes object: LimitRanger defaults and limits, then ResourceQuota. */
export interface AdmitObject extends AdmissionCommon {
  readonly type: 'AdmitObject';
  readonly request: AdmissionRequest;
  readonly limitedResources?: readonly LimitedResource[];
}

/** Admit a plain resource list (REST, any resource name): charged as given to the unscoped quotas. */
export interface AdmitResources extends AdmissionCommon {
  readonly type: 'AdmitResources';
  readonly groupResource: GroupResource;
  readonly name?: string;
  readonly kind?: string;
  readonly resources: RawQuantities;
  /** Wait in the namespace's queue for at most `ms` when it does not fit, instead of a 403; `principal`: who asks (recorded on the waiter). */
  readonly wait?: { readonly ms: number; readonly priority: number; readonly principal?: string };
}

/** Give up a queued reservation (REST DELETE of a queued one). */
export interface CancelQueued {
  readonly type: 'CancelQueued';
  readonly reservationId: string;
}

/** Expire the waiters whose deadline passed and admit those that fit now (the periodic sweep, a shared quota's wake-up). */
export interface SweepQueue {
  readonly type: 'SweepQueue';
}

/** The reserved object exists: count its reservation as settled. */
export interface CommitReservation {
  readonly type: 'CommitReservation';
  readonly reservationId: string;
  /** A REST call: it may settle only reservations REST made (`originOf`). Absent: the ledger's own callers. */
  readonly by?: 'rest';
}

/** The reserved object is gone or will never be: stop counting it. */
export interface ReleaseReservation {
  readonly type: 'ReleaseReservation';
  readonly reservationId: string;
  readonly reason: ReleaseReason;
  /** A REST call: it may release only reservations REST made (`originOf`). */
  readonly by?: 'rest';
}

/** Compare the live reservations with the objects that exist, and correct with events only. */
export interface Reconcile {
  readonly type: 'Reconcile';
  /** The resources the listing is complete for. */
  readonly covers: readonly GroupResource[];
  readonly objects: readonly ExistingObject[];
  /**
   * The objects measured already (`measureListing`), before the transaction: measuring them is
   * most of what a reconcile costs, and a retried transaction would measure them again. Absent:
   * measured at the decision.
   */
  readonly listed?: readonly Listed[];
  /** When the listing started, epoch ms (the ledger's clock). */
  readonly listedAt: number;
  readonly graceMs: number;
  /**
   * The ids new reservations get (an object adopted, or measured again), as data: used in order,
   * at most one per listed object, so one per object of `objects` is always enough. Drawn by the
   * caller (the domain draws none); a retried transaction decides on the same ids.
   */
  readonly ids: readonly string[];
  /**
   * Uids the listing's source saw deleted lately (a watch's DELETED event, a relist): a uid is
   * never reused, so a reservation of one still waiting for its object is released at once
   * (`deleted`), not after the grace period. An object re-created under the same name has a new uid.
   */
  readonly deleted?: readonly string[];
  /**
   * false: the listing may not be the namespace's first count, whatever its time, because writes
   * there may have bypassed the webhooks after it started (the namespace's managed label was not
   * yet in place: the webhooks are sent only labelled namespaces' writes). Default true.
   */
  readonly countable?: boolean;
}

/** Most definitions of one kind a namespace may hold, and the setting that says so (named in the refusal). */
export interface DefinitionLimit {
  readonly max: number;
  readonly setting: string;
}

/**
 * A definition that may make the namespace managed: with `awaitFirstCount` (an inventory can
 * count what exists), a namespace that becomes managed by it awaits its first count (`CountAwaited`).
 */
interface MayManage {
  readonly awaitFirstCount?: boolean;
}

/** A write of the REST admin API: refused (409) when the definition came from a cluster object (cluster-managed.ts). */
interface FromRest {
  readonly unmanagedOnly?: boolean;
}

export interface PutQuota extends MayManage, FromRest {
  readonly type: 'PutQuota';
  readonly definition: QuotaDefinition;
  /** `metadata.resourceVersion` as the caller last saw it: stale is a conflict. */
  readonly expectedVersion?: number;
  /** The uid a new quota gets. */
  readonly uid: string;
  readonly limit: DefinitionLimit;
}

export interface RemoveQuota extends FromRest {
  readonly type: 'RemoveQuota';
  readonly name: string;
}

export interface PutLimitRange extends MayManage, FromRest {
  readonly type: 'PutLimitRange';
  readonly definition: LimitRangeDefinition;
  readonly expectedVersion?: number;
  readonly uid: string;
  readonly limit: DefinitionLimit;
}

export interface RemoveLimitRange extends FromRest {
  readonly type: 'RemoveLimitRange';
  readonly name: string;
}

// ------------------------------------------------------------------------ answers

/**
 * `uncharged`: an allowed resource list's names that no quota charges, in words
 * (unchargedResourceWarnings); sent as `Warning` headers beside `result.warnings`, but not part of
 * the result, so the decisions log and a repeated request's stored answer stay as they were.
 */
export type AdmissionAnswer =
  /** Decided now: the answer goes to the decisions log (with the reservation, when one was made). */
  | { readonly kind: 'Decided'; readonly result: AdmissionResult; readonly uncharged?: readonly string[] }
  /** The key was answered before, for this same request: that answer again, nothing decided. */
  | { readonly kind: 'Repeated'; readonly result: AdmissionResult; readonly uncharged?: readonly string[] }
  /** The key was answered before for another request: 409, nothing decided or logged. */
  | { readonly kind: 'KeyReused'; readonly result: AdmissionResult }
  /**
   * No quota or limit range was ever defined here: admitted uncharged, nothing logged; or denied
   * without a record (AlwaysDeny, NamespaceLifecycle, a limited resource no quota covers).
   */
  | { readonly kind: 'Unmanaged'; readonly result: AdmissionResult }
  | Refusal;

export type CommitAnswer = { readonly kind: 'Committed' } | { readonly kind: 'AlreadyCommitted' } | Refusal;

export type CancelAnswer = { readonly kind: 'Cancelled' } | Refusal;

export interface SweepAnswer {
  readonly kind: 'Swept';
}

export type ReleaseAnswer = { readonly kind: 'Released' } | { readonly kind: 'AlreadyReleased' } | Refusal;

export interface ReconcileAnswer {
  readonly kind: 'Reconciled';
  readonly actions: readonly ReconcileAction[];
  /** Quotas whose usage is over hard after the corrections. */
  readonly overHard: readonly OverHard[];
  /** Reservations of covered resources still waiting for their object (younger than grace). */
  readonly pending: number;
  /**
   * Of those, the webhook's whose object the listing does not show: a create that failed after
   * admission, or a forged review (nothing follows it). Released as stale after the grace period.
   */
  readonly unconfirmed: number;
  /** Reservations of objects of kinds the listing does not cover, by resource (reconcile.ts). */
  readonly uncovered: readonly Uncovered[];
  /** Listed objects that could not be read, left out of the pass (reconcile.ts). */
  readonly unreadable: readonly Unreadable[];
  /** This listing was the namespace's first count (`Counted`): its quotas enforce from now on. */
  readonly counted?: true;
}

export type PutAnswer = { readonly kind: 'Defined' } | { readonly kind: 'Changed' } | { readonly kind: 'Unchanged' } | Refusal;

export type RemoveAnswer = { readonly kind: 'Removed' } | Refusal;

/** The answer each kind of command gets. */
export interface AnswerOf {
  readonly AdmitObject: AdmissionAnswer;
  readonly AdmitResources: AdmissionAnswer;
  readonly CommitReservation: CommitAnswer;
  readonly ReleaseReservation: ReleaseAnswer;
  readonly Reconcile: ReconcileAnswer;
  readonly PutQuota: PutAnswer;
  readonly RemoveQuota: RemoveAnswer;
  readonly PutLimitRange: PutAnswer;
  readonly RemoveLimitRange: RemoveAnswer;
  readonly PutNamespace: PutAnswer;
  readonly RemoveNamespace: RemoveAnswer;
  readonly SyncSharedQuotas: SyncAnswer;
  readonly CancelQueued: CancelAnswer;
  readonly SweepQueue: SweepAnswer;
}

/** What `decide` returns: the events to append (possibly none) and the answer. */
export interface Decided<A> {
  readonly events: readonly LedgerEvent[];
  readonly answer: A;
}

/** The namespace's own object and the shared quotas covering it (namespace-object.ts decides them). */
export interface PutNamespace {
  readonly type: 'PutNamespace';
  readonly definition: NamespaceDefinition;
  readonly expectedVersion?: number;
  /** The uid a new Namespace object gets. */
  readonly uid: string;
}

export interface RemoveNamespace {
  readonly type: 'RemoveNamespace';
  /**
   * The reconciler's listing that no longer holds the Namespace: its list `resourceVersion`. A
   * record observed at a newer version than it (another replica's newer listing) is kept.
   */
  readonly listedVersion?: string;
}

/** A shared quota as a namespace it covers carries it. */
export interface AppliedSharedQuota {
  readonly key: string;
  readonly ref: SharedQuotaRef;
  readonly spec: ResourceQuotaSpec;
}

/** Make the shared quotas covering the namespace exactly these (by key), with these specs. */
export interface SyncSharedQuotas {
  readonly type: 'SyncSharedQuotas';
  readonly covering: readonly AppliedSharedQuota[];
  /** As a quota's PUT (commands.ts MayManage): a namespace a shared quota starts to manage awaits its first count. */
  readonly awaitFirstCount?: boolean;
}

export interface SyncAnswer {
  readonly kind: 'Synced';
  /** Keys newly covering the namespace, or whose spec changed. */
  readonly applied: readonly string[];
  readonly withdrawn: readonly string[];
}
