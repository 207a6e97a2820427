import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageProjection } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { Ledger } from '../support/ledger.js';
import { rewriteWithHugeNames } from '../support/oversized.js';

/**
 * A projection step reads at most `stepBytesMax` of event payloads (and always one
 * event). A catch-up over Reserved events with multi-MB names (a database written before names
 * were bounded) took the worker to 806 MB against its 512Mi limit, the same step every restart.
 */
const HUGE = 2 * 1024 * 1024;
const RESERVED = 6;

let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;

beforeAll(async () => {
  db = await createMigratedDatabase('qlstepbytes');
  ledger = new Ledger(db.dataSource, { retryBaseMs: 1 });
  await ledger.putQuota('big', { name: 'objects', spec: { hard: { 'count/configmaps': '100' } } }, { actor: 'admin' });
  for (let i = 0; i < RESERVED; i++) {
    const outcome = await ledger.admit({
      namespace: 'big',
      source: 'rest',
      request: { operation: 'CREATE', groupResource: { group: '', resource: 'configmaps' }, namespace: 'big', name: `cm-${i}` },
      resources: { 'count/configmaps': '1' },
      kind: 'ConfigMap',
      dryRun: false,
      requester: 'team-ci',
    });
    expect(outcome.result.allowed).toBe(true);
  }
  await rewriteWithHugeNames(db.dataSource, 'big', HUGE);
}, 120_000);
afterAll(async () => {
  await ledger?.close();
  await db?.drop();
});

const projectedUsed = async (): Promise<unknown> =>
  (await db.dataSource.query(`SELECT used FROM projected_quota_usage WHERE namespace = 'big'`))[0]?.used;

describe('a projection step over events with 2 MB names', () => {
  it('takes events while the payloads before them stay under its budget, one at least, and applies them all in the end', async () => {
    const projection = new UsageProjection(db.dataSource, { stepBytesMax: 5 * 1024 * 1024 });
    const taken: number[] = [];
    for (let step = await projection.step(); step > 0; step = await projection.step()) taken.push(step);
    // QuotaDefined (small) and three 2 MB Reserved events: the third starts at 4 MiB, under 5 MiB; then the other three.
    expect(taken).toEqual([4, 3]);
    expect(await projectedUsed()).toEqual({ 'count/configmaps': String(RESERVED) });
    await projection.snapshotsWritten();
  });

  it('always takes one event, however small its budget', async () => {
    const projection = new UsageProjection(db.dataSource, { stepBytesMax: 1, name: 'one-by-one' });
    await projection.reset();
    const taken: number[] = [];
    for (let step = await projection.step(); step > 0; step = await projection.step()) taken.push(step);
    expect(taken).toEqual(Array.from({ length: RESERVED + 1 }, () => 1));
    expect(await projectedUsed()).toEqual({ 'count/configmaps': String(RESERVED) });
    await projection.snapshotsWritten();
  });
});
