import type { GroupResource, KubeObject } from '@quota/domain';

/**
 * Where the reconciler learns which objects really exist. A source answers for a fixed set
 * of resources (`covers`) and, for each, lists *every* object of the namespace: a
 * reservation for a covered resource whose object is absent from a complete listing is
 * released; reservations for resources a source does not cover are left alone.
 */
export interface InventorySource {
  /** A short name for logs and metrics: `kubernetes`, `postgres`, `http`. */
  readonly kind: string;
  /** The resources this source lists completely. */
  readonly covers: readonly GroupResource[];
  /**
   * Every object of the covered resources in the namespace. Rejects (InventoryError) when
   * the listing may be incomplete: a partial listing must never release anything.
   */
  list(namespace: string, signal?: AbortSignal): Promise<Inventory>;
  /**
   * Every Namespace of the cluster with its labels and annotations, for sources that know
   * namespaces as objects (kubernetes). The reconciler records them, so that the labels the
   * shared quotas select on stay current without an import. Rejects (InventoryError) unless
   * the listing is complete: a namespace missing from it is taken as deleted.
   */
  namespaces?(signal?: AbortSignal): Promise<NamespaceListing>;
  /** One Namespace as the cluster stores it now, or null when it has none of that name. */
  namespace?(name: string, signal?: AbortSignal): Promise<ClusterNamespace | null>;
  /**
   * Watches the covered kinds across the cluster (kubernetes) and reports each change that
   * settles a reservation: an object deleted, a pod that reached Succeeded or Failed, an object added.
   * Runs until `signal` aborts; failures are retried inside (kube-watch.ts, watch.ts) and told to `onState`.
   */
  watchSettlements?(onSignal: (change: SettleSignal) => void, signal: AbortSignal, onState?: (state: WatchState) => void): Promise<void>;
  /** Each kind's cache now, where the source lists from watch-fed caches (kubernetes, INVENTORY_CACHE). */
  cacheStates?(): readonly CacheState[];
  close(): Promise<void>;
}

/** A Namespace as the cluster has it: what the ledger records of it. */
export interface ClusterNamespace {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  /** Its `metadata.resourceVersion`: a record taken from it is never replaced by an older one. */
  readonly resourceVersion?: string;
}

/** Every Namespace of the cluster, and the list's `metadata.resourceVersion` (what it is as of). */
export interface NamespaceListing {
  readonly items: readonly ClusterNamespace[];
  readonly resourceVersion?: string;
}

export interface Inventory {
  readonly namespace: string;
  /** Complete for these resources. */
  readonly covers: readonly GroupResource[];
  readonly objects: readonly InventoryObject[];
  /**
   * Up to when the listing is known current, on this process's clock (Date.now), where it was
   * read from watch-fed caches (when it was read: a synced cache is current). Absent, it is as of the call.
   */
  readonly asOf?: number;
  /**
   * Uids of the namespace's objects the source saw deleted lately (a watch-fed cache's DELETED
   * events and relists, tombstones.ts). A uid is never reused: a reservation still waiting for
   * one of these is released at once, not after the grace period.
   */
  readonly deleted?: readonly string[];
}

/** One kind's watch-fed cache (kube-cache.ts), as the metrics and the log see it. */
export interface CacheState {
  readonly resource: string;
  readonly state: 'listing' | 'synced' | 'broken' | 'over-ceiling' | 'not-served' | 'forbidden' | 'stopped';
  readonly objects: number;
  readonly bytes: number;
  readonly error?: string;
  readonly waitMs?: number;
}

/** One existing object: which resource it is, its uid, and the object (for adoption's usage). */
export interface InventoryObject {
  readonly groupResource: GroupResource;
  readonly uid: string;
  readonly name: string;
  /** The Kubernetes object as stored, with `apiVersion`, `kind` and `metadata`. */
  readonly object: KubeObject;
}

/** A listing that failed or may be incomplete; the reconciler retries later and appends nothing. */
export class InventoryError extends Error {
  constructor(
    message: string,
    readonly source: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'InventoryError';
  }
}

/** A change that settles an object's reservation: it was deleted, (a pod) it finished, or it was added (commit or adopt). */
export interface SettleSignal {
  readonly namespace: string;
  readonly groupResource: GroupResource;
  readonly uid: string;
  readonly name: string;
  readonly why: 'deleted' | 'terminal' | 'added';
}

export interface WatchState {
  readonly resource: string;
  /** `started` / `stopped`: a kind discovered since the watches began, or one no longer served (watch-kinds.ts). */
  readonly state: 'listed' | 'relist' | 'failed' | 'resumed' | 'started' | 'stopped';
  readonly error?: string;
  readonly waitMs?: number;
}
