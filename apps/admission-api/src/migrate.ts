import 'reflect-metadata';
import { loadConfig } from '@quota/config';
import { buildDataSourceOptions } from '@quota/ledger';
import pg from 'pg';
import { DataSource } from 'typeorm';

/**
 * `npm run migrate`: brings DATABASE_URL's schema up to date, creating the database first if
 * it does not exist. A deployment step, run once; the API never migrates at start, so
 * replicas cannot race over the schema.
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
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      console.log(`created database ${name}`);
    }
  } finally {
    await client.end();
  }
}

await ensureDatabase(config.databaseUrl);
const dataSource = new DataSource(buildDataSourceOptions({ url: config.databaseUrl, poolSize: 1, applicationName: 'quota-ledger-migrate' }));
await dataSource.initialize();
try {
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  console.log(applied.length === 0 ? 'schema is up to date' : `applied ${applied.map((m) => m.name).join(', ')}`);
} finally {
  await dataSource.destroy();
}
