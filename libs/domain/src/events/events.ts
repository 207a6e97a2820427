import type { LimitRangeItem, ObjectMeta, RawQuantities, ResourceQuotaSpec } from '../kube/types.js';
import type { ScopeFacts } from '../scopes/facts.js';
import type { NamespaceDefinition, SharedQuotaDefinition, SharedQuotaRef } from '../shared/shared-quota.js';

/**
 * The ledger's events: everything that changes a namespace's quota state, in the past tense.
 * One stream per namespace. Payloads are plain JSON (quantities in canonical text) so that
 * an auditor can read them and every version of the code can fold them.
 */
export const EVENT_SCHEMA_VERSION = 1;

export type ReleaseReason =
  /** The object never appeared within the grace period (its create failed after admission). */
  | 'stale'
  /** The object was deleted. */
  | 'deleted'
  /** The client gave the reservation up (REST release). */
  | 'cancelled'
  /** A later reservation for the same object (an UPDATE) replaced it. */
  | 'superseded'
  /** A REST reservation's TTL ran out before it was committed. */
  | 'expired'
  /**
   * A webhook reservation of a kind the reconciler's inventory does not list: its object can
   * never be seen, so it is released after the grace period rather than counted forever.
   */
  | 'uncovered';

export const RELEASE_REASONS: readonly ReleaseReason[] = ['stale', 'deleted', 'cancelled', 'superseded', 'expired', 'uncovered'];

/**
 * Who made a reservation: the kube-apiserver's AdmissionReview (`webhook`) or a REST call
 * (`rest`). The cluster's reservations are committed, shrunk and released only from what the
 * cluster holds (the reconciler's listing) or by the API server's own reviews, never by a REST
 * call (a tenant could release what the API server had reserved).
 */
export type ReservationSource = 'webhook' | 'rest';

/** Which object a reservation is for. `uid` is the key the webhook and reconciler match on. */
export interface ObjectRef {
  /** API group; '' for the core group. */
  readonly group: string;
  /** Plural resource, e.g. `pods`. */
  readonly resource: string;
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
}

/** The ResourceQuota as stored: its spec with canonical quantities, and the metadata users set. */
export interface QuotaDefinition {
  readonly name: string;
  readonly spec: ResourceQuotaSpec;
  readonly metadata?: Pick<ObjectMeta, 'labels' | 'annotations' | 'uid' | 'creationTimestamp'>;
}

export interface LimitRangeDefinition {
  readonly name: string;
  readonly spec: { readonly limits: readonly LimitRangeItem[] };
  readonly metadata?: Pick<ObjectMeta, 'labels' | 'annotations' | 'uid' | 'creationTimestamp'>;
}

export interface QuotaDefined {
  readonly type: 'QuotaDefined';
  readonly data: QuotaDefinition;
}

export interface QuotaChanged {
  readonly type: 'QuotaChanged';
  readonly data: QuotaDefinition;
}

export interface QuotaRemoved {
  readonly type: 'QuotaRemoved';
  readonly data: { readonly name: string };
}

export interface LimitRangeDefined {
  readonly type: 'LimitRangeDefined';
  readonly data: LimitRangeDefinition;
}

export interface LimitRangeChanged {
  readonly type: 'LimitRangeChanged';
  readonly data: LimitRangeDefinition;
}

export interface LimitRangeRemoved {
  readonly type: 'LimitRangeRemoved';
  readonly data: { readonly name: string };
}

export interface Reserved {
  readonly type: 'Reserved';
  readonly data: {
    readonly reservationId: string;
    readonly object: ObjectRef;
    readonly operation: 'CREATE' | 'UPDATE';
    /**
     * What the reservation adds to usage now. For a CREATE, the object's usage; for an
     * UPDATE, Kubernetes' charge `max(0, new - old)` per key, so that a pending update never
     * lowers usage before it is known to have happened.
     */
    readonly charged: RawQuantities;
    /** UPDATE only: the object's whole usage after the change, which counts once committed. */
    readonly objectUsage?: RawQuantities;
    /** UPDATE only: the reservation of the object's previous state. */
    readonly supersedes?: string;
    /**
     * UPDATE only: the scope facts of the object before the change. A quota the old object
     * was not in (an object moving into its scope) is charged the whole new usage while the
     * update is pending, as Kubernetes charges it; the others only the increase.
     */
    readonly previousScopeFacts?: ScopeFacts;
    readonly scopeFacts: ScopeFacts;
    /** A REST reservation with a TTL: released as `expired` if not committed by then (RFC 3339). */
    readonly expiresAt?: string;
    /** Who made it; absent in events written before it was recorded (see `originOf`). */
    readonly source?: ReservationSource;
    /**
     * UPDATE from the API server's review only: the `metadata.resourceVersion` of the stored
     * object it changed (its oldObject). The API server writes the change only if the object is
     * still at that version, so a listing showing a later version shows whether it was written.
     */
    readonly oldResourceVersion?: string;
  };
}

