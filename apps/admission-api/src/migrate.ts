import 'reflect-metadata';
import { loadConfig } from '@quota/config';
import { migrateQueueSchema } from '@quota/jobs';
import { ensureLedgerPartitions, grantRuntimeRole, openDataSource, resolveDatabaseUrl, runMigrationsLocked } from '@quota/ledger';
import pg from 'pg';

/**
 * `npm run migrate`: brings DATABASE_URL's schema up to date, creating the database first if
 * it does not exist. A deployment step; the API never migrates at start, and the migrations run
 * under a PostgreSQL advisory lock, so two of these started at once cannot race over the schema.
 */
const config = loadConfig();
if (!config.databaseUrl) {
  console.error('DATABASE_URL is not set: nothing to migrate');
  process.exit(2);
}

async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) return;
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
        console.log(`created database ${name}`);
      } catch (error) {
        // Another migration started at the same moment created it: 42P04 if it had committed,
        // a unique violation on pg_database if both were creating it at once.
        const { code, constraint } = error as { code?: string; constraint?: string };
        if (code !== '42P04' && !(code === '23505' && constraint === 'pg_database_datname_index')) throw error;
      }
    }
  } finally {
    await client.end();
  }
}

async function withClient(url: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: 'quota-ledger-migrate' });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

// A URL of several hosts migrates the one it wants now (target_session_attrs=read-write: the primary).
const databaseUrl = await resolveDatabaseUrl(config.databaseUrl, 'postgres');
await ensureDatabase(databaseUrl);
const dataSource = await openDataSource({ url: databaseUrl, poolSize: 1, applicationName: 'quota-ledger-migrate' });
try {
  // Under an advisory lock: two deploy jobs or replicas starting at once do not both migrate.
  const applied = await runMigrationsLocked(dataSource);
  console.log(applied.length === 0 ? 'schema is up to date' : `applied ${applied.join(', ')}`);
  // Each deploy also makes this month's and the next months' partitions of ledger_events. Not a
  // reason to fail the deploy: inserts never need them, and the projection worker tries hourly.
  try {
    const made = await ensureLedgerPartitions(dataSource);
    if (made.length > 0) console.log(`made partitions ${made.join(', ')}`);
  } catch (error) {
    console.warn(
      `could not make the ledger's partitions ahead now (${error instanceof Error ? error.message : String(error)}); the projection worker tries again hourly`,
    );
  }
  // The apps' own role, when they have one: what they need of the schema as it is now, and no
  // more. It runs no DDL, so BullMQ's tables (the queue without REDIS_URL) are made here too.
  const runtimeRole = config.databaseRuntimeRole;
  if (runtimeRole) {
    if (!config.redisUrl) await withClient(databaseUrl, migrateQueueSchema);
    const granted = await grantRuntimeRole(dataSource, runtimeRole);
    console.log(`granted ${runtimeRole} what the apps need on ${granted.relations} relations`);
    if (granted.unknown.length > 0)
      console.warn(`gave ${runtimeRole} nothing on ${granted.unknown.join(', ')}: libs/ledger runtime-role.ts does not name them`);
  }
} finally {
  await dataSource.destroy();
}
