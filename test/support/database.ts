import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, runMigrationsLocked } from '@quota/ledger';

/** The server the tests use; CI and developers' machines run PostgreSQL here. */
export const TEST_PG_ADMIN_URL = process.env['TEST_DATABASE_ADMIN_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh database of the test's own (never a shared name), dropped afterwards. */
export async function createTestDatabase(prefix = 'qltest'): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** A fresh database with every migration applied, and an initialized data source on it. */
export async function createMigratedDatabase(prefix?: string): Promise<TestDatabase & { dataSource: DataSource }> {
  const database = await createTestDatabase(prefix);
  const dataSource = new DataSource(buildDataSourceOptions({ url: database.url, poolSize: 4 }));
  await dataSource.initialize();
  await runMigrationsLocked(dataSource);
  return {
    ...database,
    dataSource,
    drop: async () => {
      await dataSource.destroy();
      await database.drop();
    },
  };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
