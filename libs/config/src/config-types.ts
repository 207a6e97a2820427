import type { AdmissionControlConfig } from './admission-config.js';
import type { CustomResourceConfig } from './custom-resources.js';

/** The environment, read once at boot into a typed object. Only this lib reads `process.env`; a bad value stops the process with a message naming the variable. */
export interface AppConfig {
  /** HTTP port of the admission API. */
  readonly port: number;
  readonly host: string;
  /** PostgreSQL connection string; undefined: the apps refuse to start, `npm start` runs an embedded PostgreSQL. */
  readonly databaseUrl: string | undefined;
  /** A PostgreSQL hot standby of the ledger's database (streaming replication): audit, as-of, series, export and dashboard reads go there. */
  readonly databaseReadUrl: string | undefined;
  /** Longest a read with `?minPosition=` waits for the standby to replay that position before the primary answers, in ms. */
  readonly readReplicaWaitMs: number;
  /**
   * DATABASE_REQUIRE_SYNCHRONOUS_STANDBY=true: an admission counts only once a synchronous
   * standby holds it. The API refuses to start, and /readyz fails `[-]synchronous-standby`, unless
   * the database says so (synchronous_standby_names set, synchronous_commit on or remote_apply, a
   * sync or quorum standby streaming).
   */
  readonly requireSynchronousStandby: boolean;
  /** DATABASE_RUNTIME_ROLE: the apps' role, granted by the migration; where set, the apps run no DDL (BullMQ's tables too are the migration's). */
  readonly databaseRuntimeRole: string | undefined;
  /** Redis connection string for BullMQ; undefined means BullMQ's PostgreSQL backend. */
  readonly redisUrl: string | undefined;
  /** Largest request body accepted, in bytes (Kubernetes accepts requests of ~3 MiB). */
  readonly bodyLimitBytes: number;
  /** Bytes of request bodies the API reads at once, all requests together; past it, 429. */
  readonly bodiesInFlightMaxBytes: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** PostgreSQL connections this process may hold (throughput peaks at 4–16 on 2 cores). */
  readonly databasePoolSize: number;
  /** Most admissions for one namespace decided together in one transaction. */
  readonly admissionBatchMax: number;
  /** Most commands of all namespaces in one group commit (one transaction). */
  readonly admissionGroupMax: number;
  /** Most group commits in flight at once, each on one pooled connection. */
  readonly admissionGroupsInFlight: number;
  /** Attempts of one admission transaction (serialization conflicts) before answering 503. */
  readonly admissionRetryMax: number;
  /** Longest any ledger statement may run, in milliseconds. */
  readonly statementTimeoutMs: number;
  /** Longest TTL a REST reservation may ask for, in seconds. */
  readonly reservationTtlMaxSeconds: number;
  /** The reservation queue: longest wait, bounds, the BestEffortFIFO pass bounds, what blockers hold back, watches, the sweep's period. */
  readonly queue: {
    readonly waitMaxSeconds: number;
    readonly perNamespaceMax: number;
    readonly totalMax: number;
    readonly passMax: number;
    readonly passSeconds: number;
    readonly blockSharePercent: number;
    readonly watchesPerPrincipalMax: number;
    readonly sweepIntervalMs: number;
  };
  /** Most ResourceQuotas one namespace may hold (each admission there reads and rewrites them all). */
  readonly quotasPerNamespaceMax: number;
  /** Most LimitRanges one namespace may hold. */
  readonly limitRangesPerNamespaceMax: number;
  /** Most namespaces one ClusterResourceQuota or HierarchicalResourceQuota may cover when it is defined (each admission there rewrites its head). */
  readonly sharedQuotaNamespacesMax: number;
  /** An allowed admission warns (AdmissionReview warnings, REST Warning headers) of every charged resource at or above this percent of its hard limit; 0: never. */
  readonly quotaWarningPercent: number;
  /** Events the projection worker applies per transaction. */
  readonly projectionBatchSize: number;
  /** The projection worker's polling fallback when no notification arrives, in ms. */
  readonly projectionPollMs: number;
  /** Most events the projection worker applies in one step (smaller, steadier steps compete less with admissions). */
  readonly projectionStepMax: number;
  /** How long the projection worker lets notifications gather before a step, in ms. */
  readonly projectionCoalesceMs: number;
  /** Events between two full snapshots of a namespace: where a fold starts for what the usage-at-every-version read model does not cover yet. */
  readonly snapshotEvery: number;
  /** How often every namespace is reconciled, in seconds. */
  readonly reconcileIntervalSeconds: number;
  /** A reservation younger than this is never released as stale, in seconds. */
  readonly reconcileGraceSeconds: number;
  /** RECONCILE_WATCH: settle on watch events (kubernetes inventory only). */
  readonly reconcileWatch: boolean;
  /** RECONCILE_MANAGED_LABEL: the managed label on the namespaces the ledger manages (kubernetes inventory only). */
  readonly reconcileManagedLabel: boolean;
  /** RECONCILE_WEBHOOK_CONFIGURATION: the ValidatingWebhookConfiguration whose rules the reconciler checks the quotas' object counts against. */
  readonly reconcileWebhookConfiguration: string;
  /** Namespaces reconciled at once by one reconciler process. */
  readonly reconcileConcurrency: number;
  /** Delay of the prompt reconcile after an admitted DELETE, in seconds. */
  readonly reconcileAfterDeleteSeconds: number;
  readonly inventory: InventoryConfig;
  /**
   * A namespace made managed (its first quota, limit range or shared quota) awaits its first
   * count: its quotas refuse what they would charge until the reconciler's listing has adopted the
   * objects admitted before (QUOTA_AWAITS_FIRST_COUNT; default: whenever an inventory is
   * configured, for without one nothing can ever count them).
   */
  readonly awaitFirstCount: boolean;
  /**
   * Where a Namespace's labels are taken from (NAMESPACE_LABELS_FROM): `cluster`, the stored
   * object, read back by the reconciler (the webhook's review records nothing: it is validated
   * before it is stored and may yet fail); `reviews`, the webhook's review as it passes, where no
   * reconciler lists the cluster's Namespaces. Default: `cluster` with INVENTORY_SOURCE=kubernetes.
   */
  readonly namespaceLabelsFrom: 'cluster' | 'reviews';
  /**
   * A second HTTPS listener for managed control planes, whose API servers present no credential
   * to a webhook (WEBHOOK_UNAUTHENTICATED_PORT): it serves the webhook routes only, to anyone who
   * reaches it, as the principal `unauthenticated:kube-apiserver`. Needs TLS and
   * NAMESPACE_LABELS_FROM=cluster. Unset: no such listener.
   */
  readonly webhookUnauthenticatedPort?: number;
  /** YAML file of hashed bearer tokens (TOKENS_FILE); see docs/security.md. */
  readonly tokensFile: string | undefined;
  /**
   * QUOTA_LEDGER_INSECURE_DEV=true: a development machine. Without it the API refuses to start
   * with no tokens configured; with it and no TOKENS_FILE, every caller is an anonymous admin.
   */
  readonly insecureDev: boolean;
  /** HTTPS when set (TLS_CERT_FILE + TLS_KEY_FILE), reloaded when the files change. */
  readonly tls: TlsConfig | undefined;
  /** Requests per second one client (an authenticated principal, else an address) may make; 0 turns the limit off. */
  readonly rateLimitPerSecond: number;
  /** Requests one client may make at once above its rate before 429. */
  readonly rateLimitBurst: number;
  /** Reviews per second (and at once) one address may send to the unauthenticated webhook listener; perSecond 0 turns it off. */
  readonly webhookUnauthenticatedRate: { readonly perSecond: number; readonly burst: number };
  /** Longest an HTTP request may take from its first byte to the answer, in ms. */
  readonly requestTimeoutMs: number;
  /** Longest a graceful shutdown waits for requests and jobs in flight, in ms (the API: once its drain is over). */
  readonly shutdownTimeoutMs: number;
  /**
   * After SIGTERM the API keeps serving this long, in seconds, while /readyz answers
   * `[-]shutdown` so that load balancers and endpoints stop sending to it; then it closes.
   */
  readonly shutdownDrainSeconds: number;
  /** Port of /metrics and /healthz of the projection worker and the reconciler (0 = none). */
  readonly metricsPort: number;
  /** The admission plugins that run and their configuration (ADMISSION_PLUGINS_ENABLE / _DISABLE, ADMISSION_CONFIG_FILE). */
  readonly admission: AdmissionControlConfig;
}

