import { DEFAULT_BODY_LIMIT_BYTES, VARIABLES, type VariableOfKind } from './variables.js';
import { AdmissionConfigProblem, admissionControlConfig, type AdmissionControlConfig, type ReadTextFile } from './admission-config.js';
import { parseCustomResources, type CustomResourceConfig } from './custom-resources.js';
import { ConfigError } from './config-error.js';
import { runtimeRole } from './database-roles.js';

export { ConfigError };

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
  /** The reservation queue (issue 41): longest wait, bounds, the BestEffortFIFO pass bounds, what blockers hold back, watches, the sweep's period. */
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
      readonly customKinds: readonly CustomResourceConfig[];
    }
  | { readonly source: 'postgres'; readonly databaseUrl: string; readonly relation: string; readonly timeoutMs: number; readonly customKinds: readonly CustomResourceConfig[] }
  | { readonly source: 'http'; readonly url: string; readonly token?: string; readonly timeoutMs: number; readonly customKinds: readonly CustomResourceConfig[] };

type Env = Readonly<Record<string, string | undefined>>;

/** A whole number within the bounds VARIABLES gives `name`; its default when unset or empty. */
function integer(env: Env, name: VariableOfKind<'integer'>): number {
  const { default: fallback, min, max } = VARIABLES[name];
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A URL of one of the schemes VARIABLES gives `name`; undefined when unset or empty. */
function url(env: Env, name: VariableOfKind<'url'>): string | undefined {
  const protocols: readonly string[] = VARIABLES[name].protocols;
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

/** The libpq target_session_attrs values the ledger's host failover reads (libs/ledger database-url.ts). */
const TARGET_SESSION_ATTRS = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'];

/**
 * A PostgreSQL URL, which may name several hosts as libpq's do (`postgres://a:5432,b:5432/db`,
 * which `new URL` refuses): each host is checked in a one-host copy of the URL.
 */
function postgresUrl(env: Env, name: 'DATABASE_URL' | 'DATABASE_READ_URL'): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const parts = /^([a-z][a-z0-9+.-]*:\/\/)([^@/?]*@)?([^/?]*)(.*)$/i.exec(raw);
  const hosts = parts?.[3]?.split(',') ?? [];
  if (!parts || hosts.length < 2) url(env, name);
  else {
    for (const host of hosts) {
      if (host === '') throw new ConfigError(name, 'has an empty host in its host list');
      url({ [name]: `${parts[1]}${parts[2] ?? ''}${host}${parts[4]}` }, name);
    }
  }
  const attrs = new URLSearchParams(raw.split('?')[1] ?? '').get('target_session_attrs');
  if (attrs !== null && !TARGET_SESSION_ATTRS.includes(attrs)) throw new ConfigError(name, `target_session_attrs must be one of ${TARGET_SESSION_ATTRS.join(', ')}, got "${attrs}"`);
  return raw;
}

type OneOfName = VariableOfKind<'oneOf'>;
type ValueOf<N extends OneOfName> = (typeof VARIABLES)[N]['values'][number];

/** One of the values VARIABLES lists for `name`; when unset, `fallback` (a default that depends on other variables) or the table's. */
function oneOf<N extends OneOfName>(env: Env, name: N, fallback?: ValueOf<N>): ValueOf<N> {
  const allowed: readonly string[] = VARIABLES[name].values;
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback ?? (VARIABLES[name] as { default?: ValueOf<N> }).default ?? (allowed[0] as ValueOf<N>);
  if (!allowed.includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as ValueOf<N>;
}

export { DEFAULT_BODY_LIMIT_BYTES };

/** @param read reads the files the environment names (ADMISSION_CONFIG_FILE); the specs pass files from memory */
export function loadConfig(env: Env = process.env, read?: ReadTextFile): AppConfig {
  const bodyLimitBytes = integer(env, 'BODY_LIMIT_BYTES');
  const bodiesInFlightMaxBytes = integer(env, 'BODIES_IN_FLIGHT_MAX_BYTES');
  if (bodiesInFlightMaxBytes < bodyLimitBytes) {
    throw new ConfigError('BODIES_IN_FLIGHT_MAX_BYTES', `must be at least BODY_LIMIT_BYTES (${bodyLimitBytes}), or no body of the largest size could ever be read`);
  }
  return {
    port: integer(env, 'PORT'),
    host: env['HOST'] || '0.0.0.0',
    databaseUrl: databaseUrl(env),
    databaseReadUrl: postgresUrl(env, 'DATABASE_READ_URL'),
    readReplicaWaitMs: integer(env, 'READ_REPLICA_WAIT_MS'),
    requireSynchronousStandby: flag(env, 'DATABASE_REQUIRE_SYNCHRONOUS_STANDBY'),
    databaseRuntimeRole: runtimeRole(env),
    redisUrl: url(env, 'REDIS_URL'),
    bodyLimitBytes,
    bodiesInFlightMaxBytes,
    logLevel: oneOf(env, 'LOG_LEVEL'),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE'),
    admissionBatchMax: integer(env, 'ADMISSION_BATCH_MAX'),
    admissionGroupMax: integer(env, 'ADMISSION_GROUP_MAX'),
    admissionGroupsInFlight: integer(env, 'ADMISSION_GROUPS_IN_FLIGHT'),
    admissionRetryMax: integer(env, 'ADMISSION_RETRY_MAX'),
    statementTimeoutMs: integer(env, 'STATEMENT_TIMEOUT_MS'),
    reservationTtlMaxSeconds: integer(env, 'RESERVATION_TTL_MAX_SECONDS'),
    queue: {
      waitMaxSeconds: integer(env, 'QUEUE_WAIT_MAX_SECONDS'),
      perNamespaceMax: integer(env, 'QUEUE_PER_NAMESPACE_MAX'),
      totalMax: integer(env, 'QUEUE_TOTAL_MAX'),
      passMax: integer(env, 'QUEUE_PASS_MAX'),
      passSeconds: integer(env, 'QUEUE_PASS_SECONDS'),
      blockSharePercent: integer(env, 'QUEUE_BLOCK_SHARE_PERCENT'),
      watchesPerPrincipalMax: integer(env, 'QUEUE_WATCHES_PER_PRINCIPAL_MAX'),
      sweepIntervalMs: integer(env, 'QUEUE_SWEEP_INTERVAL_MS'),
    },
    quotasPerNamespaceMax: integer(env, 'QUOTAS_PER_NAMESPACE_MAX'),
    limitRangesPerNamespaceMax: integer(env, 'LIMIT_RANGES_PER_NAMESPACE_MAX'),
    sharedQuotaNamespacesMax: integer(env, 'SHARED_QUOTA_NAMESPACES_MAX'),
    quotaWarningPercent: integer(env, 'QUOTA_WARNING_PERCENT'),
    projectionBatchSize: integer(env, 'PROJECTION_BATCH_SIZE'),
    projectionPollMs: integer(env, 'PROJECTION_POLL_MS'),
    projectionStepMax: integer(env, 'PROJECTION_STEP_MAX'),
    projectionCoalesceMs: integer(env, 'PROJECTION_COALESCE_MS'),
    snapshotEvery: integer(env, 'SNAPSHOT_EVERY'),
    reconcileIntervalSeconds: reconcileInterval(env),
    reconcileWatch: oneOf(env, 'RECONCILE_WATCH') === 'true',
    reconcileManagedLabel: oneOf(env, 'RECONCILE_MANAGED_LABEL') === 'true',
    reconcileGraceSeconds: integer(env, 'RECONCILE_GRACE_SECONDS'),
    reconcileConcurrency: integer(env, 'RECONCILE_CONCURRENCY'),
    reconcileAfterDeleteSeconds: integer(env, 'RECONCILE_AFTER_DELETE_SECONDS'),
    inventory: inventoryConfig(env),
    awaitFirstCount: oneOf(env, 'QUOTA_AWAITS_FIRST_COUNT', env['INVENTORY_SOURCE'] && env['INVENTORY_SOURCE'] !== 'none' ? 'true' : 'false') === 'true',
    ...unauthenticatedWebhook(env),
    namespaceLabelsFrom: oneOf(env, 'NAMESPACE_LABELS_FROM', env['INVENTORY_SOURCE'] === 'kubernetes' ? 'cluster' : 'reviews'),
    tokensFile: env['TOKENS_FILE'] || undefined,
    insecureDev: flag(env, 'QUOTA_LEDGER_INSECURE_DEV'),
    tls: tlsConfig(env),
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_SECOND'),
    rateLimitBurst: integer(env, 'RATE_LIMIT_BURST'),
    webhookUnauthenticatedRate: { perSecond: integer(env, 'WEBHOOK_UNAUTHENTICATED_RATE_PER_SECOND'), burst: integer(env, 'WEBHOOK_UNAUTHENTICATED_RATE_BURST') },
    requestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS'),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS'),
    shutdownDrainSeconds: integer(env, 'SHUTDOWN_DRAIN_SECONDS'),
    metricsPort: integer(env, 'METRICS_PORT'),
    admission: admissionConfig(env, read),
  };
}

function unauthenticatedWebhook(env: Env): { webhookUnauthenticatedPort?: number } {
  const port = integer(env, 'WEBHOOK_UNAUTHENTICATED_PORT');
  if (port === 0) return {};
  if (!env['TLS_CERT_FILE']) throw new ConfigError('WEBHOOK_UNAUTHENTICATED_PORT', 'needs TLS_CERT_FILE and TLS_KEY_FILE: the API server calls webhooks over HTTPS only');
  const labels = env['NAMESPACE_LABELS_FROM'] ?? (env['INVENTORY_SOURCE'] === 'kubernetes' ? 'cluster' : 'reviews');
  if (labels !== 'cluster') {
    throw new ConfigError(
      'WEBHOOK_UNAUTHENTICATED_PORT',
      'needs NAMESPACE_LABELS_FROM=cluster: an unauthenticated Namespace review must never record labels (anyone reaching the port could move namespaces between shared quotas)',
    );
  }
  if (env['PORT'] !== undefined && Number(env['PORT']) === port) throw new ConfigError('WEBHOOK_UNAUTHENTICATED_PORT', 'must differ from PORT');
  return { webhookUnauthenticatedPort: port };
}

/**
 * DATABASE_URL. Several hosts need REDIS_URL: BullMQ's PostgreSQL backend opens connections of
 * its own from the URL, which neither read a host list nor follow a failover.
 */
function databaseUrl(env: Env): string | undefined {
  const value = postgresUrl(env, 'DATABASE_URL');
  if (value !== undefined && /^[^/]*\/\/([^@/?]*@)?[^/?]*,/.test(value) && !env['REDIS_URL']) {
    throw new ConfigError('REDIS_URL', 'is required when DATABASE_URL names several hosts: the reconcile queue on PostgreSQL (the default without REDIS_URL) cannot follow a failover');
  }
  return value;
}

function admissionConfig(env: Env, read: ReadTextFile | undefined): AdmissionControlConfig {
  try {
    return admissionControlConfig(env, read);
  } catch (error) {
    if (error instanceof AdmissionConfigProblem) throw new ConfigError(error.variable, error.message);
    throw error;
  }
}

/** true, false, 1 or 0 (VARIABLES: kind `flag`); false when unset. */
function flag(env: Env, name: VariableOfKind<'flag'>): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return false;
  if (!['true', 'false', '1', '0'].includes(raw)) throw new ConfigError(name, `must be one of true, false, 1, 0, got "${raw}"`);
  return raw === 'true' || raw === '1';
}

