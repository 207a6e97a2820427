import {
  quotaScopeRequirements,
  Resources,
  type LimitRangeDefinition,
  type LimitRangeState,
  type NamespaceDefinition,
  type NamespaceState,
  type SharedQuotaRef,
  type SharedQuotaState,
  type ResourceQuotaSpec,
  type QuotaDefinition,
  type QuotaState,
  type RawQuantities,
  type Reservation,
  type ScopeFacts,
  type Waiter,
} from '@quota/domain';
import type { CoveringSharedQuota } from './ledger.types.js';

/**
 * The JSON of a namespace's head row and of a reservation row, and their conversion to the
 * domain's NamespaceState. The head holds what every admission needs (quotas with their
 * running usage, limit ranges); reservations are rows of their own, loaded by key only when
 * a command needs them, so a namespace with 100,000 pods still has a small head.
 */
export interface HeadJson {
  readonly quotas: readonly {
    readonly definition: QuotaDefinition;
    readonly version: number;
    readonly createdAt: number;
    readonly updatedAt: number;
    readonly used: RawQuantities;
  }[];
  readonly limitRanges: readonly {
    readonly definition: LimitRangeDefinition;
    readonly version: number;
    readonly createdAt: number;
    readonly updatedAt: number;
  }[];
  readonly lastEventAt?: number;
  readonly releasedCount: number;
  /** The Namespace object (labels, annotations), when one is defined. */
  readonly object?: {
    readonly definition: NamespaceDefinition;
    readonly version: number;
    readonly createdAt: number;
    readonly updatedAt: number;
  };
  /** The shared quotas covering the namespace, with what it contributes to each (absent: none). */
  readonly shared?: readonly {
    readonly key: string;
    readonly ref: SharedQuotaRef;
    readonly spec: ResourceQuotaSpec;
    readonly version: number;
    readonly createdAt: number;
    readonly updatedAt: number;
    readonly used: RawQuantities;
  }[];
  readonly objectOnly?: boolean;
  /** When the Namespace object was removed, while none is defined again (NamespaceState.objectRemovedAt). */
  readonly objectRemovedAt?: number;
  /** Since when the namespace awaits its first count (NamespaceState.awaitingCountSince). */
  readonly awaitingCountSince?: number;
  /** The queued reservations, in arrival order (absent: none). */
  readonly queue?: readonly WaiterJson[];
}

/** A Waiter as the head stores it: the same fields, its resources as canonical strings. */
export type WaiterJson = Omit<Waiter, 'resources'> & { readonly resources: RawQuantities };

export function waiterFromJson(j: WaiterJson): Waiter {
  return { ...j, resources: Resources.resourceList(j.resources) };
}

function waiterToJson(w: Waiter): WaiterJson {
  return { ...w, resources: Resources.canonicalResourceList(w.resources) };
}

export interface ReservationJson {
  readonly id: string;
  readonly object: Reservation['object'];
  readonly operation: Reservation['operation'];
  readonly source?: Reservation['source'];
  readonly status: Reservation['status'];
  readonly contribution: RawQuantities;
  readonly objectUsage?: RawQuantities;
  readonly supersedes?: string;
  readonly scopeFacts: ScopeFacts;
  readonly previousScopeFacts?: ScopeFacts;
  readonly oldResourceVersion?: string;
  readonly version: number;
  readonly reservedAt: number;
  readonly committedAt?: number;
  readonly expiresAt?: number;
  readonly terminatedAt?: number;
}

export const EMPTY_HEAD: HeadJson = { quotas: [], limitRanges: [], releasedCount: 0 };

export function quotaStateOf(entry: HeadJson['quotas'][number]): QuotaState {
  const hard = Resources.resourceList(entry.definition.spec.hard ?? {});
  return {
    name: entry.definition.name,
    definition: entry.definition,
    hard,
    hardNames: Object.keys(hard),
    requirements: quotaScopeRequirements(entry.definition.spec),
    version: entry.version,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
  };
}

function sharedStateOf(entry: NonNullable<HeadJson['shared']>[number]): SharedQuotaState {
  const hard = Resources.resourceList(entry.spec.hard ?? {});
  return {
    name: entry.key,
    key: entry.key,
    ref: entry.ref,
    definition: { name: entry.key, spec: entry.spec },
    hard,
    hardNames: Object.keys(hard),
    requirements: quotaScopeRequirements(entry.spec),
    version: entry.version,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
  };
}

function limitRangeStateOf(entry: HeadJson['limitRanges'][number]): LimitRangeState {
  return { name: entry.definition.name, ...entry };
}

/**
 * The domain state of a namespace as far as the head and the given live reservations tell
 * it. `reservations` holds only what was loaded: deciders that need all of them (a quota
 * definition recounts usage) must load all first.
 */
