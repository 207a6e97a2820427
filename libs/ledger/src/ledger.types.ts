import type { AdmissionSource, DecisionView as ApiDecisionView, EventView, SharedQuotaUsagePoint } from '@quota/api';
import type {
  AdmissionPlugin,
  AdmissionResult,
  AdmissionRequest,
  ExistingObject,
  GroupResource,
  OverHard,
  ReconcileAction,
  Uncovered,
  Unreadable,
  LimitRangeDefinition,
  LimitedResource,
  ObjectRef,
  QuotaDefinition,
  RawQuantities,
  ReleaseReason,
  ReservationOrigin,
  SharedQuotaRef,
  QueuePolicy,
} from '@quota/domain';

/**
 * The ledger's public shapes: what the admission API gives it and gets back. Everything
 * here is plain JSON (quantities as canonical strings, times as RFC 3339), so a stored
 * answer can be repeated byte for byte.
 */

export interface LedgerOptions {
  /** Most commands of one namespace decided together in one transaction. */
  readonly batchSizeMax?: number;
  /** Most commands in one group commit, all namespaces together (default 256). */
  readonly groupCommandsMax?: number;
  /** Most estimated bytes one group commit writes (default 1 MiB). */
  readonly groupBytesMax?: number;
  /** Most group commits in flight at once, each on one pooled connection (default 2). */
  readonly groupsInFlightMax?: number;
  /** Attempts of one transaction before answering Unavailable (SQLSTATE 40001, version conflicts). */
  readonly retryMax?: number;
  /** First backoff after a conflict, in milliseconds; doubles per attempt, with full jitter. */
  readonly retryBaseMs?: number;
  /** Largest single backoff, in milliseconds. */
  readonly retryMaxDelayMs?: number;
  /** Longest a command waits, in all, while other replicas hold its namespace's head, before Unavailable (default 5,000 ms). */
  readonly headWaitMaxMs?: number;
  /** Time in epoch milliseconds. Default: the database's clock, read in the transaction. */
  readonly clock?: () => number;
  /** New ids (reservations, quota uids). Default: crypto.randomUUID. */
  readonly newId?: () => string;
  /** Told of every committed write transaction: commands decided in it, and retries it took (metrics). */
  readonly onCommitted?: (commands: number, retries: number) => void;
  /** Most ResourceQuotas one namespace may hold (every admission there reads and rewrites them all). */
  readonly quotasPerNamespaceMax?: number;
  /** Most LimitRanges one namespace may hold. */
  readonly limitRangesPerNamespaceMax?: number;
  /** The reservation queue: BestEffortFIFO bounds and the most waiters per namespace; absent: DEFAULT_QUEUE_POLICY. */
  readonly queuePolicy?: QueuePolicy;
  /** Most queued reservations in all namespaces together (checked before the transaction; default 10,000). */
  readonly queueTotalMax?: number;
  /** An allowed admission warns of every charged resource at or above this percent of its hard limit (absent or 0: never). */
  readonly quotaWarningPercent?: number;
  /** The admission plugins that run (ADMISSION_PLUGINS_ENABLE / _DISABLE); absent: NamespaceLifecycle, LimitRanger, ResourceQuota. */
  readonly admissionPlugins?: readonly AdmissionPlugin[];
  /** The ResourceQuota plugin's `limitedResources` (ADMISSION_CONFIG_FILE): consuming them needs a covering quota. */
  readonly limitedResources?: readonly LimitedResource[];
  /** Most namespaces one shared quota may cover when it is defined (default 1,000). */
  readonly sharedQuotaNamespacesMax?: number;
  /** A namespace made managed awaits its first count (QUOTA_AWAITS_FIRST_COUNT): see CountAwaited. */
  readonly awaitFirstCount?: boolean;
  /** A seam for tests and fault injection: runs between a batch's keyed prefetch and its transaction. */
  readonly onPrefetched?: (namespace: string) => Promise<void>;
  /** A seam for tests: runs inside a group's transaction once its heads are read and locked. */
  readonly onLocked?: (namespaces: readonly string[]) => Promise<void>;
}

