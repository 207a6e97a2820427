import type { AdmissionPlugin, LimitedResource } from '@quota/domain';
import type { DataSourceSettings } from './database/data-source.js';
import type { LedgerOptions } from './ledger.types.js';
import type { ProjectionRunnerOptions } from './projection/projection-runner.js';
import type { ReadPathOptions } from './database/read-path.js';

/**
 * The one mapping from a process's configuration to the ledger's options. Every process (the
 * admission API, the projection worker, the reconciler) gets its settings here, from its
 * configuration and its role, so an option set by the operator reaches every process that acts
 * on it: one mapping, not one per main.ts.
 */

/** The process a ledger is built for: it chooses the pool, the application name and the read replica. */
export type LedgerRole = 'api' | 'reconciler' | 'projection-worker' | 'projection-rebuild';

/**
 * What the ledger reads of the application's configuration (libs/config's AppConfig has these
 * fields, under these names: the ledger takes the shape, not the lib, so its only imports stay
 * the domain and the contract).
 */
export interface LedgerConfig {
  readonly databaseUrl: string | undefined;
  readonly databaseReadUrl: string | undefined;
  readonly readReplicaWaitMs: number;
  readonly databasePoolSize: number;
  readonly statementTimeoutMs: number;
  readonly admissionBatchMax: number;
  readonly admissionGroupMax: number;
  readonly admissionGroupsInFlight: number;
  readonly admissionRetryMax: number;
  readonly quotasPerNamespaceMax: number;
  readonly limitRangesPerNamespaceMax: number;
  readonly quotaWarningPercent: number;
  readonly sharedQuotaNamespacesMax: number;
  readonly awaitFirstCount: boolean;
  readonly queue: {
    readonly passMax: number;
    readonly passSeconds: number;
    readonly perNamespaceMax: number;
    readonly blockSharePercent: number;
    readonly totalMax: number;
  };
  readonly admission: { readonly plugins: readonly AdmissionPlugin[]; readonly limitedResources: readonly LimitedResource[] };
  readonly reconcileConcurrency: number;
  readonly projectionBatchSize: number;
  readonly projectionPollMs: number;
  readonly projectionStepMax: number;
  readonly projectionCoalesceMs: number;
  readonly snapshotEvery: number;
}

/** What a process tells the ledger that is not configuration: where its warnings go. */
export interface LedgerHooks {
  readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** What a process configures the ledger with: its database, the command side's limits, reads, and the projection. */
export interface LedgerSettings {
  readonly database: DataSourceSettings;
  readonly commands?: LedgerOptions;
  /** A hot standby of `database` for history reads (DATABASE_READ_URL), and how long a read waits for it to replay a position. */
  readonly reads?: { readonly database?: DataSourceSettings; readonly waitMs?: number; readonly log?: ReadPathOptions['log'] };
  readonly projection?: {
    readonly batchSize?: number;
    readonly snapshotEvery?: number;
    /** Told of a snapshot that could not be written. */
    readonly onError?: (error: unknown) => void;
  } & Partial<Pick<ProjectionRunnerOptions, 'pollMs' | 'stepMax' | 'coalesceMs'>>;
}

/** What each role is called in a message (and in pg_stat_activity, below). */
const ROLE_NAMES: Record<LedgerRole, string> = {
  api: 'the admission API',
  reconciler: 'the reconciler',
  'projection-worker': 'the projection worker',
  'projection-rebuild': 'the projection rebuild',
};

const APPLICATION_NAMES: Record<LedgerRole, string> = {
  api: 'quota-ledger-api',
  reconciler: 'quota-ledger-reconciler',
  'projection-worker': 'quota-ledger-projection',
  'projection-rebuild': 'quota-ledger-projection',
};

/**
 * Connections per role. The projection worker holds four: the LISTEN, a step's transaction, the
 * snapshot written after its step (snapshot-writer.ts), and the lag reads beside them. The
 * reconciler one per concurrent namespace job, and at least two (a job and a definition sync).
 */
function poolSizeOf(config: LedgerConfig, role: LedgerRole): number {
  if (role === 'api') return config.databasePoolSize;
  if (role === 'reconciler') return Math.max(2, config.reconcileConcurrency);
  return 4;
}

/** The database settings of a role. A rebuild replays the whole ledger offline: its reset empties every read model in one statement, so it runs without the statement timeout. */
function databaseOf(config: LedgerConfig, role: LedgerRole): DataSourceSettings {
  if (!config.databaseUrl) throw new Error(`DATABASE_URL is not set: ${ROLE_NAMES[role]} needs the ledger database`);
  return {
    url: config.databaseUrl,
    poolSize: poolSizeOf(config, role),
    applicationName: APPLICATION_NAMES[role],
    ...(role === 'projection-rebuild' ? {} : { statementTimeoutMs: config.statementTimeoutMs }),
  };
}

/** The command side's options: the same in every role, since the reconciler's syncs and releases decide as the API does. */
function commandsOf(config: LedgerConfig, role: LedgerRole): LedgerOptions {
  return {
    batchSizeMax: config.admissionBatchMax,
    groupCommandsMax: config.admissionGroupMax,
    groupsInFlightMax: Math.min(config.admissionGroupsInFlight, poolSizeOf(config, role)),
    retryMax: config.admissionRetryMax,
    quotasPerNamespaceMax: config.quotasPerNamespaceMax,
    limitRangesPerNamespaceMax: config.limitRangesPerNamespaceMax,
    quotaWarningPercent: config.quotaWarningPercent,
    admissionPlugins: config.admission.plugins,
    limitedResources: config.admission.limitedResources,
    sharedQuotaNamespacesMax: config.sharedQuotaNamespacesMax,
    awaitFirstCount: config.awaitFirstCount,
    queuePolicy: {
      passMax: config.queue.passMax,
      passMs: config.queue.passSeconds * 1000,
      perNamespaceMax: config.queue.perNamespaceMax,
      blockSharePercent: config.queue.blockSharePercent,
    },
    queueTotalMax: config.queue.totalMax,
  };
}

/** The one mapping from configuration to the ledger's options. */
export function ledgerSettings(config: LedgerConfig, role: LedgerRole, hooks: LedgerHooks = {}): LedgerSettings {
  const database = databaseOf(config, role);
  const replica =
    role === 'api' && config.databaseReadUrl
      ? { database: { ...database, url: config.databaseReadUrl, applicationName: 'quota-ledger-api-reads' } }
      : {};
  const warn = (msg: string) => (error: unknown) =>
    hooks.log?.('warn', msg, { error: error instanceof Error ? error.message : String(error) });
  return {
    database,
    commands: commandsOf(config, role),
    reads: { ...replica, waitMs: config.readReplicaWaitMs, ...(hooks.log ? { log: hooks.log } : {}) },
    projection: {
      batchSize: config.projectionBatchSize,
      snapshotEvery: config.snapshotEvery,
      pollMs: config.projectionPollMs,
      stepMax: config.projectionStepMax,
      coalesceMs: config.projectionCoalesceMs,
      onError: warn('writing a usage snapshot failed; the next one is due after SNAPSHOT_EVERY more events'),
    },
  };
}
