import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@quota/domain';
import type { Inventory, InventorySource } from '@quota/inventory';
import type { AdmitCommand } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { reconcilerMetrics } from '../../apps/reconciler/src/metrics.js';
import { Reconciler, UNCONFIRMED_SAID } from '../../apps/reconciler/src/reconciler.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { Ledger } from '../support/ledger.js';

/**
 * Forged reviews (whoever reaches the unauthenticated listener is the kube-apiserver) reserve
 * quota for objects that never appear, held until the grace period ends. The reconciler says so
 * while they pile up: a gauge of the webhook's reservations its listings did not find, a warning
 * when a namespace has many, and a counter of those released because their object never came.
 * The ledger is the real one on PostgreSQL; the inventory a stub; the queue never started.
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const PODS = { group: '', resource: 'pods' };
const NS = 'forged';
const GRACE_MS = 1_500;

let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;
let reconciler: Reconciler;
/**
 * The reconciler times its listings on the ledger's clock: pinned to before the admissions, every
 * forged reservation is within its grace however long a loaded machine takes to admit them all.
 */
let listedAt: number | undefined;
const logged: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '10m' } } }] },
});
const review = (name: string): AdmitCommand => ({
  namespace: NS,
  source: 'webhook',
  request: { operation: 'CREATE', groupResource: PODS, namespace: NS, name, object: pod(name) },
  requestKey: `review:${name}`,
  dryRun: false,
  requester: 'unauthenticated:kube-apiserver',
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
  db = await createMigratedDatabase('qlforged');
  ledger = new Ledger(db.dataSource);
  const ledgerNow = ledger.now;
  ledger.now = async () => listedAt ?? ledgerNow();
  reconciler = new Reconciler(
    ledger,
    inventory,
    { kind: 'redis', url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` },
    {
      intervalMs: 60_000,
      graceMs: GRACE_MS,
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

describe("the webhook's reservations whose objects never appear", () => {
  it('are counted while they wait, said once when many, and counted again when released as never created', async () => {
    await ledger.putQuota(NS, { name: 'compute', spec: { hard: { pods: '1000' } } }, { actor: 'admin' });
    const forged = Array.from({ length: UNCONFIRMED_SAID + 2 }, (_, i) => `forged-${i}`);
    listedAt = await ledger.now();
    for (const name of [...forged, 'real']) expect((await ledger.admit(review(name))).result.allowed).toBe(true);
    listed.push(pod('real'));

    const first = await reconciler.reconcileNamespace(NS);
    expect(first.unconfirmed).toBe(forged.length);
    expect(await metric('quota_ledger_reconciler_unconfirmed_reservations')).toBe(
      `quota_ledger_reconciler_unconfirmed_reservations ${forged.length}`,
    );
    const warned = (): typeof logged =>
      logged.filter((line) => line.msg.startsWith('webhook reservations wait for objects the cluster does not have'));
    expect(warned()).toHaveLength(1);
    expect(warned()[0]?.fields).toMatchObject({ namespace: NS, unconfirmed: forged.length });
    // The next pass within the grace period says nothing new.
    await reconciler.reconcileNamespace(NS);
    expect(warned()).toHaveLength(1);

    listedAt = undefined;
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS + 100));
    const after = await reconciler.reconcileNamespace(NS);
    expect(after.unconfirmed).toBe(0);
    expect(after.actions.filter((action) => action.kind === 'release' && action.reason === 'stale')).toHaveLength(forged.length);
    expect(await metric('quota_ledger_reconciler_never_created_total')).toBe(
      `quota_ledger_reconciler_never_created_total ${forged.length}`,
    );
    expect(await metric('quota_ledger_reconciler_unconfirmed_reservations')).toBe('quota_ledger_reconciler_unconfirmed_reservations 0');
    expect((await ledger.usage(NS))?.quotas[0]?.used).toEqual({ pods: '1' });
  });
});
