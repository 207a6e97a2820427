import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InventoryError, type Inventory, type InventorySource } from '@quota/inventory';
import type { QueueBackend } from '@quota/jobs';
import type { DataSource } from 'typeorm';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { Ledger } from '../support/ledger.js';
import { until } from '../support/wait.js';

/**
 * A namespace whose reconcile job failed all its attempts used to be never
 * reconciled again. Its job id stayed in BullMQ's failed set, and every later fan-out was
 * deduplicated against it (team-a stuck for 20 minutes and more). Every namespace must be
 * reconciled every interval, whatever happened to its last job: on Redis and on BullMQ's
 * PostgreSQL backend alike.
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const PODS = { group: '', resource: 'pods' };
const ATTEMPTS = 2;

/** Lists nothing, after failing the first `failures` listings of `namespace`. */
class FlakyInventory implements InventorySource {
  readonly kind = 'flaky';
  readonly covers = [PODS];
  listings = 0;
  constructor(
    private readonly failing: string,
    private readonly failures: number,
  ) {}
  async list(namespace: string): Promise<Inventory> {
    if (namespace === this.failing && ++this.listings <= this.failures)
      throw new InventoryError(`listing ${this.listings} failed`, this.kind);
    return { namespace, covers: this.covers, objects: [] };
  }
  async close(): Promise<void> {}
}

describe.each([
  ['Redis', (_db: TestDatabase): QueueBackend => ({ kind: 'redis', url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` })],
  ['PostgreSQL (BullMQ backend)', (db: TestDatabase): QueueBackend => ({ kind: 'postgres', url: db.url })],
])('a namespace whose reconcile failed every attempt, on BullMQ over %s', (_name, backendOf) => {
  let db: TestDatabase & { dataSource: DataSource };
  let ledger: Ledger;
  let reconciler: Reconciler | undefined;

  beforeAll(async () => {
    db = await createMigratedDatabase('qlfailedjob');
    ledger = new Ledger(db.dataSource);
    await ledger.putQuota('team-a', { name: 'compute', spec: { hard: { pods: '10' } } }, { actor: 'admin' });
  });
  afterAll(async () => {
    await reconciler?.queue.obliterate({ force: true }).catch(() => undefined);
    await reconciler?.stop();
    await ledger?.close();
    await db?.drop();
  });

  it('is reconciled again at the next interval', async () => {
    const inventory = new FlakyInventory('team-a', ATTEMPTS);
    reconciler = new Reconciler(ledger, inventory, backendOf(db), {
      intervalMs: 1500,
      graceMs: 0,
      concurrency: 2,
      attempts: ATTEMPTS,
      retryDelayMs: 100,
    });
    await reconciler.start();
    const r = reconciler;
    await until('every attempt of the first job to fail', async () => (r.stats.failures >= ATTEMPTS ? true : undefined), 30_000);
    expect(await r.queue.getJobCounts('failed')).toMatchObject({ failed: 1 });
    await until('a later interval to reconcile it', async () => (r.stats.namespaces >= 1 ? true : undefined), 30_000);
    expect(inventory.listings).toBe(ATTEMPTS + 1);
  });

  it('still queues a namespace once while a job for it is pending', async () => {
    const r = reconciler as Reconciler;
    for (let i = 0; i < 3; i++) await r.enqueue('team-b', 'after-delete', 60_000);
    expect((await r.queue.getDelayed()).filter((job) => job.data.namespace === 'team-b')).toHaveLength(1);
  });
});
