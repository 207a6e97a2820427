import { DataSource, MigrationExecutor, type DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../../migrations/index.js';
import { parseDatabaseUrl } from './database-url.js';
import { LedgerEventEntity } from '../entities/ledger-event.entity.js';
import { failoverClientClass, type HostFailoverOptions } from './host-failover.js';
import { LedgerPoolClient } from './pool-client.js';

export const ENTITIES = [LedgerEventEntity];

/** How long a connection of a multi-host pool waits for its host before trying another, in ms (absent connect_timeout). */
const FAILOVER_CONNECT_TIMEOUT_MS = 5000;

export interface DataSourceSettings {
  readonly url: string;
  /** Connections this process may hold. */
  readonly poolSize?: number;
  readonly applicationName?: string;
  /**
   * Longest any statement may run, and a transaction may sit idle, in ms (a session setting of
   * every pooled connection; absent: unbounded). A replica that stalls mid-transaction cannot
   * hold the head row's lock, or SERIALIZABLE's bookkeeping, for longer.
   */
  readonly statementTimeoutMs?: number;
  /** Told when connections move to another host of a multi-host `url` (host-failover.ts). */
  readonly onHostChosen?: HostFailoverOptions['onHostChosen'];
}

/**
 * The one place a TypeORM data source is described (LedgerModule's TypeOrmModule, the
 * projection worker, the reconciler, the migration, the tests and the benchmark all use it).
 * Never `synchronize`: the schema comes from migrations/, run once per deployment. A URL of
 * several hosts, or with `target_session_attrs` (libpq's syntax, which pg 8 does not read), gets
 * a pool whose connections go to the host that matches (host-failover.ts).
 */
export function buildDataSourceOptions(settings: DataSourceSettings): DataSourceOptions {
  const timeout =
    settings.statementTimeoutMs === undefined
      ? {}
      : { statement_timeout: settings.statementTimeoutMs, idle_in_transaction_session_timeout: settings.statementTimeoutMs };
  const url = parseDatabaseUrl(settings.url);
  // With several hosts, a connection to one that does not answer (a machine gone: no refusal, no
  // reset) must give up, so that the next one probes the others: libpq's connect_timeout, else 5 s.
  // Every connection's errors are listened to (pool-client.ts); the failover client is one too.
  const client = url.needsFailover
    ? {
        Client: failoverClientClass(url, settings.onHostChosen ? { onHostChosen: settings.onHostChosen } : {}),
        connectionTimeoutMillis: url.connectTimeoutMs ?? FAILOVER_CONNECT_TIMEOUT_MS,
      }
    : { Client: LedgerPoolClient };
  return {
    type: 'postgres',
    url: url.needsFailover ? url.urlFor(url.hosts[0] as (typeof url.hosts)[number]) : settings.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: settings.applicationName ?? 'quota-ledger',
    // JIT off: every statement here is a short keyed read or write, but the planner prices each
    // jsonb row set at 100 rows, so a group's keyed read crossed jit_above_cost and compiled for
    // a hundred times longer than it ran (docs/benchmarks-history.md, "Group commit across namespaces").
    extra: { max: settings.poolSize ?? 10, options: '-c jit=off', ...timeout, ...client },
  };
}

/** A data source on these settings, initialized: how a process without Nest gets its database. */
export async function openDataSource(settings: DataSourceSettings): Promise<DataSource> {
  return new DataSource(buildDataSourceOptions(settings)).initialize();
}

/** Any 64-bit number the project owns: the session-level advisory lock migrations run under. */
export const MIGRATION_LOCK_KEY = 7_165_430_219_812_345n;

/**
 * Brings the schema up to date under `pg_advisory_lock`, so two replicas or deploy jobs
 * starting at once cannot both migrate: the second waits, then finds nothing pending. The
 * migrations run on the connection that holds the lock (each in its own transaction).
 * Returns the names of the migrations applied.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    try {
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = 'each';
      return (await executor.executePendingMigrations()).map((migration) => migration.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => undefined);
    }
  } finally {
    await runner.release();
  }
}
