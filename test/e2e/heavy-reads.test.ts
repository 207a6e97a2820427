import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEAVY_READS_IN_FLIGHT_MAX, HEAVY_READS_WAITING_MAX, HeavyReads } from '../../apps/admission-api/src/common/edge/heavy-reads.js';
import { startApi, type RunningApi } from '../support/api.js';

/**
 * Six auditors reading a shared quota's usage series at once killed the API
 * (and took admission p50 from 19 to 187 ms meanwhile). Reads whose cost grows with history
 * share a few slots per process; when those and the waiting line are full, a caller gets 429
 * with Retry-After. Here the test holds the slots itself, so every route is checked for certain.
 */
let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlheavy');
  expect(
    (
      await api.request('PUT', '/v1/namespaces/team-a/resourcequotas/compute', {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        spec: { hard: { pods: '5' } },
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await api.request('PUT', '/v1/namespaces/team-a', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-a', labels: { tenant: 'acme' } },
      })
    ).status,
  ).toBe(201);
  const crq = {
    apiVersion: 'quota.openshift.io/v1',
    kind: 'ClusterResourceQuota',
    metadata: { name: 'acme' },
    spec: { selector: { labels: { matchLabels: { tenant: 'acme' } } }, quota: { hard: { pods: '9' } } },
  };
  expect((await api.request('PUT', '/v1/clusterresourcequotas/acme', crq)).status).toBe(201);
  const hrq = {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'HierarchicalResourceQuota',
    metadata: { name: 'tree' },
    spec: { hard: { pods: '9' } },
  };
  expect((await api.request('PUT', '/v1/namespaces/team-a/hierarchicalresourcequotas/tree', hrq)).status).toBe(201);
});
afterAll(async () => {
  await api?.close();
});

const at = () => encodeURIComponent(new Date().toISOString());
const HEAVY = [
  '/v1/namespaces/team-a/usage/series?points=500',
  '/v1/namespaces/team-a/events/export',
  '/v1/namespaces/team-a/decisions/export',
  '/v1/clusterresourcequotas/acme/usage/series?points=500',
  `/v1/clusterresourcequotas/acme/usage?at=${at()}`,
  '/v1/namespaces/team-a/hierarchicalresourcequotas/tree/usage/series?points=500',
  `/v1/namespaces/team-a/hierarchicalresourcequotas/tree/usage?at=${at()}`,
];
const LIGHT = [
  '/v1/namespaces/team-a/usage',
  '/v1/clusterresourcequotas/acme/usage',
  '/v1/namespaces/team-a/hierarchicalresourcequotas/tree/usage',
  '/v1/namespaces/team-a/events',
];

describe('series, as-of reads of shared quotas and exports', () => {
  it('are refused with 429 and Retry-After while every slot is taken and the line is full, and served again after', async () => {
    const reads = api.app.get(HeavyReads);
    for (let i = 0; i < HEAVY_READS_IN_FLIGHT_MAX; i++) expect(await reads.take()).toBe(true);
    const waiting = Array.from({ length: HEAVY_READS_WAITING_MAX }, () => reads.take());
    try {
      for (const path of HEAVY) {
        const refused = await api.request('GET', path);
        expect(refused.status, path).toBe(429);
        expect(refused.headers.get('retry-after'), path).toBe('5');
        expect(refused.body).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', details: { retryAfterSeconds: 5 } });
      }
      for (const path of LIGHT) expect((await api.request('GET', path)).status, path).toBe(200);
    } finally {
      for (let i = 0; i < HEAVY_READS_IN_FLIGHT_MAX; i++) reads.release();
      for (const taken of waiting) if (await taken) reads.release();
    }
    for (const path of HEAVY) expect((await api.request('GET', path)).status, path).toBe(200);
  });

  it('wait for a slot rather than fail when one frees in time', async () => {
    const reads = api.app.get(HeavyReads);
    for (let i = 0; i < HEAVY_READS_IN_FLIGHT_MAX; i++) expect(await reads.take()).toBe(true);
    const answer = api.request('GET', HEAVY[0] as string);
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let i = 0; i < HEAVY_READS_IN_FLIGHT_MAX; i++) reads.release();
    expect((await answer).status).toBe(200);
  });
});
