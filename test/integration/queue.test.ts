import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerError, QueueQueries, type AdmitCommand } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { Ledger } from '../support/ledger.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

// The reservation queue on PostgreSQL: what waits is in the ledger, and the transaction
// that frees room admits it.
let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;
let queue: QueueQueries;

beforeAll(async () => {
  db = await createMigratedDatabase('qlqueue');
  ledger = new Ledger(db.dataSource, {
    retryBaseMs: 1,
    queuePolicy: { passMax: 2, passMs: 60_000, perNamespaceMax: 3, blockSharePercent: 100 },
    queueTotalMax: 5,
  });
  queue = new QueueQueries(db.dataSource);
});
afterAll(async () => {
  await ledger?.close();
  await db?.drop();
});

const reserve = (namespace: string, cpu: string, wait?: { seconds: number; priority: number }, requestKey?: string): AdmitCommand => ({
  namespace,
  source: 'rest',
  request: { operation: 'CREATE', groupResource: { group: 'batch.example.com', resource: 'jobs' }, namespace },
  kind: 'Job',
  resources: { cpu },
  dryRun: false,
  requester: 'team-a',
  ...(wait ? { wait } : {}),
  ...(requestKey ? { requestKey } : {}),
});

const types = async (namespace: string): Promise<string[]> =>
  (await db.dataSource.query(`SELECT type FROM ledger_events WHERE namespace = $1 ORDER BY version`, [namespace])).map(
    (r: { type: string }) => r.type,
  );

describe('the reservation queue on PostgreSQL', () => {
  it('queues a reserve that does not fit and admits it in the transaction of the release that frees room', async () => {
    await ledger.putQuota('q1', { name: 'compute', spec: { hard: { cpu: '2' } } }, { actor: 'admin' });
    const first = await ledger.admit(reserve('q1', '2'));
    const waiting = await ledger.admit(reserve('q1', '1', { seconds: 600, priority: 0 }, 'rest:w1'));
    expect(waiting.result).toMatchObject({
      allowed: false,
      code: 202,
      queued: { position: 1, waitingFor: [{ quota: 'compute', resources: [{ resource: 'cpu', requested: '1', used: '2', hard: '2' }] }] },
    });
    const id = waiting.result.reservationId as string;
    expect((await queue.queue('q1')).items).toMatchObject([{ id, state: 'queued', position: 1, resources: { cpu: '1' } }]);
    // A repeat answers the first answer and queues nothing more.
    expect((await ledger.admit(reserve('q1', '1', { seconds: 600, priority: 0 }, 'rest:w1'))).result).toMatchObject({
      code: 202,
      reservationId: id,
    });
    // A new ledger (a restart) finds it: the queue is the ledger.
    const restarted = new Ledger(db.dataSource, { retryBaseMs: 1 });
    await restarted.release('q1', first.result.reservationId as string, { actor: 'team-a', reason: 'cancelled' });
    await restarted.close();
    expect(await types('q1')).toEqual(['QuotaDefined', 'Reserved', 'Queued', 'Released', 'AdmittedFromQueue', 'Reserved']);
    expect((await queue.queue('q1')).items).toEqual([]);
    const admitted = await ledger.getReservation('q1', id);
    expect(admitted).toMatchObject({ id, state: 'reserved', charged: { cpu: '1' }, requester: 'team-a' });
    expect(admitted?.history?.map((e) => e.type)).toEqual(['Queued', 'AdmittedFromQueue', 'Reserved']);
    expect(admitted?.history?.[1]?.data).toMatchObject({ freedBy: { version: 4, type: 'Released' } });
    expect((await ledger.usage('q1'))?.quotas[0]?.used).toEqual({ cpu: '1' });
  });

  it('cancels a queued reservation with an event, and expires one past its deadline on the sweep', async () => {
    await ledger.putQuota('q2', { name: 'compute', spec: { hard: { cpu: '1' } } }, { actor: 'admin' });
    await ledger.admit(reserve('q2', '1'));
    const a = (await ledger.admit(reserve('q2', '1', { seconds: 600, priority: 0 }))).result.reservationId as string;
    const b = (await ledger.admit(reserve('q2', '1', { seconds: 1, priority: 0 }))).result.reservationId as string;
    await ledger.commands.cancelQueued('q2', a, { actor: 'team-a' });
    await expect(ledger.commands.cancelQueued('q2', a, { actor: 'team-a' })).rejects.toMatchObject({ code: 'NotFound' });
    expect(await queue.reservation('q2', a)).toMatchObject({ id: a, state: 'cancelled' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await ledger.commands.sweepQueue('q2', { actor: 'sweeper' })).toEqual(['Expired']);
    expect(await queue.reservation('q2', b)).toMatchObject({
      id: b,
      state: 'expired',
      reason: expect.stringContaining('without room in compute'),
    });
    expect(await types('q2')).toEqual(['QuotaDefined', 'Reserved', 'Queued', 'Queued', 'Cancelled', 'Expired']);
  });

  it('admits waiters in priority order when a raised hard frees room, and bounds the queue', async () => {
    await ledger.putQuota('q3', { name: 'compute', spec: { hard: { cpu: '1' } } }, { actor: 'admin' });
    await ledger.admit(reserve('q3', '1'));
    const low = (await ledger.admit(reserve('q3', '1', { seconds: 600, priority: 0 }))).result.reservationId;
    const high = (await ledger.admit(reserve('q3', '1', { seconds: 600, priority: 9 }))).result.reservationId;
    const low2 = (await ledger.admit(reserve('q3', '1', { seconds: 600, priority: 0 }))).result.reservationId;
    expect((await ledger.admit(reserve('q3', '1', { seconds: 600, priority: 0 }))).result).toMatchObject({ code: 429 });
    expect((await queue.queue('q3')).items.map((w) => w.id)).toEqual([high, low, low2]);
    await ledger.putQuota('q3', { name: 'compute', spec: { hard: { cpu: '3' } } }, { actor: 'admin' });
    expect((await queue.queue('q3')).items.map((w) => w.id)).toEqual([low2]);
    const events = await db.dataSource.query(
      `SELECT data->>'reservationId' AS id FROM ledger_events WHERE namespace = 'q3' AND type = 'AdmittedFromQueue' ORDER BY version`,
    );
    expect(events.map((e: { id: string }) => e.id)).toEqual([high, low]);
    // One waits in q3; four more in q4 and q5 reach the total bound (5), which refuses before deciding.
    for (const namespace of ['q4', 'q5']) {
      await ledger.putQuota(namespace, { name: 'compute', spec: { hard: { cpu: '1' } } }, { actor: 'admin' });
      await ledger.admit(reserve(namespace, '1'));
      for (let i = 0; i < 2; i++)
        expect((await ledger.admit(reserve(namespace, '1', { seconds: 600, priority: 0 }))).result.code).toBe(202);
    }
    await expect(ledger.admit(reserve('q5', '1', { seconds: 600, priority: 0 }))).rejects.toMatchObject({ code: 'TooManyRequests' });
    expect(LedgerError).toBeDefined();
  });
});
