import type { ScopedResourceSelectorRequirement } from '../kube/types.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { ScopeFacts } from '../scopes/facts.js';
import type { NamespaceDefinition, SharedQuotaRef } from '../shared/shared-quota.js';
import type { LimitRangeDefinition, ObjectRef, QuotaDefinition, ReservationSource, WaitingForJson } from './events.js';

/** What the fold (fold.ts) makes of a namespace's events: its state, and the working copy it folds into. */
export interface QuotaState {
  readonly name: string;
  readonly definition: QuotaDefinition;
  readonly hard: ResourceList;
  readonly hardNames: readonly string[];
  readonly requirements: readonly ScopedResourceSelectorRequirement[];
  /** The stream version of the event that last defined or changed it (its resourceVersion). */
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A shared quota as one namespace it covers carries it: its spec, and (in `sharedUsed`) what the namespace contributes. */
export interface SharedQuotaState extends QuotaState {
  /** Its key (sharedQuotaKey): also its `name` and `definition.name`. */
  readonly key: string;
  readonly ref: SharedQuotaRef;
}

/** The Namespace object as the fold keeps it: its definition, and the stream version of its last change (its resourceVersion). */
export interface NamespaceObjectState {
  readonly definition: NamespaceDefinition;
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface LimitRangeState {
  readonly name: string;
  readonly definition: LimitRangeDefinition;
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export type ReservationStatus = 'reserved' | 'committed';

/** A live reservation (released ones leave the state; their history stays in the ledger). */
export interface Reservation {
  readonly id: string;
  readonly object: ObjectRef;
  readonly operation: 'CREATE' | 'UPDATE' | 'ADOPT';
  /** Reserved only: who made it (absent for reservations recorded before it was; see `originOf`). */
  readonly source?: ReservationSource;
  readonly status: ReservationStatus;
  /** What it counts toward usage now. */
  readonly contribution: ResourceList;
  /** UPDATE only: what it will count once committed. */
  readonly objectUsage?: ResourceList;
  readonly supersedes?: string;
  readonly scopeFacts: ScopeFacts;
  /** UPDATE only, while pending: the facts of the object's previous state. */
  readonly previousScopeFacts?: ScopeFacts;
  /** UPDATE from the API server only: the resourceVersion of the stored object it changed (Reserved.oldResourceVersion). */
  readonly oldResourceVersion?: string;
  /** The stream version of its Reserved or Adopted event. */
  readonly version: number;
  readonly reservedAt: number;
  readonly committedAt?: number;
  readonly expiresAt?: number;
  /** When a Terminated event cut it down to its object count (the object is terminal but still exists). */
  readonly terminatedAt?: number;
}

/** A queued reservation (a `Queued` event not yet admitted, cancelled or expired). */
export interface Waiter {
  readonly id: string;
  readonly object: ObjectRef;
  readonly resources: ResourceList;
  readonly priority: number;
  /** The stream version of its Queued event: its arrival order. */
  readonly version: number;
  readonly queuedAt: number;
  readonly deadline: number;
  readonly ttlMs?: number;
  /** How many waiters ordered after it were admitted before it (the BestEffortFIFO bound counts these). */
  readonly passed: number;
  /** What it waited for when it was queued. */
  readonly waitingFor: readonly WaitingForJson[];
  /** Who asked; absent for waiters queued before it was kept (each then counts as a principal of its own). */
  readonly principal?: string;
}

export interface NamespaceState {
  /** The version of the last event folded (0 for an empty stream). */
  readonly version: number;
  readonly lastEventAt?: number;
  readonly quotas: ReadonlyMap<string, QuotaState>;
  readonly limitRanges: ReadonlyMap<string, LimitRangeState>;
  /** Live reservations by id, in the order they were made. */
  readonly reservations: ReadonlyMap<string, Reservation>;
  /** Live reservation ids by object uid. */
  readonly reservationsByUid: ReadonlyMap<string, string>;
  /** Per quota: every hard resource, with the usage it has now (zero when nothing counts). */
  readonly used: ReadonlyMap<string, ResourceList>;
  readonly releasedCount: number;
  /** The Namespace object, while one is defined (its labels select the namespace into shared quotas). */
  readonly object?: NamespaceObjectState;
  /**
   * When the Namespace object was last removed, while no new one is defined: the ledger knows the
   * namespace as deleted (NamespaceLifecycle refuses new content there), quotas or not.
   */
  readonly objectRemovedAt?: number;
  /** The shared quotas covering this namespace, by key. */
  readonly shared: ReadonlyMap<string, SharedQuotaState>;
  /** Per shared quota: what this namespace contributes to its usage (every hard resource, zero or not). */
  readonly sharedUsed: ReadonlyMap<string, ResourceList>;
  /**
   * Only the Namespace object was ever recorded here (no quota, limit range, shared quota or
   * reservation): the namespace is not managed, and admission there is not charged.
   */
  readonly objectOnly?: boolean;
  /**
   * Since when (epoch ms) the namespace awaits its first count (`CountAwaited`): its quotas'
   * usage is unknown until a listing started after then has adopted what exists.
   */
  readonly awaitingCountSince?: number;
  /** Queued reservations by id, in arrival order (`queueOrder` sorts them by priority). */
  readonly queue: ReadonlyMap<string, Waiter>;
}

export function initialState(): NamespaceState {
  return {
    version: 0,
    quotas: new Map(),
    limitRanges: new Map(),
    reservations: new Map(),
    reservationsByUid: new Map(),
    used: new Map(),
    releasedCount: 0,
    shared: new Map(),
    sharedUsed: new Map(),
    queue: new Map(),
  };
}

/** A mutable working copy; `evolve` and `fold` share it so both run the same code. */
export interface Draft {
  version: number;
  lastEventAt?: number;
  quotas: Map<string, QuotaState>;
  limitRanges: Map<string, LimitRangeState>;
  reservations: Map<string, Reservation>;
  reservationsByUid: Map<string, string>;
  used: Map<string, ResourceList>;
  releasedCount: number;
  object?: NamespaceObjectState;
  objectRemovedAt?: number;
  shared: Map<string, SharedQuotaState>;
  sharedUsed: Map<string, ResourceList>;
  objectOnly?: boolean;
  awaitingCountSince?: number;
  queue: Map<string, Waiter>;
}

export function draftOf(state: NamespaceState): Draft {
  return {
    version: state.version,
    ...(state.lastEventAt === undefined ? {} : { lastEventAt: state.lastEventAt }),
    quotas: new Map(state.quotas),
    limitRanges: new Map(state.limitRanges),
    reservations: new Map(state.reservations),
    reservationsByUid: new Map(state.reservationsByUid),
    used: new Map(state.used),
    releasedCount: state.releasedCount,
    ...(state.object ? { object: state.object } : {}),
    ...(state.objectRemovedAt === undefined ? {} : { objectRemovedAt: state.objectRemovedAt }),
    shared: new Map(state.shared),
    sharedUsed: new Map(state.sharedUsed),
    ...(state.objectOnly ? { objectOnly: true } : {}),
    ...(state.awaitingCountSince === undefined ? {} : { awaitingCountSince: state.awaitingCountSince }),
    queue: new Map(state.queue),
  };
}
