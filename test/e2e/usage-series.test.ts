import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

/** GET …/usage/series: usage sampled over a range (each point exact, as usage?at=), with limit changes and denials marked. */
let api: RunningApi;
let since: string;
let until: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const reservePod = (name: string, namespace = 'team-a') =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, {
    kind: 'Pod',
    name,
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, uid: `uid-${name}` },
      spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '100m' } } }] },
    },
  });
const putQuota = (pods: string, namespace = 'team-a') =>
  api.request('PUT', `/v1/namespaces/${namespace}/resourcequotas/compute`, {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { pods } },
  });
/** Every point of a series equals what usage?at= answers for its instant. */
async function expectEachPointAsOf(namespace: string, points: readonly { at: string; version: number; quotas: unknown }[]): Promise<void> {
  for (const point of points) {
    const at = await api.request('GET', `/v1/namespaces/${namespace}/usage?at=${encodeURIComponent(point.at)}`);
    expect({ at: point.at, version: point.version, quotas: point.quotas }).toEqual({
      at: point.at,
      version: at.body.version,
      quotas: at.body.quotas,
    });
  }
}

beforeAll(async () => {
  api = await startApi({}, 'qlseries');
  since = new Date(Date.now() - 1000).toISOString();
  await sleep(1100);
  expect((await putQuota('2')).status).toBe(201);
  await sleep(50);
  expect((await reservePod('a')).status).toBe(201);
  expect((await reservePod('b')).status).toBe(201);
  expect((await reservePod('c')).status).toBe(403);
  await sleep(50);
  expect((await putQuota('3')).status).toBe(200);
  await sleep(50);
  until = new Date(Date.now() + 1000).toISOString();
});
afterAll(async () => {
  await api?.close();
});

describe('GET /v1/namespaces/{ns}/usage/series', () => {
  it('samples evenly from since to until, each point as usage?at= answers it', async () => {
    const { status, body } = await api.request('GET', `/v1/namespaces/team-a/usage/series?since=${since}&until=${until}&points=20`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ namespace: 'team-a', since, until, truncated: false });
    expect(body.points).toHaveLength(20);
    expect(body.points[0]).toMatchObject({ at: new Date(Date.parse(since)).toISOString(), version: 0, quotas: [] });
    expect(body.points.at(-1)).toMatchObject({ at: until, quotas: [{ name: 'compute', hard: { pods: '3' }, used: { pods: '2' } }] });
    const instants = body.points.map((p: { at: string }) => Date.parse(p.at));
    expect(instants).toEqual([...instants].sort((a, b) => a - b));
    for (const point of body.points.filter((_: unknown, i: number) => i % 4 === 1)) {
      const at = await api.request('GET', `/v1/namespaces/team-a/usage?at=${encodeURIComponent(point.at)}`);
      expect({ version: point.version, quotas: point.quotas }).toEqual({ version: at.body.version, quotas: at.body.quotas });
    }
  });

  it('marks the quota changes and the denial, oldest first, with who and why', async () => {
    const { body } = await api.request('GET', `/v1/namespaces/team-a/usage/series?since=${since}&until=${until}&points=2`);
    expect(body.markers.map((m: { kind: string; change?: string }) => (m.kind === 'limit' ? `limit:${m.change}` : m.kind))).toEqual([
      'limit:defined',
      'denial',
      'limit:changed',
    ]);
    const denial = body.markers[1];
    expect(denial).toMatchObject({ kind: 'denial', name: 'c', reason: expect.any(String) });
    expect(denial.message).toContain('exceeded quota: compute');
    // The quota and the resources it refused for: a chart draws it on that quota's pods chart only.
    expect(denial).toMatchObject({ quota: 'compute', resources: ['pods'] });
    expect(denial.quotaKind).toBeUndefined();
  });

  it.each([
    [`since=${new Date(0).toISOString()}&until=${new Date(0).toISOString()}`, 400, 'since'],
    ['points=1', 400, 'points'],
    ['points=501', 400, 'points'],
    ['since=2026-W47', 400, 'since'],
  ])('answers %s with %d naming the parameter', async (query, code, field) => {
    const { status, body } = await api.request('GET', `/v1/namespaces/team-a/usage/series?${query}`);
    expect(status).toBe(code);
    expect(body).toMatchObject({ kind: 'Status', code });
    expect(body.message).toContain(field);
  });

  describe('over a history with snapshots (every 25 events here)', () => {
    let first: string;
    let last: string;
    beforeAll(async () => {
      first = new Date().toISOString();
      expect((await putQuota('100', 'team-b')).status).toBe(201);
      // Reservations made, then committed or released some events later (so across snapshots
      // too), and a limit change (which recounts usage): usage moves both ways.
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        const reserved = await reservePod(`p${i}`, 'team-b');
        expect(reserved.status).toBe(201);
        ids.push(reserved.body.id);
        if (i % 2 === 0 && i >= 4)
          expect((await api.request('POST', `/v1/namespaces/team-b/reservations/${ids[i - 4]}/commit`)).status).toBe(200);
        if (i % 2 === 1 && i >= 3)
          expect((await api.request('DELETE', `/v1/namespaces/team-b/reservations/${ids[i - 2]}`)).status).toBe(200);
        if (i === 30) expect((await putQuota('200', 'team-b')).status).toBe(200);
      }
      await sleep(5);
      last = new Date().toISOString();
      await api.settle();
      const snapshots: { n: number }[] = await api.db.dataSource.query(
        `SELECT count(*)::int AS n FROM usage_snapshots WHERE namespace = 'team-b'`,
      );
      expect(snapshots[0]?.n).toBeGreaterThanOrEqual(3);
    });

    it('folds points closer than a snapshot interval together, each as usage?at= answers it', async () => {
      const { status, body } = await api.request('GET', `/v1/namespaces/team-b/usage/series?since=${first}&until=${last}&points=300`);
      expect(status).toBe(200);
      expect(new Set(body.points.map((p: { version: number }) => p.version)).size).toBeGreaterThan(20);
      await expectEachPointAsOf('team-b', body.points);
    });

    it('starts points further apart than a snapshot interval from their own snapshots, each as usage?at= answers it', async () => {
      const { status, body } = await api.request('GET', `/v1/namespaces/team-b/usage/series?since=${first}&until=${last}&points=4`);
      expect(status).toBe(200);
      await expectEachPointAsOf('team-b', body.points);
    });
  });

  it('answers 404 for a namespace without a stream', async () => {
    const { status, body } = await api.request('GET', '/v1/namespaces/nowhere/usage/series');
    expect(status).toBe(404);
    expect(body).toMatchObject({ kind: 'Status', reason: 'NotFound' });
  });
});
