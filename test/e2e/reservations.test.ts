import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlrest');
  const quota = await api.request('PUT', '/v1/namespaces/team-a/resourcequotas/compute', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute' },
    spec: { hard: { pods: '3', 'requests.cpu': '2', 'example.com/gpu': '4' } },
  });
  expect(quota.status).toBe(201);
});
afterAll(async () => {
  await api?.close();
});

const reservedEvents = async (): Promise<number> =>
  Number((await api.db.dataSource.query(`SELECT count(*) FROM ledger_events WHERE type = 'Reserved'`))[0].count);
const allEvents = async (): Promise<number> => Number((await api.db.dataSource.query(`SELECT count(*) FROM ledger_events`))[0].count);

const pod = (name: string, cpu: string) => ({
  kind: 'Pod',
  name,
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, uid: `uid-${name}` }, spec: { containers: [{ name: 'app', image: 'nginx', resources: { limits: { cpu } } }] } },
});

const reserve = (body: unknown, namespace = 'team-a') => api.request('POST', `/v1/namespaces/${namespace}/reservations`, body);

describe('REST reservations', () => {
  it('reserves a pod (its requests defaulted from its limits), commits it, releases it, and keeps the history', async () => {
    const reserved = await reserve({ requestId: 'r-1', ...pod('web-1', '500m') });
    expect(reserved.status).toBe(201);
    expect(reserved.body).toMatchObject({ namespace: 'team-a', state: 'reserved', charged: { 'requests.cpu': '500m', pods: '1' } });
    const id = reserved.body.id as string;

    const repeated = await reserve({ requestId: 'r-1', ...pod('web-1', '500m') });
    expect(repeated).toEqual(reserved);

    const committed = await api.request('POST', `/v1/namespaces/team-a/reservations/${id}/commit`);
    expect(committed.status).toBe(200);
    expect(committed.body).toMatchObject({ id, state: 'committed' });
    expect((await api.request('POST', `/v1/namespaces/team-a/reservations/${id}/commit`)).body.state).toBe('committed');

    const released = await api.request('DELETE', `/v1/namespaces/team-a/reservations/${id}`, undefined, { 'x-remote-user': 'ops' });
    expect(released.body).toMatchObject({ id, state: 'released', releaseReason: 'cancelled' });
    expect((await api.request('DELETE', `/v1/namespaces/team-a/reservations/${id}`)).status).toBe(200);

    const late = await api.request('POST', `/v1/namespaces/team-a/reservations/${id}/commit`);
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ kind: 'Status', reason: 'Conflict' });

    const history = await api.request('GET', `/v1/namespaces/team-a/reservations/${id}`);
    expect(history.body.history.map((e: { type: string; actor: string }) => [e.type, e.actor])).toEqual([
      ['Reserved', 'anonymous'],
      ['Committed', 'anonymous'],
      ['Released', 'ops'],
    ]);
  });

  it('reserves a plain resource list under any resource name, and denies with the quota, resource, requested, used and hard', async () => {
    const first = await reserve({ kind: 'Widget', resource: 'widgets.example.com', name: 'w1', resources: { 'example.com/gpu': '3' } });
    expect(first.status).toBe(201);
    expect(first.body.charged).toEqual({ 'example.com/gpu': '3' });
    const denied = await reserve({ kind: 'Widget', resource: 'widgets.example.com', name: 'w2', resources: { 'example.com/gpu': '2' } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message: 'widgets.example.com "w2" is forbidden: exceeded quota: compute, requested: example.com/gpu=2, used: example.com/gpu=3, limited: example.com/gpu=4',
      details: { denial: { quota: 'compute', resource: 'example.com/gpu', requested: '2', used: '3', hard: '4' } },
    });
    await api.request('DELETE', `/v1/namespaces/team-a/reservations/${first.body.id}`);
  });

  it('decides a dry run without appending', async () => {
    const before = await allEvents();
    const dry = await reserve({ dryRun: true, ...pod('dry-1', '100m') });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ namespace: 'team-a', dryRun: true, allowed: true, charged: { 'requests.cpu': '100m', pods: '1' } });
    expect(dry.body.id).toBeUndefined();
    expect(await allEvents()).toBe(before);
  });

  it('releases a reservation whose TTL ran out instead of committing it (410)', async () => {
    const reserved = await reserve({ ttlSeconds: 1, ...pod('ttl-1', '100m') });
    expect(reserved.body.expiresAt).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const commit = await api.request('POST', `/v1/namespaces/team-a/reservations/${reserved.body.id}/commit`);
    expect(commit.status).toBe(410);
    expect(commit.body).toMatchObject({ reason: 'Expired' });
    expect((await api.request('GET', `/v1/namespaces/team-a/reservations/${reserved.body.id}`)).body).toMatchObject({ state: 'released', releaseReason: 'expired' });
  });

  it('answers a namespace without quotas and an unknown reservation with 404', async () => {
    const unknown = await reserve(pod('x', '1'), 'nowhere');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain('namespaces "nowhere" not found');
    expect((await api.request('GET', '/v1/namespaces/team-a/reservations/no-such-id')).status).toBe(404);
    expect((await api.request('POST', '/v1/namespaces/team-a/reservations/no-such-id/commit')).status).toBe(404);
  });

  it.each([
    ['malformed JSON', '{"kind":', 400, 'not valid JSON'],
    ['an unknown field', { ...pod('u', '1'), color: 'blue' }, 400, 'color'],
    ['a wrong type', { ...pod('t', '1'), dryRun: 'yes' }, 400, 'dryRun'],
    ['an invalid quantity', { kind: 'Widget', resource: 'widgets.example.com', resources: { 'example.com/gpu': '1.5.5' } }, 422, 'example.com/gpu'],
    ['an absurd resource name', { kind: 'Widget', resource: 'widgets.example.com', resources: { 'no spaces allowed/!': '1' } }, 422, 'no spaces allowed'],
    ['both object and resources', { ...pod('b', '1'), resources: { pods: '1' } }, 400, 'exactly one of object'],
    ['neither object nor resources', { kind: 'Pod', name: 'n' }, 400, 'exactly one of object'],
    ['an unknown kind without a resource', { kind: 'Widget', resources: { pods: '1' } }, 422, 'kind: Widget is not a kind'],
    ['a TTL over the limit', { ...pod('l', '1'), ttlSeconds: 10_000_000 }, 422, 'ttlSeconds'],
    ['an object in another namespace', { kind: 'Pod', object: { metadata: { name: 'o', namespace: 'team-b' } } }, 400, 'object.metadata.namespace'],
  ])('refuses %s with a Status naming it, and writes nothing', async (_case, body, code, text) => {
    const before = await allEvents();
    const decisions = Number((await api.db.dataSource.query(`SELECT count(*) FROM admission_decisions`))[0].count);
    const response = await reserve(body);
    expect(response.status).toBe(code);
    expect(response.body.kind).toBe('Status');
    expect(JSON.stringify(response.body)).toContain(text);
    expect(await allEvents()).toBe(before);
    expect(Number((await api.db.dataSource.query(`SELECT count(*) FROM admission_decisions`))[0].count)).toBe(decisions);
  });

  it('refuses a garbled reservation id in the path', async () => {
    expect((await api.request('GET', `/v1/namespaces/team-a/reservations/${'x'.repeat(200)}`)).status).toBe(400);
    expect(await reservedEvents()).toBeGreaterThan(0);
  });
});
