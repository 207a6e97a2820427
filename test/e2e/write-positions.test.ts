import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Answer, type RunningApi } from '../support/api.js';

/**
 * Every write that appends to the ledger answers `X-Ledger-Position` (and a reservation's
 * answers a `position` field): the position to pass as `?minPosition=` to a history read that
 * must see the write. A write that appended nothing answers the position of the event
 * it points to; a denial or a dry run answers none.
 */
let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlwritepos');
});
afterAll(async () => {
  await api?.close();
});

const positionOf = (answer: Answer): string | null => answer.headers.get('x-ledger-position');
/** The position of the latest event of `type` in a stream (a namespace, or a shared quota's key). */
async function eventPosition(stream: string, type: string): Promise<string> {
  const rows: { position: string }[] = await api.db.dataSource.query(
    `SELECT position::text AS position FROM ledger_events WHERE namespace = $1 AND type = $2 ORDER BY position DESC LIMIT 1`,
    [stream, type],
  );
  return rows[0]?.position ?? 'none';
}
const quota = (gpus: string) => ({ apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { 'example.com/gpu': gpus } } });
const widget = (name: string, extra: Record<string, unknown> = {}) => ({
  kind: 'Widget',
  resource: 'widgets.example.com',
  name,
  resources: { 'example.com/gpu': '1' },
  ...extra,
});

describe('the position a write answers', () => {
  it('names the event a quota or limit range PUT or DELETE appended, which the events read then lists', async () => {
    const path = '/v1/namespaces/wp-a/resourcequotas/gpus';
    const created = await api.request('PUT', path, quota('2'));
    expect(created.status).toBe(201);
    expect(positionOf(created)).toBe(await eventPosition('wp-a', 'QuotaDefined'));
    const events = await api.request('GET', `/v1/namespaces/wp-a/events?minPosition=${positionOf(created)}`);
    expect(events.body.items.map((e: { position: string }) => e.position)).toEqual([positionOf(created)]);
    // The Kubernetes object keeps its shape: resourceVersion is the object's stream version, not a position.
    expect(created.body.metadata.resourceVersion).toBe('1');
    expect(created.body.position).toBeUndefined();

    const unchanged = await api.request('PUT', path, quota('2'));
    expect(unchanged.status).toBe(200);
    expect(positionOf(unchanged)).toBe(positionOf(created));
    const limits = await api.request('PUT', '/v1/namespaces/wp-a/limitranges/l', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
    });
    expect(positionOf(limits)).toBe(await eventPosition('wp-a', 'LimitRangeDefined'));
    const removed = await api.request('DELETE', '/v1/namespaces/wp-a/limitranges/l');
    expect(positionOf(removed)).toBe(await eventPosition('wp-a', 'LimitRangeRemoved'));
    expect(BigInt(positionOf(removed) ?? 0)).toBeGreaterThan(BigInt(positionOf(limits) ?? 0));
  });

  it("names a reservation's event in the header and the body, the same for a repeat; a denial and a dry run name none", async () => {
    expect((await api.request('PUT', '/v1/namespaces/wp-b/resourcequotas/gpus', quota('1'))).status).toBe(201);
    const reserved = await api.request('POST', '/v1/namespaces/wp-b/reservations', widget('w', { requestId: 'deploy-1' }));
    expect(reserved.status).toBe(201);
    expect(reserved.body.position).toBe(await eventPosition('wp-b', 'Reserved'));
    expect(positionOf(reserved)).toBe(reserved.body.position);
    const repeated = await api.request('POST', '/v1/namespaces/wp-b/reservations', widget('w', { requestId: 'deploy-1' }));
    expect(repeated).toEqual(reserved);
    expect(positionOf(repeated)).toBe(reserved.body.position);

    const denied = await api.request('POST', '/v1/namespaces/wp-b/reservations', widget('w2'));
    expect(denied.status).toBe(403);
    expect(positionOf(denied)).toBeNull();
    const dry = await api.request('POST', '/v1/namespaces/wp-b/reservations', widget('w3', { dryRun: true, resources: { pods: '1' } }));
    expect(dry.status).toBe(200);
    expect(positionOf(dry)).toBeNull();
    expect(dry.body.position).toBeUndefined();

    const id = reserved.body.id as string;
    const committed = await api.request('POST', `/v1/namespaces/wp-b/reservations/${id}/commit`);
    expect(committed.body).toMatchObject({ id, state: 'committed', position: await eventPosition('wp-b', 'Committed') });
    expect(positionOf(committed)).toBe(committed.body.position);
    expect((await api.request('POST', `/v1/namespaces/wp-b/reservations/${id}/commit`)).body.position).toBe(committed.body.position);
    const released = await api.request('DELETE', `/v1/namespaces/wp-b/reservations/${id}`);
    expect(released.body).toMatchObject({ id, state: 'released', position: await eventPosition('wp-b', 'Released') });
    expect(positionOf(released)).toBe(released.body.position);
    // A reservation read is not a write: its body has no position of its own.
    expect((await api.request('GET', `/v1/namespaces/wp-b/reservations/${id}`)).body.position).toBeUndefined();
  });

  it('names the last event a Namespace or shared quota write appended across the streams it moved', async () => {
    const last = async (): Promise<string> =>
      ((await api.db.dataSource.query(`SELECT max(position)::text AS position FROM ledger_events`)) as { position: string }[])[0]!.position;
    const writes: [string, string, unknown][] = [
      ['PUT', '/v1/namespaces/wp-c', { apiVersion: 'v1', kind: 'Namespace', metadata: { labels: { team: 'wp' } } }],
      [
        'PUT',
        '/v1/clusterresourcequotas/wp',
        {
          apiVersion: 'quota.openshift.io/v1',
          kind: 'ClusterResourceQuota',
          spec: { quota: { hard: { pods: '5' } }, selector: { labels: { matchLabels: { team: 'wp' } } } },
        },
      ],
      [
        'PUT',
        '/v1/namespaces/wp-c/hierarchicalresourcequotas/tree',
        { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'HierarchicalResourceQuota', spec: { hard: { pods: '3' } } },
      ],
      ['DELETE', '/v1/namespaces/wp-c/hierarchicalresourcequotas/tree', undefined],
      ['DELETE', '/v1/clusterresourcequotas/wp', undefined],
      ['DELETE', '/v1/namespaces/wp-c', undefined],
    ];
    for (const [method, path, body] of writes) {
      const answer = await api.request(method, path, body);
      expect(answer.status, `${method} ${path}`).toBeLessThan(300);
      expect(positionOf(answer), `${method} ${path}`).toBe(await last());
    }
  });

  it('is documented on each write in the OpenAPI document', async () => {
    const document = (await (await fetch(`${api.base}/docs/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
    };
    const header = (path: string, method: string, status: string) =>
      document.paths[path]?.[method]?.responses[status]?.headers?.['X-Ledger-Position'];
    expect(header('/v1/namespaces/{namespace}/resourcequotas/{name}', 'put', '201')).toBeDefined();
    expect(header('/v1/namespaces/{namespace}/resourcequotas/{name}', 'put', '200')).toBeDefined();
    expect(header('/v1/namespaces/{namespace}/reservations', 'post', '201')).toBeDefined();
    expect(header('/v1/namespaces/{namespace}/reservations/{id}/commit', 'post', '200')).toBeDefined();
    expect(header('/v1/clusterresourcequotas/{name}', 'delete', '200')).toBeDefined();
  });
});