export interface TlsConfig {
  readonly certFile: string;
  readonly keyFile: string;
  /** When set, client certificates signed by this CA authenticate (as the kube-apiserver does). */
  readonly clientCaFile: string | undefined;
  /** Role a verified client certificate gets. */
  readonly clientCertRole: 'admin' | 'admission' | 'auditor' | 'webhook';
  /** A client certificate relays users' requests (kube-apiserver): its reviews' userInfo is recorded as "on behalf of". */
  readonly clientCertTrustUserInfo: boolean;
}

/** Where the reconciler lists the objects that exist (INVENTORY_SOURCE and its variables). */
export type InventoryConfig =
  | { readonly source: 'none' }
  | {
      readonly source: 'kubernetes';
      readonly kubeconfigPath?: string;
      readonly inCluster: boolean;
      readonly timeoutMs: number;
      /** Objects per page of a list (`limit`), each list followed by `continue` to its end (INVENTORY_PAGE_SIZE). */
      readonly pageSize: number;
      /** Listings from watch-fed caches, one per kind (INVENTORY_CACHE), and each kind cache's ceiling. */
      readonly cache: boolean;
      readonly cacheMaxObjects: number;
      readonly cacheMaxBytes: number;
      readonly customKinds: readonly CustomResourceConfig[];
    }
  | {
      readonly source: 'postgres';
      readonly databaseUrl: string;
      readonly relation: string;
      readonly timeoutMs: number;
      readonly customKinds: readonly CustomResourceConfig[];
    }
  | {
      readonly source: 'http';
      readonly url: string;
      readonly token?: string;
      readonly timeoutMs: number;
      readonly customKinds: readonly CustomResourceConfig[];
    };
