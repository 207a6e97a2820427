import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleProjection } from '../support/api.js';
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

    const reserved = await db.dataSource.query(`SELECT count(*)::int AS n FROM ledger_events WHERE namespace = 'hot' AND type = 'Reserved'`);
    expect(reserved[0].n).toBe(HARD);
    await settleProjection(db.dataSource);
    const quota = (await (await fetch(`${first?.base}/v1/namespaces/hot/resourcequotas/compute`)).json()) as { status: { used: Record<string, string> } };
    expect(quota.status.used).toEqual({ pods: String(HARD), 'requests.cpu': '5' });
  });
});