function tlsConfig(env: Env): TlsConfig | undefined {
  const certFile = env['TLS_CERT_FILE'] || undefined;
  const keyFile = env['TLS_KEY_FILE'] || undefined;
  const clientCaFile = env['TLS_CLIENT_CA_FILE'] || undefined;
  if (!certFile && !keyFile) {
    if (clientCaFile) throw new ConfigError('TLS_CLIENT_CA_FILE', 'needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates exist only over HTTPS');
    return undefined;
  }
  if (!certFile) throw new ConfigError('TLS_CERT_FILE', 'is required when TLS_KEY_FILE is set');
  if (!keyFile) throw new ConfigError('TLS_KEY_FILE', 'is required when TLS_CERT_FILE is set');
  const clientCertRole = oneOf(env, 'TLS_CLIENT_CERT_ROLE');
  const clientCertTrustUserInfo = oneOf(env, 'TLS_CLIENT_CERT_TRUST_USER_INFO') === 'true';
  return { certFile, keyFile, clientCaFile, clientCertRole, clientCertTrustUserInfo };
}

/** The zero-setup start (`npm start`): where it keeps its embedded PostgreSQL and development token. */
export interface StandaloneConfig {
  /** Project-local state directory (git-ignored): embedded PostgreSQL data, the development token. */
  readonly dataDir: string;
  /** Port of the embedded PostgreSQL (127.0.0.1 only). */
  readonly embeddedPostgresPort: number;
  /** The API's address: 127.0.0.1 unless HOST says otherwise (a development start stays local). */
  readonly apiHost: string;
}