export function stateOf(version: number, head: HeadJson, reservations: Iterable<Reservation> = []): NamespaceState {
  const live = new Map<string, Reservation>();
  const byUid = new Map<string, string>();
  for (const reservation of reservations) {
    live.set(reservation.id, reservation);
    const uid = reservation.object.uid;
    const current = uid === undefined ? undefined : byUid.get(uid);
    if (uid !== undefined && (current === undefined || (live.get(current)?.version ?? 0) < reservation.version))
      byUid.set(uid, reservation.id);
  }
  return {
    version,
    ...(head.lastEventAt === undefined ? {} : { lastEventAt: head.lastEventAt }),
    quotas: new Map(head.quotas.map((q) => [q.definition.name, quotaStateOf(q)])),
    limitRanges: new Map(head.limitRanges.map((lr) => [lr.definition.name, limitRangeStateOf(lr)])),
    reservations: live,
    reservationsByUid: byUid,
    used: new Map(head.quotas.map((q) => [q.definition.name, Resources.resourceList(q.used)])),
    releasedCount: head.releasedCount,
    ...(head.object ? { object: head.object } : {}),
    shared: new Map((head.shared ?? []).map((q) => [q.key, sharedStateOf(q)])),
    sharedUsed: new Map((head.shared ?? []).map((q) => [q.key, Resources.resourceList(q.used)])),
    ...(head.objectOnly ? { objectOnly: true } : {}),
    ...(head.objectRemovedAt === undefined ? {} : { objectRemovedAt: head.objectRemovedAt }),
    ...(head.awaitingCountSince === undefined ? {} : { awaitingCountSince: head.awaitingCountSince }),
    queue: new Map((head.queue ?? []).map((w) => [w.id, waiterFromJson(w)])),
  };
}

export function headOf(state: NamespaceState): HeadJson {
  const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return {
    quotas: [...state.quotas.values()].sort(byName).map((q) => ({
      definition: q.definition,
      version: q.version,
      createdAt: q.createdAt,
      updatedAt: q.updatedAt,
      used: Resources.canonicalResourceList(state.used.get(q.name) ?? Resources.EMPTY),
    })),
    limitRanges: [...state.limitRanges.values()].sort(byName).map((lr) => ({
      definition: lr.definition,
      version: lr.version,
      createdAt: lr.createdAt,
      updatedAt: lr.updatedAt,
    })),
    ...(state.lastEventAt === undefined ? {} : { lastEventAt: state.lastEventAt }),
    releasedCount: state.releasedCount,
    ...headRestOf(state),
  };
}

/**
 * The parts of the head besides quotas, limit ranges and usage: the Namespace object and the
 * shared quotas covering the namespace (with what it contributes to each). The projection keeps
 * these alone (projected_namespaces.head_rest).
 */
export function headRestOf(
  state: NamespaceState,
): Pick<HeadJson, 'object' | 'shared' | 'objectOnly' | 'objectRemovedAt' | 'awaitingCountSince' | 'queue'> {
  return {
    ...(state.object ? { object: state.object } : {}),
    ...(state.shared.size > 0
      ? {
          shared: [...state.shared.values()]
            .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
            .map((q) => ({
              key: q.key,
              ref: q.ref,
              spec: q.definition.spec,
              version: q.version,
              createdAt: q.createdAt,
              updatedAt: q.updatedAt,
              used: Resources.canonicalResourceList(state.sharedUsed.get(q.key) ?? Resources.EMPTY),
            })),
        }
      : {}),
    ...(state.objectOnly ? { objectOnly: true } : {}),
    ...(state.objectRemovedAt === undefined ? {} : { objectRemovedAt: state.objectRemovedAt }),
    ...(state.awaitingCountSince === undefined ? {} : { awaitingCountSince: state.awaitingCountSince }),
    ...(state.queue.size > 0 ? { queue: [...state.queue.values()].map(waiterToJson) } : {}),
  };
}

export function reservationToJson(r: Reservation): ReservationJson {
  return {
    id: r.id,
    object: r.object,
    operation: r.operation,
    ...(r.source ? { source: r.source } : {}),
    status: r.status,
    contribution: Resources.canonicalResourceList(r.contribution),
    ...(r.objectUsage ? { objectUsage: Resources.canonicalResourceList(r.objectUsage) } : {}),
    ...(r.supersedes ? { supersedes: r.supersedes } : {}),
    scopeFacts: r.scopeFacts,
    ...(r.previousScopeFacts ? { previousScopeFacts: r.previousScopeFacts } : {}),
    ...(r.oldResourceVersion ? { oldResourceVersion: r.oldResourceVersion } : {}),
    version: r.version,
    reservedAt: r.reservedAt,
    ...(r.committedAt === undefined ? {} : { committedAt: r.committedAt }),
    ...(r.expiresAt === undefined ? {} : { expiresAt: r.expiresAt }),
    ...(r.terminatedAt === undefined ? {} : { terminatedAt: r.terminatedAt }),
  };
}

export function reservationFromJson(j: ReservationJson): Reservation {
  return {
    id: j.id,
    object: j.object,
    operation: j.operation,
    ...(j.source ? { source: j.source } : {}),
    status: j.status,
    contribution: Resources.resourceList(j.contribution),
    ...(j.objectUsage ? { objectUsage: Resources.resourceList(j.objectUsage) } : {}),
    ...(j.supersedes ? { supersedes: j.supersedes } : {}),
    scopeFacts: j.scopeFacts,
    ...(j.previousScopeFacts ? { previousScopeFacts: j.previousScopeFacts } : {}),
    ...(j.oldResourceVersion ? { oldResourceVersion: j.oldResourceVersion } : {}),
    version: j.version,
    reservedAt: j.reservedAt,
    ...(j.committedAt === undefined ? {} : { committedAt: j.committedAt }),
    ...(j.expiresAt === undefined ? {} : { expiresAt: j.expiresAt }),
    ...(j.terminatedAt === undefined ? {} : { terminatedAt: j.terminatedAt }),
  };
}

/** The shared quotas a head says cover its namespace: each by kind and name, with its hard limits and this namespace's part of its use. */
export function coveringShared(shared: HeadJson['shared']): CoveringSharedQuota[] {
  return (shared ?? []).map((q) => ({
    kind: q.ref.kind,
    name: q.ref.name,
    ...(q.ref.namespace ? { namespace: q.ref.namespace } : {}),
    hard: q.spec.hard ?? {},
    used: q.used,
  }));
}