export interface Committed {
  readonly type: 'Committed';
  readonly data: { readonly reservationId: string };
}

export interface Released {
  readonly type: 'Released';
  readonly data: { readonly reservationId: string; readonly reason: ReleaseReason };
}

/**
 * Why a committed object stopped being charged its compute resources while it still exists
 * (Kubernetes' `QuotaV1Pod`): its pod phase, or its deletion grace period having run out.
 */
export type TerminationReason = 'Succeeded' | 'Failed' | 'DeletionGracePeriodElapsed';

export const TERMINATION_REASONS: readonly TerminationReason[] = ['Succeeded', 'Failed', 'DeletionGracePeriodElapsed'];

/**
 * A committed object reached the end of its life but still exists (a pod Succeeded or Failed,
 * or past its deletion grace period). Kubernetes stops charging its compute resources and
 * `pods`; it counts only `usage` (its object count, `count/pods`) from now on, until its
 * deletion releases the reservation. The part it no longer counts is released by this event:
 * usage is corrected by appending, never by overwriting.
 */
export interface Terminated {
  readonly type: 'Terminated';
  readonly data: {
    readonly reservationId: string;
    readonly reason: TerminationReason;
    /** What the reservation counts from now on: a part of what it counted, never more. */
    readonly usage: RawQuantities;
  };
}

/**
 * An object that exists with no reservation: its usage counts from now on, over hard or not. Also
 * an object the ledger held at other usage than its listing shows, with nothing of it waiting to
 * be confirmed (re-measured: `replaces` names the reservation it takes over from, which a
 * `superseded` release retires in the same transaction).
 */
export interface Adopted {
  readonly type: 'Adopted';
  readonly data: {
    readonly reservationId: string;
    readonly object: ObjectRef;
    readonly usage: RawQuantities;
    readonly scopeFacts: ScopeFacts;
    /** Re-measured: the reservation whose record of the object the listing contradicted. */
    readonly replaces?: string;
  };
}

/** The namespace's own object (its labels and annotations) was created or changed. */
export interface NamespaceDefined {
  readonly type: 'NamespaceDefined';
  readonly data: NamespaceDefinition;
}

export interface NamespaceChanged {
  readonly type: 'NamespaceChanged';
  readonly data: NamespaceDefinition;
}

/** The Namespace object was deleted: its labels no longer select it into anything. */
export interface NamespaceRemoved {
  readonly type: 'NamespaceRemoved';
  readonly data: { readonly name: string };
}

/**
 * A shared quota covers this namespace from now on, with this spec (or its spec changed): the
 * namespace's contribution to it is recounted over its live reservations, as for a quota defined.
 */
export interface SharedQuotaApplied {
  readonly type: 'SharedQuotaApplied';
  readonly data: { readonly key: string; readonly ref: SharedQuotaRef; readonly spec: ResourceQuotaSpec };
}

/** A shared quota no longer covers this namespace (its labels changed, or the quota was removed). */
export interface SharedQuotaWithdrawn {
  readonly type: 'SharedQuotaWithdrawn';
  readonly data: { readonly key: string };
}

/**
 * The namespace just became managed (its first quota, limit range or shared quota) while objects
 * admitted before were never recorded: until a complete listing has counted them (`Counted`),
 * every quota covering it refuses what it would charge, as Kubernetes answers `status unknown
 * for quota` until its controller's first count (a quota of pods=2 over 2 live pods
 * admitted a third). Appended only where an inventory can count (QUOTA_AWAITS_FIRST_COUNT).
 */
export interface CountAwaited {
  readonly type: 'CountAwaited';
  readonly data: { readonly reason: 'managed' };
}

/** A complete listing that started after `CountAwaited` has adopted the namespace's objects: its usage is known. */
export interface Counted {
  readonly type: 'Counted';
  readonly data: { readonly listedAt: string };
}