export function loadStandaloneConfig(env: Env = process.env): StandaloneConfig {
  return {
    dataDir: env['QUOTA_LEDGER_DATA_DIR'] || '.quota-ledger',
    embeddedPostgresPort: integer(env, 'EMBEDDED_POSTGRES_PORT'),
    apiHost: env['HOST'] || '127.0.0.1',
  };
}

/** A copy of the environment for a supervised child process (the one place that hands env on). */
export function childEnvironment(overrides: Readonly<Record<string, string | undefined>>, env: Env = process.env): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...env, ...overrides })) if (value !== undefined) merged[name] = value;
  return merged;
}

function required(env: Env, name: string, why: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') throw new ConfigError(name, `is required ${why}`);
  return raw;
}

/** Watched, the pass over every namespace is a safety net: rarer unless set. */
const WATCHED_INTERVAL_SECONDS = 600;

function reconcileInterval(env: Env): number {
  const set = env['RECONCILE_INTERVAL_SECONDS'] !== undefined && env['RECONCILE_INTERVAL_SECONDS'] !== '';
  const watched = oneOf(env, 'INVENTORY_SOURCE') === 'kubernetes' && oneOf(env, 'RECONCILE_WATCH') === 'true';
  return !set && watched ? WATCHED_INTERVAL_SECONDS : integer(env, 'RECONCILE_INTERVAL_SECONDS');
}

