import { DEFAULT_BODY_LIMIT_BYTES, VARIABLES, type VariableOfKind } from './variables.js';
import { AdmissionConfigProblem, admissionControlConfig, type AdmissionControlConfig, type ReadTextFile } from './admission-config.js';
import { parseCustomResources, type CustomResourceConfig } from './custom-resources.js';
import { ConfigError } from './config-error.js';
import { runtimeRole } from './database-roles.js';
import type { AppConfig, InventoryConfig, TlsConfig } from './config-types.js';

export { ConfigError };
export * from './config-types.js';

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
  if (attrs !== null && !TARGET_SESSION_ATTRS.includes(attrs))
    throw new ConfigError(name, `target_session_attrs must be one of ${TARGET_SESSION_ATTRS.join(', ')}, got "${attrs}"`);
  return raw;
}

type OneOfName = VariableOfKind<'oneOf'>;
type ValueOf<N extends OneOfName> = (typeof VARIABLES)[N]['values'][number];

/** One of the values VARIABLES lists for `name`; when unset, `fallback` (a default that depends on other variables) or the table's. */
function oneOf<N extends OneOfName>(env: Env, name: N, fallback?: ValueOf<N>): ValueOf<N> {
  const allowed: readonly string[] = VARIABLES[name].values;
  const raw = env[name];
  if (raw === undefined || raw === '')
    return fallback ?? (VARIABLES[name] as { default?: ValueOf<N> }).default ?? (allowed[0] as ValueOf<N>);
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
    throw new ConfigError(
      'BODIES_IN_FLIGHT_MAX_BYTES',
      `must be at least BODY_LIMIT_BYTES (${bodyLimitBytes}), or no body of the largest size could ever be read`,
    );
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
    reconcileWebhookConfiguration: env['RECONCILE_WEBHOOK_CONFIGURATION'] || 'quota-ledger',
    reconcileGraceSeconds: integer(env, 'RECONCILE_GRACE_SECONDS'),
    reconcileConcurrency: integer(env, 'RECONCILE_CONCURRENCY'),
    reconcileAfterDeleteSeconds: integer(env, 'RECONCILE_AFTER_DELETE_SECONDS'),
    inventory: inventoryConfig(env),
    awaitFirstCount:
      oneOf(env, 'QUOTA_AWAITS_FIRST_COUNT', env['INVENTORY_SOURCE'] && env['INVENTORY_SOURCE'] !== 'none' ? 'true' : 'false') === 'true',
    ...unauthenticatedWebhook(env),
    namespaceLabelsFrom: oneOf(env, 'NAMESPACE_LABELS_FROM', env['INVENTORY_SOURCE'] === 'kubernetes' ? 'cluster' : 'reviews'),
    tokensFile: env['TOKENS_FILE'] || undefined,
    insecureDev: flag(env, 'QUOTA_LEDGER_INSECURE_DEV'),
    tls: tlsConfig(env),
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_SECOND'),
    rateLimitBurst: integer(env, 'RATE_LIMIT_BURST'),
    webhookUnauthenticatedRate: {
      perSecond: integer(env, 'WEBHOOK_UNAUTHENTICATED_RATE_PER_SECOND'),
      burst: integer(env, 'WEBHOOK_UNAUTHENTICATED_RATE_BURST'),
    },
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
  if (!env['TLS_CERT_FILE'])
    throw new ConfigError(
      'WEBHOOK_UNAUTHENTICATED_PORT',
      'needs TLS_CERT_FILE and TLS_KEY_FILE: the API server calls webhooks over HTTPS only',
    );
  const labels = env['NAMESPACE_LABELS_FROM'] ?? (env['INVENTORY_SOURCE'] === 'kubernetes' ? 'cluster' : 'reviews');
  if (labels !== 'cluster') {
    throw new ConfigError(
      'WEBHOOK_UNAUTHENTICATED_PORT',
      'needs NAMESPACE_LABELS_FROM=cluster: an unauthenticated Namespace review must never record labels (anyone reaching the port could move namespaces between shared quotas)',
    );
  }
  if (env['PORT'] !== undefined && Number(env['PORT']) === port)
    throw new ConfigError('WEBHOOK_UNAUTHENTICATED_PORT', 'must differ from PORT');
  return { webhookUnauthenticatedPort: port };
}

/**
 * DATABASE_URL. Several hosts need REDIS_URL: BullMQ's PostgreSQL backend opens connections of
 * its own from the URL, which neither read a host list nor follow a failover.
 */
function databaseUrl(env: Env): string | undefined {
  const value = postgresUrl(env, 'DATABASE_URL');
  if (value !== undefined && /^[^/]*\/\/([^@/?]*@)?[^/?]*,/.test(value) && !env['REDIS_URL']) {
    throw new ConfigError(
      'REDIS_URL',
      'is required when DATABASE_URL names several hosts: the reconcile queue on PostgreSQL (the default without REDIS_URL) cannot follow a failover',
    );
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
    if (clientCaFile)
      throw new ConfigError('TLS_CLIENT_CA_FILE', 'needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates exist only over HTTPS');
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
      const cache = oneOf(env, 'INVENTORY_CACHE') === 'true';
      const cacheMaxObjects = integer(env, 'INVENTORY_CACHE_MAX_OBJECTS');
      const cacheMaxBytes = integer(env, 'INVENTORY_CACHE_MAX_BYTES');
      const limits = { pageSize, cache, cacheMaxObjects, cacheMaxBytes };
      return { source, inCluster, timeoutMs, ...limits, customKinds, ...(kubeconfigPath ? { kubeconfigPath } : {}) };
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
