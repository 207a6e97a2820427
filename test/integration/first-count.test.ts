import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@quota/domain';
import { createPostgresInventory } from '@quota/inventory';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { startApi, type RunningApi } from '../support/api.js';
import { Ledger } from '../support/ledger.js';
import { until } from '../support/wait.js';

/**
 * A quota that started covering existing objects counted them as 0: reproduced as two
 * live pods admitted while the namespace had no quota (so not recorded), then a quota of pods=2,
 * then a third pod, which was admitted. Now the namespace awaits its first count: the third pod
 * is refused `status unknown for quota` until the reconciler, queued at once by the quota's PUT
 * (its interval here is an hour), has listed and adopted the two, and then refused as over hard.
 * The listing is the postgres inventory source over the platform's own table; the queue is
 * BullMQ's PostgreSQL backend in the test's database.
 */
const PODS = { group: '', resource: 'pods' };
const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'late', uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' }, limits: { cpu: '100m' } } }] },
});
const review = (name: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `first-count-${name}`,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { ...PODS, version: 'v1' },
    namespace: 'late',
    name,
    operation: 'CREATE',
    object: pod(name),
    dryRun: false,
  },
});

let api: RunningApi;
let ledger: Ledger;
let reconciler: Reconciler;
beforeAll(async () => {
  api = await startApi({ awaitFirstCount: true, reconcileAfterDeleteSeconds: 0 }, 'qlfirst');
  ledger = new Ledger(api.db.dataSource, { awaitFirstCount: true });
  await api.db.dataSource.query(`CREATE TABLE platform_objects (namespace text, kind text, name text, uid text, object jsonb)`);
  reconciler = new Reconciler(
    ledger,
    createPostgresInventory({ url: api.db.url, relation: 'public.platform_objects' }),
    { kind: 'postgres', url: api.db.url },
    { intervalMs: 3_600_000, graceMs: 60_000, concurrency: 1 },
  );
});
afterAll(async () => {
  await reconciler?.stop();
  await ledger?.close();
  await api?.close();
});

const validate = async (name: string) => (await api.request('POST', '/v1/admission/validate', review(name))).body.response;
const exists = (name: string) =>
  api.db.dataSource.query(`INSERT INTO platform_objects VALUES ('late', 'Pod', $1, $2, $3)`, [
    name,
    `uid-${name}`,
    JSON.stringify(pod(name)),
  ]);

describe('a quota over objects the ledger never recorded', () => {
  it('refuses what it would charge until the first count, queued at once, then counts them', async () => {
    for (const name of ['a', 'b']) {
      expect(await validate(name)).toMatchObject({ allowed: true });
      await exists(name);
    }
    expect(
      (
        await api.request('PUT', '/v1/namespaces/late/resourcequotas/pods', {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          spec: { hard: { pods: '2' } },
        })
      ).status,
    ).toBe(201);
    const early = await validate('c');
    expect(early).toMatchObject({
      allowed: false,
      status: { code: 403, message: 'pods "c" is forbidden: status unknown for quota: pods, resources: pods' },
    });
    expect((await api.request('GET', '/v1/namespaces/late/usage')).body.awaitingFirstCountSince).toMatch(/^\d{4}-/);

    // The reconciler starts only now (so that the refusal above cannot race the count): the job the
    // PUT queued is waiting for it, and its interval (an hour) has no part in what follows.
    const started = Date.now();
    await reconciler.start();
    await until(
      'the first count',
      async () =>
        (await api.db.dataSource.query(`SELECT 1 FROM ledger_events WHERE namespace = 'late' AND type = 'Counted'`)).length > 0
          ? true
          : undefined,
      20_000,
    );
    console.log(`first-count: counted ${Date.now() - started} ms after the reconciler started (its interval: 1 hour)`);
    const usage = await api.request('GET', '/v1/namespaces/late/usage');
    expect(usage.body.quotas[0].used).toEqual({ pods: '2' });
    expect(usage.body).not.toHaveProperty('awaitingFirstCountSince');
    expect(await validate('c2')).toMatchObject({
      allowed: false,
      status: { code: 403, message: expect.stringContaining('exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2') },
    });
  });
});