function inventoryConfig(env: Env): InventoryConfig {
  const source = oneOf(env, 'INVENTORY_SOURCE');
  const timeoutMs = integer(env, 'INVENTORY_TIMEOUT_MS');
  // Checked whatever the source, so that a typo stops the process before a source is chosen.
  const customKinds = customResources(env);
  switch (source) {
    case 'none':
      return { source };
    case 'kubernetes': {
      const inCluster = oneOf(env, 'INVENTORY_IN_CLUSTER') === 'true';
      const kubeconfigPath = env['INVENTORY_KUBECONFIG'] || undefined;
      const pageSize = integer(env, 'INVENTORY_PAGE_SIZE');
      return { source, inCluster, timeoutMs, pageSize, customKinds, ...(kubeconfigPath ? { kubeconfigPath } : {}) };
    }
    case 'postgres':
      return {
        source,
        databaseUrl: url(env, 'INVENTORY_DATABASE_URL') ?? required(env, 'INVENTORY_DATABASE_URL', 'when INVENTORY_SOURCE=postgres'),
        relation: required(env, 'INVENTORY_RELATION', 'when INVENTORY_SOURCE=postgres (a table or view: name or schema.name)'),
        timeoutMs,
        customKinds,
      };
    case 'http': {
      const token = env['INVENTORY_TOKEN'] || undefined;
      return {
        source,
        url: url(env, 'INVENTORY_URL') ?? required(env, 'INVENTORY_URL', 'when INVENTORY_SOURCE=http'),
        timeoutMs,
        customKinds,
        ...(token ? { token } : {}),
      };
    }
  }
}

/** CUSTOM_RESOURCES: a comma list of `resource.group/version=Kind`. */
function customResources(env: Env): CustomResourceConfig[] {
  const entries = (env['CUSTOM_RESOURCES'] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const parsed = parseCustomResources(entries);
  if (typeof parsed === 'string') throw new ConfigError('CUSTOM_RESOURCES', parsed);
  return parsed;
}
