import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolOf, settleProjection } from '../support/api.js';
import { disagreements } from '../support/shared-quotas.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';
import type { DataSource } from 'typeorm';

/**
 * The product's promise, tested the hard way: several API processes (each with its own pool
 * and batcher), 240 concurrent reservations for one namespace whose quota admits 50.
 */
const PROCESSES = 3;
const REQUESTS = 240;
const HARD = 50;

let db: TestDatabase & { dataSource: DataSource };
let apis: ApiProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlconc');
  apis = await Promise.all(Array.from({ length: PROCESSES }, () => startApiProcess({ DATABASE_URL: db.url, DATABASE_POOL_SIZE: '4' })));
}, 120_000);

afterAll(async () => {
  await Promise.all(apis.map((api) => api.stop()));
  await db?.drop();
});

const json = (method: string, url: string, body: unknown) =>
  fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('concurrent admissions through several API processes', () => {
  it(`admits exactly ${HARD} of ${REQUESTS} racing reservations, and the ledger agrees`, async () => {
    const [first] = apis;
    const created = await json('PUT', `${first?.base}/v1/namespaces/hot/resourcequotas/compute`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'compute' },
      spec: { hard: { pods: String(HARD), 'requests.cpu': '100' } },
    });
    expect(created.status).toBe(201);

    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const api = apis[i % PROCESSES] as ApiProcess;
        const response = await json('POST', `${api.base}/v1/namespaces/hot/reservations`, {
          requestId: `req-${i}`,
          kind: 'Pod',
          name: `pod-${i}`,
          object: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: `pod-${i}`, uid: `uid-${i}` },
            spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } } }] },
          },
        });
        return response.status;
      }),
    );
    const admitted = responses.filter((s) => s === 201).length;
    const denied = responses.filter((s) => s === 403).length;
    expect({ admitted, denied, other: REQUESTS - admitted - denied }).toEqual({ admitted: HARD, denied: REQUESTS - HARD, other: 0 });

    const reserved = await db.dataSource.query(
      `SELECT count(*)::int AS n FROM ledger_events WHERE namespace = 'hot' AND type = 'Reserved'`,
    );
    expect(reserved[0].n).toBe(HARD);
    await settleProjection(db.dataSource);
    const quota = (await (await fetch(`${first?.base}/v1/namespaces/hot/resourcequotas/compute`)).json()) as {
      status: { used: Record<string, string> };
    };
    expect(quota.status.used).toEqual({ pods: String(HARD), 'requests.cpu': '5' });
  });
});

/**
 * The promise of shared quotas: a quota over several namespaces, charged in the same transaction as
 * each namespace's own quota, from several API processes at once. Two namespaces of 40 pods each
 * under one shared quota of 50: exactly 50 are admitted in all, neither namespace over 40.
 */
const SHARED_REQUESTS = 300;

async function raceShared(namespaces: readonly string[], prefix: string): Promise<Map<string, number>> {
  const admitted = new Map(namespaces.map((ns) => [ns, 0]));
  const statuses = await Promise.all(
    Array.from({ length: SHARED_REQUESTS }, async (_, i) => {
      const api = apis[i % PROCESSES] as ApiProcess;
      const namespace = namespaces[i % namespaces.length] as string;
      const response = await json('POST', `${api.base}/v1/namespaces/${namespace}/reservations`, {
        requestId: `${prefix}-${i}`,
        kind: 'Pod',
        name: `pod-${i}`,
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `pod-${i}`, uid: `${prefix}-uid-${i}` },
          spec: { containers: [{ name: 'app', image: 'nginx' }] },
        },
      });
      if (response.status === 201) admitted.set(namespace, (admitted.get(namespace) ?? 0) + 1);
      return response.status;
    }),
  );
  expect(statuses.filter((s) => s !== 201 && s !== 403)).toEqual([]);
  return admitted;
}

describe('concurrent admissions under a quota over several namespaces, through several API processes', () => {
  it('a ClusterResourceQuota of 50 pods over two namespaces of 40: exactly 50 admitted, neither over 40, every head equal to the folds', async () => {
    const [first] = apis;
    for (const ns of ['shared-a', 'shared-b']) {
      expect(
        (
          await json('PUT', `${first?.base}/v1/namespaces/${ns}`, {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name: ns, labels: { tenant: 'race' } },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await json('PUT', `${first?.base}/v1/namespaces/${ns}/resourcequotas/pods`, {
            apiVersion: 'v1',
            kind: 'ResourceQuota',
            metadata: { name: 'pods' },
            spec: { hard: { pods: '40' } },
          })
        ).status,
      ).toBe(201);
    }
    const created = await json('PUT', `${first?.base}/v1/clusterresourcequotas/race`, {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'race' },
      spec: { selector: { labels: { matchLabels: { tenant: 'race' } } }, quota: { hard: { pods: '50' } } },
    });
    expect(created.status).toBe(201);
    const admitted = await raceShared(['shared-a', 'shared-b'], 'crq');
    expect((admitted.get('shared-a') ?? 0) + (admitted.get('shared-b') ?? 0)).toBe(50);
    expect(admitted.get('shared-a')).toBeLessThanOrEqual(40);
    expect(admitted.get('shared-b')).toBeLessThanOrEqual(40);
    const quota = (await (await fetch(`${first?.base}/v1/clusterresourcequotas/race`)).json()) as {
      status: { total: { used: Record<string, string> } };
    };
    expect(quota.status.total.used).toEqual({ pods: '50' });
    expect(await disagreements(poolOf(db.dataSource))).toEqual([]);
  });

  it('a HierarchicalResourceQuota of 50 pods over a parent and its child of 40 each: the same', async () => {
    const [first] = apis;
    for (const ns of ['parent', 'child']) {
      const labels =
        ns === 'child'
          ? { 'parent.tree.hnc.x-k8s.io/depth': '1', 'child.tree.hnc.x-k8s.io/depth': '0' }
          : { 'parent.tree.hnc.x-k8s.io/depth': '0' };
      expect(
        (await json('PUT', `${first?.base}/v1/namespaces/${ns}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels } }))
          .status,
      ).toBe(201);
      expect(
        (
          await json('PUT', `${first?.base}/v1/namespaces/${ns}/resourcequotas/pods`, {
            apiVersion: 'v1',
            kind: 'ResourceQuota',
            metadata: { name: 'pods' },
            spec: { hard: { pods: '40' } },
          })
        ).status,
      ).toBe(201);
    }
    const created = await json('PUT', `${first?.base}/v1/namespaces/parent/hierarchicalresourcequotas/tree`, {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: 'tree' },
      spec: { hard: { pods: '50' } },
    });
    expect(created.status).toBe(201);
    const admitted = await raceShared(['parent', 'child'], 'hrq');
    expect((admitted.get('parent') ?? 0) + (admitted.get('child') ?? 0)).toBe(50);
    expect(admitted.get('parent')).toBeLessThanOrEqual(40);
    expect(admitted.get('child')).toBeLessThanOrEqual(40);
    expect(await disagreements(poolOf(db.dataSource))).toEqual([]);
  });
});
