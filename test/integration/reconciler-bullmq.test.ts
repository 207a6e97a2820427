import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@quota/domain';
import { createPostgresInventory } from '@quota/inventory';
import type { QueueBackend } from '@quota/jobs';
import { Ledger } from '../support/ledger.js';
import { reconcilerMetrics } from '../../apps/reconciler/src/metrics.js';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { until } from '../support/wait.js';
import type { DataSource } from 'typeorm';

/**
 * The reconciler as it runs in production: BullMQ's job scheduler fans out namespace jobs to
 * two reconciler replicas, which list objects from the platform's PostgreSQL table (the
 * postgres inventory source) and append corrections. Once on Redis, once on BullMQ's
 * PostgreSQL backend (the embedded default).
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const PODS = { group: '', resource: 'pods' };

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team', uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' }, limits: { cpu: '100m' } } }] },
});

describe.each([
  ['Redis', (_db: TestDatabase): QueueBackend => ({ kind: 'redis', url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` })],
  ['PostgreSQL (BullMQ backend)', (db: TestDatabase): QueueBackend => ({ kind: 'postgres', url: db.url })],
])('the reconciler on BullMQ over %s', (_name, backendOf) => {
  let db: TestDatabase & { dataSource: DataSource };
  let ledger: Ledger;
  let replicas: Reconciler[] = [];

  beforeAll(async () => {
    db = await createMigratedDatabase('qlbull');
    ledger = new Ledger(db.dataSource);
    await db.dataSource.query(`CREATE TABLE platform_objects (namespace text, kind text, name text, uid text, object jsonb)`);
  });
  afterAll(async () => {
    // Leave nothing behind in the shared Redis.
    await replicas[0]?.queue.obliterate({ force: true }).catch(() => undefined);
    await Promise.all(replicas.map((r) => r.stop()));
    await ledger?.close();
    await db?.drop();
  });

  const events = async (type: string): Promise<{ id: string; reason: string | null }[]> =>
    db.dataSource.query(
      `SELECT data->>'reservationId' AS id, data->>'reason' AS reason FROM ledger_events WHERE namespace = 'team' AND type = $1 ORDER BY ledger_events.version`,
      [type],
    );
  const exists = (name: string) =>
    db.dataSource.query(`INSERT INTO platform_objects VALUES ('team', 'Pod', $1, $2, $3)`, [
      name,
      `uid-${name}`,
      JSON.stringify(pod(name)),
    ]);

  it('commits, releases once, adopts once with two replicas, and reconciles promptly after a delete', async () => {
    await ledger.putQuota('team', { name: 'compute', spec: { hard: { pods: '10' } } }, { actor: 'admin' });
    const admit = (name: string) =>
      ledger.admit({
        namespace: 'team',
        source: 'webhook',
        request: { operation: 'CREATE', groupResource: PODS, namespace: 'team', name, object: pod(name) },
        dryRun: false,
        requester: 'test',
      });
    const persisted = await admit('persisted');
    const lost = await admit('lost');
    await exists('persisted');
    await exists('rogue');

    const backend = backendOf(db);
    replicas = [0, 1].map(
      () =>
        new Reconciler(ledger, createPostgresInventory({ url: db.url, relation: 'public.platform_objects' }), backend, {
          intervalMs: 300,
          graceMs: 0,
          concurrency: 2,
        }),
    );
    await Promise.all(replicas.map((r) => r.start()));

    await until('the first corrections', async () =>
      (await events('Adopted')).length > 0 && (await events('Released')).length > 0 ? true : undefined,
    );
    // Let a few more intervals pass on both replicas: nothing is appended twice.
    const namespacesBefore = replicas.reduce((n, r) => n + r.stats.namespaces, 0);
    await until('three more reconciles', async () =>
      replicas.reduce((n, r) => n + r.stats.namespaces, 0) >= namespacesBefore + 3 ? true : undefined,
    );
    expect(await events('Committed')).toEqual([{ id: persisted.result.reservationId, reason: null }]);
    expect(await events('Released')).toEqual([{ id: lost.result.reservationId, reason: 'stale' }]);
    expect(await events('Adopted')).toHaveLength(1);

    // An admitted DELETE queues a prompt reconcile; the pod is gone by then.
    await db.dataSource.query(`DELETE FROM platform_objects WHERE name = 'persisted'`);
    await (replicas[0] as Reconciler).enqueue('team', 'after-delete', 10);
    const released = await until('the deleted pod released', async () => {
      const rows = await events('Released');
      return rows.length === 2 ? rows : undefined;
    });
    expect(released[1]).toEqual({ id: persisted.result.reservationId, reason: 'deleted' });
    expect((await ledger.usage('team'))?.quotas[0]?.used).toEqual({ pods: '1' });

    // Each replica's /metrics counts what it appended; together they match the ledger.
    const sum = async (series: string): Promise<number> => {
      let total = 0;
      for (const replica of replicas) {
        const line = (await reconcilerMetrics(replica).metrics()).split('\n').find((l) => l.startsWith(`${series} `));
        total += Number(line?.split(' ')[1] ?? 0);
      }
      return total;
    };
    expect(await sum('quota_ledger_reconciler_actions_total{kind="commit"}')).toBe(1);
    expect(await sum('quota_ledger_reconciler_actions_total{kind="release"}')).toBe(2);
    expect(await sum('quota_ledger_reconciler_actions_total{kind="adopt"}')).toBe(1);
    expect(await sum('quota_ledger_reconciler_namespaces_total')).toBeGreaterThanOrEqual(4);
  });
});