export type { AdmissionResult, DenialJson } from '@quota/domain';
export type {
  AdmissionSource,
  EventView,
  Page,
  SharedQuotaUsagePoint,
  SharedQuotaUsageSeries,
  UsageMarker,
  UsagePoint,
  UsageSeries,
} from '@quota/api';

/** A decision as the audit API lists it: the contract's view of the domain's answer. */
export type DecisionView = ApiDecisionView<AdmissionResult>;

export interface AdmitCommand {
  readonly namespace: string;
  readonly source: AdmissionSource;
  /** What is admitted: a Kubernetes object (through the domain's evaluators) ... */
  readonly request: AdmissionRequest;
  /**
   * ... or, REST only, a plain resource list charged as given (any resource name). When set,
   * `request` still names the operation and object, and its `object` may be absent.
   */
  readonly resources?: RawQuantities;
  /**
   * The object's kind (`Pod`, `Widget`) when `request.object` does not carry one (a REST
   * resource list): the decision and the reservation record it, so the audit log never has
   * a row without a kind.
   */
  readonly kind?: string;
  /**
   * Idempotency key, unique per namespace: `review:<AdmissionReview uid>` or
   * `rest:<requestId>`. A repeated key returns the first answer and appends nothing.
   */
  readonly requestKey?: string;
  readonly dryRun: boolean;
  /** Who asked: the authenticated principal (a token's or client certificate's name). */
  readonly requester: string;
  /**
   * The Kubernetes user the principal relays (an AdmissionReview's `userInfo.username`), only
   * when the principal is trusted to speak for users; a claim from any other caller is dropped
   * before it gets here.
   */
  readonly onBehalfOf?: string;
  /** REST resource lists: wait in the namespace's queue up to `seconds` when it does not fit (202), at this priority (higher first). */
  readonly wait?: { readonly seconds: number; readonly priority: number };
  /** REST: the reservation expires (released as `expired`) unless committed within this many ms. */
  readonly ttlMs?: number;
  /**
   * `false`: the decision is not written to the decisions log (a what-if: a read, which a
   * read-only auditor may ask, so it must leave nothing behind). Only with `dryRun`.
   */
  readonly logged?: false;
  /**
   * REST: refuse with NamespaceNotFound when the namespace has no stream (no quota or limit
   * range was ever defined there). The webhook admits in such a namespace without a reservation.
   */
  readonly requireKnownNamespace?: boolean;
}

export interface AdmitOutcome {
  readonly result: AdmissionResult;
  /** True when this answer is the stored answer of an earlier request with the same key. */
  readonly repeated: boolean;
  /** The decision's id in the decisions log ('' when none was recorded). */
  readonly decisionId: string;
  /**
   * False when the namespace has no quota or limit range (it never had): admitted without a
   * charge and without a record, and nothing to reconcile there.
   */
  readonly managed: boolean;
  /**
   * The global position (ledger_events.position, decimal) of the event this answer stands on,
   * to read after with `?minPosition=`: the Reserved event it appended or, when it appended
   * nothing (a repeated request, an object admitted again), its reservation's first event (REST
   * only: the webhook's answer carries none). Absent when it names no reservation (a denial, a
   * dry run, nothing charged).
   */
  readonly position?: string;
  /**
   * An allowed resource list: a warning for each name it asks for that no quota charges (the
   * domain's unchargedResourceWarnings). Not part of `result`, which the decisions log stores.
   */
  readonly uncharged?: readonly string[];
}

export type ReservationState = 'reserved' | 'committed' | 'released';

