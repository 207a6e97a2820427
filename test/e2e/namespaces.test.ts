import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

/** The namespace overview (GET /v1/namespaces): exact usage from the heads, the tightest resource, search and paging. */
let api: RunningApi;

const quota = (namespace: string, hard: Record<string, string>) =>
  api.request('PUT', `/v1/namespaces/${namespace}/resourcequotas/compute`, { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard } });
const reservePod = (namespace: string, name: string, cpu: string) =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, {
    kind: 'Pod',
    name,
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, uid: `${namespace}-${name}` },
      spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu } } }] },
    },
  });

beforeAll(async () => {
  api = await startApi({}, 'qlnamespaces');
  expect((await quota('team-a', { pods: '4', 'requests.cpu': '4' })).status).toBe(201);
  for (const name of ['p1', 'p2', 'p3']) expect((await reservePod('team-a', name, '500m')).status).toBe(201);
  expect((await quota('team-b', { pods: '0' })).status).toBe(201);
  expect(
    (
      await api.request('PUT', '/v1/namespaces/team-c/limitranges/defaults', {
        apiVersion: 'v1',
        kind: 'LimitRange',
        spec: { limits: [{ type: 'Container', default: { cpu: '100m' } }] },
      })
    ).status,
  ).toBe(201);
  expect((await quota('web', { pods: '10' })).status).toBe(201);
});
afterAll(async () => {
  await api?.close();
});

describe('GET /v1/namespaces', () => {
  it('lists every namespace with a stream, by name, with exact usage and its tightest resource', async () => {
    const { status, body } = await api.request('GET', '/v1/namespaces');
    expect(status).toBe(200);
    expect(body.next).toBeUndefined();
    expect(body.items.map((n: { namespace: string }) => n.namespace)).toEqual(['team-a', 'team-b', 'team-c', 'web']);
    const [a, b, c, web] = body.items;
    expect(a).toMatchObject({
      quotas: [
        {
          name: 'compute',
          hard: { pods: '4', 'requests.cpu': '4' },
          used: { pods: '3', 'requests.cpu': '1500m' },
          tightest: { resource: 'pods', ratio: 0.75 },
        },
      ],
      tightest: { quota: 'compute', resource: 'pods', ratio: 0.75 },
    });
    // A hard limit of 0 admits nothing more: it counts as full.
    expect(b.tightest).toEqual({ quota: 'compute', resource: 'pods', ratio: 1 });
    expect(c).toMatchObject({ namespace: 'team-c', quotas: [] });
    expect(c.tightest).toBeUndefined();
    expect(web.tightest).toEqual({ quota: 'compute', resource: 'pods', ratio: 0 });
  });

  it('searches by part of the name and pages by the last name', async () => {
    const found = await api.request('GET', '/v1/namespaces?contains=team');
    expect(found.body.items.map((n: { namespace: string }) => n.namespace)).toEqual(['team-a', 'team-b', 'team-c']);
    const first = await api.request('GET', '/v1/namespaces?limit=2');
    expect(first.body.items.map((n: { namespace: string }) => n.namespace)).toEqual(['team-a', 'team-b']);
    expect(first.body.next).toBe('team-b');
    const second = await api.request('GET', `/v1/namespaces?limit=2&after=${first.body.next}`);
    expect(second.body.items.map((n: { namespace: string }) => n.namespace)).toEqual(['team-c', 'web']);
    expect(second.body.next).toBeUndefined();
  });

  it.each([
    ['contains=Team', 'contains'],
    ['after=-x', 'after'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
  ])('answers %s with a 400 Status naming the parameter', async (query, field) => {
    const { status, body } = await api.request('GET', `/v1/namespaces?${query}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ kind: 'Status', status: 'Failure', code: 400 });
    expect(body.message).toContain(field);
  });
});
