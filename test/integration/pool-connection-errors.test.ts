import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataSourceOptions } from '@quota/ledger';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { hammerWhileTerminating } from '../support/terminate.js';

// The CI run of 2026-11-28 lost its API to one of these: an 'error' event of a pooled connection,
// emitted between pg-pool's checkout and TypeORM's listener (libs/ledger/src/database/pool-client.ts).
describe('the ledger pool when the server ends its sessions', () => {
  const applicationName = 'quota-ledger-pool-errors';
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('qlpoolerr');
    dataSource = await new DataSource(buildDataSourceOptions({ url: db.url, poolSize: 8, applicationName })).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('fails the queries in flight, never the process, and serves again once the server stops', async () => {
    let answered = 0;
    let failed = 0;
    const work = async () => {
      const runner = dataSource.createQueryRunner();
      try {
        await runner.connect();
        await runner.query('SELECT 1');
        answered++;
      } catch (error) {
        failed++;
        throw error;
      } finally {
        await runner.release();
      }
    };
    const result = await hammerWhileTerminating({ database: db.name, applicationName, ms: 3000, workers: 8, work });
    expect(result.uncaught).toEqual([]);
    expect(result.terminated, 'sessions terminated').toBeGreaterThan(0);
    expect(failed, 'queries the terminations failed').toBeGreaterThan(0);
    expect(answered, 'queries answered between terminations').toBeGreaterThan(0);
    expect(await dataSource.query('SELECT 42 AS n')).toEqual([{ n: 42 }]);
  });
});
