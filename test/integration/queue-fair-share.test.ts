import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterWriter, QueueQueries, type AdmitCommand } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { Ledger } from '../support/ledger.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

// Fair sharing under a ClusterResourceQuota: two teams with weights 1 and 3 keep their
// queues full while releases free capacity; the shared quota's fair drain gives them 25 % and
// 75 % of the freed capacity (within 5 points, after the first 20 releases, which move the
// split from 50/50 to the fair one).
let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;
let writer: ClusterWriter;
let queue: QueueQueries;

const KEY = 'clusterresourcequotas/fair';
const actor = { actor: 'admin' };

beforeAll(async () => {
  db = await createMigratedDatabase('qlfair');
  ledger = new Ledger(db.dataSource, { retryBaseMs: 1 });
  writer = new ClusterWriter(db.dataSource);
  queue = new QueueQueries(db.dataSource);
});
afterAll(async () => {
  await ledger?.close();
  await writer?.close();
  await db?.drop();
});

const job = (namespace: string, wait?: boolean): AdmitCommand => ({
  namespace,
  source: 'rest',
  request: { operation: 'CREATE', groupResource: { group: 'batch.example.com', resource: 'jobs' }, namespace },
  kind: 'Job',
  resources: { cpu: '1' },
  dryRun: false,
  requester: namespace,
  ...(wait ? { wait: { seconds: 3600, priority: 0 } } : {}),
});

async function topUp(namespace: string, depth: number): Promise<void> {
  const waiting = (await queue.queue(namespace)).items.length;
  for (let i = waiting; i < depth; i++) expect((await ledger.admit(job(namespace, true))).result.code).toBe(202);
}

describe('fair sharing of a ClusterResourceQuota between waiting namespaces', () => {
  it('gives namespaces of weights 1 and 3 25 % and 75 % of the capacity releases free', async () => {
    await writer.putNamespace({ name: 'light', metadata: { labels: { team: 'fair', 'quota-ledger.io/fair-share-weight': '1' } } }, actor);
    await writer.putNamespace(
      { name: 'heavy', metadata: { annotations: { 'quota-ledger.io/fair-share-weight': '3' }, labels: { team: 'fair' } } },
      actor,
    );
    await writer.putSharedQuota(
      {
        ref: { kind: 'ClusterResourceQuota', name: 'fair' },
        spec: { hard: { cpu: '20' } },
        selector: { labels: { matchLabels: { team: 'fair' } } },
      },
      actor,
    );
    // Full, 10 and 10: each holds half, and each keeps 6 waiting.
    const held: { namespace: string; id: string }[] = [];
    for (const namespace of ['light', 'heavy']) {
      for (let i = 0; i < 10; i++) held.push({ namespace, id: (await ledger.admit(job(namespace))).result.reservationId as string });
    }
    for (const namespace of ['light', 'heavy']) await topUp(namespace, 6);
    expect((await ledger.admit(job('light'))).result.code).toBe(403);
    const received = { light: 0, heavy: 0 };
    for (let round = 0; round < 140; round++) {
      const oldest = held.shift() as { namespace: string; id: string };
      const before = {
        light: (await queue.queue('light')).items.map((w) => w.id),
        heavy: (await queue.queue('heavy')).items.map((w) => w.id),
      };
      await ledger.release(oldest.namespace, oldest.id, { actor: oldest.namespace, reason: 'cancelled' });
      const admitted = await writer.drainSharedQueue(KEY, { actor: 'queue' });
      expect([...admitted.values()].reduce((a, b) => a + b, 0)).toBe(1);
      for (const namespace of ['light', 'heavy'] as const) {
        const after = new Set((await queue.queue(namespace)).items.map((w) => w.id));
        for (const id of before[namespace].filter((id) => !after.has(id))) {
          held.push({ namespace, id });
          if (round >= 20) received[namespace]++;
        }
        await topUp(namespace, 6);
      }
    }
    const total = received.light + received.heavy;
    expect(total).toBe(120);
    expect(Math.abs(received.light / total - 0.25)).toBeLessThan(0.05);
    expect(Math.abs(received.heavy / total - 0.75)).toBeLessThan(0.05);
    // Never over hard: the shared quota's usage is exactly its hard, the queues still full.
    const usage = (await db.dataSource.query(`SELECT state->'members' AS members FROM shared_quota_heads WHERE key = $1`, [KEY]))[0]
      .members as Record<string, { cpu: string }>;
    expect(Object.values(usage).reduce((sum, m) => sum + Number(m.cpu), 0)).toBe(20);
  });

  it("admits, in the fair drain's transaction, a namespace's own waiter that a shared waiter it admitted was blocking", async () => {
    const policy = { passMax: 0, passMs: 3_600_000, perNamespaceMax: 10, blockSharePercent: 100 };
    const strict = new Ledger(db.dataSource, { retryBaseMs: 1, queuePolicy: policy });
    const strictWriter = new ClusterWriter(db.dataSource, { queuePolicy: policy });
    try {
      for (const name of ['blk-a', 'blk-b']) await strictWriter.putNamespace({ name, metadata: { labels: { pool: 'blk' } } }, actor);
      await strictWriter.putSharedQuota(
        {
          ref: { kind: 'ClusterResourceQuota', name: 'blk' },
          spec: { hard: { cpu: '2' } },
          selector: { labels: { matchLabels: { pool: 'blk' } } },
        },
        actor,
      );
      await strict.putQuota('blk-a', { name: 'local', spec: { hard: { memory: '2Gi' } } }, actor);
      const res = (namespace: string, resources: Record<string, string>, wait?: boolean): AdmitCommand => ({
        ...job(namespace, wait),
        resources,
      });
      const holderB = (await strict.admit(res('blk-b', { cpu: '2' }))).result.reservationId as string;
      const holderA = (await strict.admit(res('blk-a', { memory: '2Gi' }))).result.reservationId as string;
      const shared = (await strict.admit(res('blk-a', { cpu: '2', memory: '1Gi' }, true))).result.reservationId as string;
      const local = (await strict.admit(res('blk-a', { memory: '1Gi' }, true))).result.reservationId as string;
      // Room for the local one, but the shared one ahead of it, short of the same memory, is blocking (passMax 0) and short of cpu.
      await strict.release('blk-a', holderA, { actor: 'a', reason: 'cancelled' });
      expect((await queue.queue('blk-a')).items.map((w) => w.id)).toEqual([shared, local]);
      await strict.release('blk-b', holderB, { actor: 'b', reason: 'cancelled' });
      expect(await strictWriter.drainSharedQueue('clusterresourcequotas/blk', { actor: 'queue' })).toEqual(new Map([['blk-a', 1]]));
      expect((await queue.queue('blk-a')).items).toEqual([]);
      expect(await ledger.getReservation('blk-a', local)).toMatchObject({ state: 'reserved', charged: { memory: '1Gi' } });
    } finally {
      await strict.close();
      await strictWriter.close();
    }
  });
});
