import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@quota/domain';
import type { Inventory, InventorySource } from '@quota/inventory';
import type { AdmitCommand } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { reconcilerMetrics } from '../../apps/reconciler/src/metrics.js';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { Ledger } from '../support/ledger.js';

/**
 * One listed object the ledger cannot decode made every reconcile job of its namespace fail, so
 * none of its other reservations was ever committed (and a namespace awaiting its first count
 * never got it). Here: a pod whose status a kubelet wrote with a condition reason longer than the
 * ledger takes from a request (the API server bounds none), which must be read as stored; and a
 * pod with a quantity that does not parse (a platform's inventory may hold anything), which is
 * left out, logged and counted, while the rest of the namespace is reconciled. The ledger is the
 * real one on PostgreSQL; the inventory a stub; the queue never started.
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const PODS = { group: '', resource: 'pods' };
const NS = 'unreadable';

let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;
let reconciler: Reconciler;
const logged: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];

const pod = (name: string, cpu: string, status?: Pod['status']): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, uid: `uid-${name}`, resourceVersion: '7' },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
  ...(status ? { status } : {}),
});
const admit = (name: string): AdmitCommand => ({
  namespace: NS,
  source: 'webhook',
  request: { operation: 'CREATE', groupResource: PODS, namespace: NS, name, object: pod(name, '100m') },
  requestKey: `review:${name}`,
  dryRun: false,
  requester: 'kube-apiserver',
});

const listed: Pod[] = [];
const inventory: InventorySource = {
  kind: 'stub',
  covers: [PODS],
  list: async (namespace): Promise<Inventory> => ({
    namespace,
    covers: [PODS],
    objects: listed.map((object) => ({ groupResource: PODS, uid: object.metadata?.uid ?? '', name: object.metadata?.name ?? '', object })),
  }),
  close: async () => undefined,
};

beforeAll(async () => {
  db = await createMigratedDatabase('qlunread');
  ledger = new Ledger(db.dataSource);
  reconciler = new Reconciler(
    ledger,
    inventory,
    { kind: 'redis', url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` },
    {
      intervalMs: 60_000,
      graceMs: 60_000,
      concurrency: 1,
      log: (level, msg, fields) => logged.push({ level, msg, ...(fields ? { fields } : {}) }),
    },
  );
});
afterAll(async () => {
  await reconciler?.stop();
  await ledger?.close();
  await db?.drop();
});

const metric = async (name: string): Promise<string | undefined> =>
  (await reconcilerMetrics(reconciler).metrics()).split('\n').find((line) => line.startsWith(`${name} `));

describe('a listed object the ledger cannot read', () => {
  it('is left out, logged and counted, and the rest of its namespace is reconciled', async () => {
    await ledger.putQuota(NS, { name: 'compute', spec: { hard: { pods: '5', 'requests.cpu': '1' } } }, { actor: 'admin' });
    const reserved = await Promise.all(
      ['web', 'waiting', 'bad'].map(async (name) => (await ledger.admit(admit(name))).result.reservationId),
    );
    const longReason = {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'x'.repeat(300) }],
    } as Pod['status'];
    listed.push(pod('web', '100m'), pod('waiting', '100m', longReason), pod('bad', 'lots'), pod('rogue', 'plenty'));

    const outcome = await reconciler.reconcileNamespace(NS);
    expect(outcome.actions).toEqual([
      { kind: 'commit', reservationId: reserved[0], uid: 'uid-web' },
      { kind: 'commit', reservationId: reserved[1], uid: 'uid-waiting' },
    ]);
    expect(outcome.unreadable.map((object) => object.name)).toEqual(['bad', 'rogue']);
    // `bad` keeps its charge (it exists: nothing of it is released) and `rogue` is not adopted.
    expect((await ledger.usage(NS))?.quotas[0]?.used).toEqual({ pods: '3', 'requests.cpu': '300m' });
    expect(reconciler.stats.unreadable).toBe(2);
    expect(await metric('quota_ledger_reconciler_unreadable_objects_total')).toBe('quota_ledger_reconciler_unreadable_objects_total 2');
    const warned = logged.filter((line) => line.msg.startsWith('listed objects that cannot be read'));
    expect(warned).toHaveLength(1);
    expect(warned[0]?.fields?.['unreadable']).toEqual([
      expect.objectContaining({
        resource: 'pods',
        name: 'bad',
        uid: 'uid-bad',
        reason: expect.stringContaining('spec.containers[0].resources.requests[cpu]'),
      }),
      expect.objectContaining({ name: 'rogue' }),
    ]);

    // The next pass counts them again but does not say the same again.
    await reconciler.reconcileNamespace(NS);
    expect(reconciler.stats.unreadable).toBe(4);
    expect(logged.filter((line) => line.msg.startsWith('listed objects that cannot be read'))).toHaveLength(1);
  });
});