export interface ReservationView {
  readonly id: string;
  readonly namespace: string;
  readonly state: ReservationState;
  readonly operation: 'CREATE' | 'UPDATE' | 'ADOPT';
  /**
   * Who made it, and so who settles it: `webhook` (the kube-apiserver's review) and `adopted`
   * (the reconciler found the object) are committed and released from what the cluster holds;
   * `rest` by the REST calls of whoever holds the admission role in its namespace.
   */
  readonly origin: ReservationOrigin;
  readonly object: ObjectRef;
  /** What it counts toward usage now (or counted, once released). */
  readonly charged: RawQuantities;
  readonly reservedAt: string;
  readonly committedAt?: string;
  /** When the object turned terminal while it still existed: from then on `charged` is only its object count. */
  readonly terminatedAt?: string;
  readonly releasedAt?: string;
  readonly releaseReason?: ReleaseReason;
  readonly expiresAt?: string;
  readonly requestId?: string;
  /** Who asked for it: the actor of its Reserved or Adopted event. */
  readonly requester?: string;
  /** The Kubernetes user that principal asked for, when recorded. */
  readonly onBehalfOf?: string;
  /** Oldest first: Reserved/Adopted, Committed, Released. */
  readonly history?: readonly EventView[];
}

/** A ResourceQuota as stored, with its usage now. */
export interface QuotaView {
  readonly namespace: string;
  readonly definition: QuotaDefinition;
  /** The stream version that last defined or changed it: its `metadata.resourceVersion`. */
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Canonical hard limits. */
  readonly hard: RawQuantities;
  /** Canonical usage, one entry per hard resource; may exceed hard after a limit was lowered. */
  readonly used: RawQuantities;
}