/** In a shared quota's own stream: its definition was created or changed. */
export interface SharedQuotaDefined {
  readonly type: 'SharedQuotaDefined';
  readonly data: SharedQuotaDefinition;
}

export interface SharedQuotaChanged {
  readonly type: 'SharedQuotaChanged';
  readonly data: SharedQuotaDefinition;
}

export interface SharedQuotaRemoved {
  readonly type: 'SharedQuotaRemoved';
  readonly data: { readonly ref: SharedQuotaRef };
}

/** One quota a queued reservation waits for, and its resources that are short (canonical quantities). */
export interface WaitingForJson {
  /** The quota's name; a shared quota's as its denial names it (`ClusterResourceQuota/team`). */
  readonly quota: string;
  readonly resources: readonly { readonly resource: string; readonly requested: string; readonly used: string; readonly hard: string }[];
}

/**
 * A REST reservation that asked to wait did not fit: it waits in the namespace's queue
 * until a transaction that frees room admits it (AdmittedFromQueue, then its Reserved), it is
 * cancelled (Cancelled) or its deadline passes (Expired). The queue is this stream's fold: nothing
 * queued is lost on a restart.
 */
export interface Queued {
  readonly type: 'Queued';
  readonly data: {
    readonly reservationId: string;
    readonly object: ObjectRef;
    /** The resource list asked for, canonical. */
    readonly resources: RawQuantities;
    /** Higher first; equal priorities in arrival (stream) order. */
    readonly priority: number;
    /** When it stops waiting (RFC 3339). */
    readonly deadline: string;
    /** Once admitted, the reservation expires unless committed within this many ms. */
    readonly ttlMs?: number;
    readonly waitingFor: readonly WaitingForJson[];
    /** Who asked (the event's actor): the bound on what one principal's blocking waiters hold back counts by it. Absent in events written before it was kept. */
    readonly principal?: string;
  };
}

/** A queued reservation fits now: its Reserved event follows in the same transaction. */
export interface AdmittedFromQueue {
  readonly type: 'AdmittedFromQueue';
  readonly data: {
    readonly reservationId: string;
    /** The event whose freed room admitted it (its stream version and type); absent for a sweep. */
    readonly freedBy?: { readonly version: number; readonly type: string };
  };
}

/** A queued reservation was given up by its caller (REST DELETE). */
export interface Cancelled {
  readonly type: 'Cancelled';
  readonly data: { readonly reservationId: string };
}

/** A queued reservation's deadline passed before room was found for it. */
export interface Expired {
  readonly type: 'Expired';
  readonly data: { readonly reservationId: string; readonly reason: string };
}

export type LedgerEvent =
  | QuotaDefined
  | QuotaChanged
  | QuotaRemoved
  | LimitRangeDefined
  | LimitRangeChanged
  | LimitRangeRemoved
  | Reserved
  | Committed
  | Released
  | Terminated
  | Adopted
  | NamespaceDefined
  | NamespaceChanged
  | NamespaceRemoved
  | SharedQuotaApplied
  | SharedQuotaWithdrawn
  | CountAwaited
  | Counted
  | SharedQuotaDefined
  | SharedQuotaChanged
  | SharedQuotaRemoved
  | Queued
  | AdmittedFromQueue
  | Cancelled
  | Expired;

export type LedgerEventType = LedgerEvent['type'];

export const LEDGER_EVENT_TYPES: readonly LedgerEventType[] = [
  'QuotaDefined',
  'QuotaChanged',
  'QuotaRemoved',
  'LimitRangeDefined',
  'LimitRangeChanged',
  'LimitRangeRemoved',
  'Reserved',
  'Committed',
  'Released',
  'Terminated',
  'Adopted',
  'NamespaceDefined',
  'NamespaceChanged',
  'NamespaceRemoved',
  'SharedQuotaApplied',
  'SharedQuotaWithdrawn',
  'CountAwaited',
  'Counted',
  'SharedQuotaDefined',
  'SharedQuotaChanged',
  'SharedQuotaRemoved',
  'Queued',
  'AdmittedFromQueue',
  'Cancelled',
  'Expired',
];

/** An event as the ledger recorded it: its place in the namespace's stream and its time. */
export type RecordedEvent<E extends LedgerEvent = LedgerEvent> = E & {
  /** 1-based, gap-free position within the namespace's stream. */
  readonly version: number;
  /** When it was appended, in epoch milliseconds. */
  readonly at: number;
};