export interface LimitRangeView {
  readonly namespace: string;
  readonly definition: LimitRangeDefinition;
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface PutResult<V> {
  /** True when the object did not exist before (HTTP 201). */
  readonly created: boolean;
  /** False when the body equalled the stored object (nothing appended). */
  readonly changed: boolean;
  readonly view: V;
  /**
   * The global position (ledger_events.position, decimal) of the event this answer stands on,
   * to read after with `?minPosition=`: the last event the write appended or, when it appended
   * nothing, the event that last defined or changed the object (its `metadata.resourceVersion`).
   */
  readonly position?: string;
}

/** What a delete answers: the object's last state, and the position of the event that removed it. */
export interface RemoveResult<V> {
  readonly view: V;
  /** The global position (ledger_events.position, decimal) of the removal's last event, to read after with `?minPosition=`. */
  readonly position: string;
}

export interface WriteOptions {
  /** Who made the change. */
  readonly actor: string;
  /** The Kubernetes user the actor relayed (a LedgerQuota's author, stamped by the webhook). */
  readonly onBehalfOf?: string;
  /** The caller's request id, recorded on the events. */
  readonly requestId?: string;
  /**
   * A write of the REST admin API: a definition that came from a cluster object is refused with a
   * 409 Conflict, decided in the write's own transaction (the reconciler's syncs leave it unset).
   */
  readonly unmanagedOnly?: boolean;
}

export interface PutOptions extends WriteOptions {
  /** `metadata.resourceVersion` from the body: the version the caller last saw (409 when stale). */
  readonly expectedVersion?: number;
}

export interface CommitOutcome {
  readonly view: ReservationView;
  /** False when it was committed already (idempotent repeat). */
  readonly changed: boolean;
  /**
   * The global position (ledger_events.position, decimal) of the event this answer stands on,
   * to read after with `?minPosition=`: the event it appended or, for a repeat, the
   * reservation's latest (the state the view shows).
   */
  readonly position?: string;
}

export interface ReleaseOutcome {
  readonly view: ReservationView;
  readonly changed: boolean;
  /** As a commit's: the event it appended or, for a repeat, the reservation's latest. */
  readonly position?: string;
}

export interface DecisionQuery {
  readonly allowed?: boolean;
  /** Only dry runs and what-ifs (true) or only decisions that counted (false). */
  readonly dryRun?: boolean;
  /** RFC 3339 bounds on the decision time (inclusive since, exclusive until). */
  readonly since?: string;
  readonly until?: string;
  readonly requester?: string;
  /** The `next` of the previous page: decisions after it in the page order. */
  readonly after?: string;
  /** Newest first (a log read from the top) instead of oldest first (an export). */
  readonly newestFirst?: boolean;
  /** At most this many (1..1000). */
  readonly limit: number;
}

/** A shared quota covering a namespace, as the namespace's head holds it. */
export interface CoveringSharedQuota {
  readonly kind: SharedQuotaRef['kind'];
  readonly name: string;
  /** A HierarchicalResourceQuota's namespace. */
  readonly namespace?: string;
  readonly hard: RawQuantities;
  /** What this namespace contributes to its use. */
  readonly used: RawQuantities;
}

export interface NamespaceUsage {
  readonly namespace: string;
  readonly version: number;
  /** Global position of the namespace's last event ("0" when it has none). */
  readonly position: string;
  readonly quotas: readonly { readonly name: string; readonly hard: RawQuantities; readonly used: RawQuantities }[];
  /**
   * Now only (not `?at=`): the shared quotas covering the namespace (ClusterResourceQuotas,
   * HierarchicalResourceQuotas), each with its hard limits and what this namespace contributes
   * to its use (the total is the shared quota's own `usage`). Absent when none covers it.
   */
  readonly shared?: readonly CoveringSharedQuota[];
  /**
   * Since when (RFC 3339) the namespace awaits its first count: its quotas' `used` misses the
   * objects admitted before it was managed, and admissions they would charge are refused until the
   * reconciler's listing has counted them. Absent once counted.
   */
  readonly awaitingFirstCountSince?: string;
}

/** What the reconciler found in a namespace: complete for `covers`, listed from `listedAt`. */
export interface ReconcileListing {
  readonly covers: readonly GroupResource[];
  readonly objects: readonly ExistingObject[];
  /** When the listing started, epoch ms (on the ledger's clock; see LedgerOptions.clock). */
  readonly listedAt: number;
  /** Uids the source saw deleted lately (Inventory.deleted): a reservation still waiting for one is released at once. */
  readonly deleted?: readonly string[];
  /** false: it may not be the namespace's first count (Reconcile.countable: its managed label was not in place). */
  readonly countable?: boolean;
}

export interface ReconcileOutcome {
  readonly namespace: string;
  /** The stream version after the corrections. */
  readonly version: number;
  readonly actions: readonly ReconcileAction[];
  /** Quotas whose usage is over hard after adoption. */
  readonly overHard: readonly OverHard[];
  /** Reservations still within their grace period, waiting for their object. */
  readonly pending: number;
  /** Of those, the webhook's whose object the listing does not show (a failed create, or a forged review). */
  readonly unconfirmed: number;
  /** Live reservations of objects of kinds the inventory does not list, by resource. */
  readonly uncovered: readonly Uncovered[];
  /** Listed objects that could not be read, even as the API server stored them: left out of the pass, their reservations as they were. */
  readonly unreadable: readonly Unreadable[];
}

/** Usage as of an instant: the state after the last event recorded at or before `at`. */
export interface NamespaceUsageAt extends NamespaceUsage {
  /** The instant asked for, as given. */
  readonly at: string;
}

/** A namespace's usage as the projection has it, and how fresh that is. */
export interface ProjectedUsage {
  /** The stream version of the namespace now (the head). */
  readonly headVersion: number;
  /** The stream version the projected usage reflects (0: not projected yet). */
  readonly version: number;
  readonly projectedAt?: string;
  /** Usage per quota name, canonical. */
  readonly used: ReadonlyMap<string, RawQuantities>;
}

/** One change of a ResourceQuota's or LimitRange's definition, as the audit API shows it. */
export interface DefinitionChange extends EventView {
  /** The spec before the change (null when it was defined). */
  readonly before: Readonly<Record<string, unknown>> | null;
  /** The spec after the change (null when it was removed). */
  readonly after: Readonly<Record<string, unknown>> | null;
  /** Quota: the hard resources (and `scopes`/`scopeSelector`) that differ; limit range: the limit types. */
  readonly changed: readonly string[];
}

/** A shared quota's usage at an instant, with each covered namespace's part (in name order). */
export interface SharedQuotaUsageAt extends SharedQuotaUsagePoint {
  readonly key: string;
  /** `version`: the namespace's stream version in force at `at`. */
  readonly namespaces: readonly { readonly namespace: string; readonly version: number; readonly used: RawQuantities }[];
  /** The resources whose usage was above hard then (overHardOf). */
  readonly overHard: readonly { readonly resource: string; readonly used: string; readonly hard: string }[];
}
