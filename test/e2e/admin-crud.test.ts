import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '@quota/ledger';
import { startApi, type RunningApi } from '../support/api.js';

let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qladmin');
});
afterAll(async () => {
  await api?.close();
});

const events = async (namespace: string): Promise<{ type: string; actor: string }[]> =>
  api.db.dataSource.query(`SELECT type, actor FROM ledger_events WHERE namespace = $1 ORDER BY version`, [namespace]);

const quota = (hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'compute', labels: { team: 'a' }, ...extra },
  spec: { hard },
});

describe('admin API: ResourceQuota', () => {
  it('creates, reads, replaces with optimistic concurrency, lists and deletes a quota', async () => {
    const path = '/v1/namespaces/team-a/resourcequotas/compute';
    const created = await api.request('PUT', path, quota({ 'requests.memory': '1.5Gi', pods: '10' }), { 'x-remote-user': 'alice' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'compute', namespace: 'team-a', resourceVersion: '1', labels: { team: 'a' } },
      spec: { hard: { 'requests.memory': '1536Mi', pods: '10' } },
      status: { hard: { 'requests.memory': '1536Mi', pods: '10' }, used: { 'requests.memory': '0', pods: '0' } },
    });
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);

    const read = await api.request('GET', path);
    expect(read.body).toEqual(created.body);

    const replaced = await api.request('PUT', path, quota({ pods: '20' }, { resourceVersion: '1' }));
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata).toMatchObject({ resourceVersion: '2', uid: created.body.metadata.uid, creationTimestamp: created.body.metadata.creationTimestamp });

    const stale = await api.request('PUT', path, quota({ pods: '30' }, { resourceVersion: '1' }));
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      kind: 'Status',
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on resourcequotas "compute": the object has been modified; please apply your changes to the latest version and try again',
    });

    const same = await api.request('PUT', path, quota({ pods: '20' }));
    expect(same.status).toBe(200);
    expect(same.body.metadata.resourceVersion).toBe('2');

    const list = await api.request('GET', '/v1/namespaces/team-a/resourcequotas');
    expect(list.body).toMatchObject({ apiVersion: 'v1', kind: 'ResourceQuotaList', items: [{ metadata: { name: 'compute' } }] });

    const deleted = await api.request('DELETE', path, undefined, { 'x-remote-user': 'bob' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.spec.hard).toEqual({ pods: '20' });
    const gone = await api.request('GET', path);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ reason: 'NotFound', message: 'resourcequotas "compute" not found', details: { name: 'compute', kind: 'resourcequotas' } });
    expect(await events('team-a')).toEqual([
      { type: 'QuotaDefined', actor: 'alice' },
      { type: 'QuotaChanged', actor: 'anonymous' },
      { type: 'QuotaRemoved', actor: 'bob' },
    ]);
  });

  it.each([
    ['a negative hard limit', quota({ pods: '-1' }), 422, 'spec.hard[pods]'],
    ['an unknown scope', { ...quota({ pods: '1' }), spec: { hard: { pods: '1' }, scopes: ['Nope'] } }, 422, 'spec.scopes'],
    ['a quantity that does not parse (a decode error, 400 as in Kubernetes)', quota({ 'requests.cpu': 'abc' }), 400, 'quantities must match'],
    ['an invalid resource name', quota({ 'bad name!': '1' }), 422, 'bad name!'],
    ['a name that differs from the URL', { ...quota({ pods: '1' }), metadata: { name: 'other' } }, 400, 'does not match the name on the URL'],
    ['another namespace', { ...quota({ pods: '1' }), metadata: { namespace: 'team-b' } }, 400, 'namespace of the provided object'],
    ['a garbled resourceVersion', quota({ pods: '1' }, { resourceVersion: 'abc' }), 400, 'metadata.resourceVersion'],
    ['an array body', [1, 2], 400, 'must be a ResourceQuota object'],
  ])('refuses %s and writes nothing', async (_case, body, code, text) => {
    const response = await api.request('PUT', '/v1/namespaces/invalid/resourcequotas/compute', body);
    expect(response.status).toBe(code);
    expect(response.body.kind).toBe('Status');
    expect(JSON.stringify(response.body)).toContain(text);
    expect(await events('invalid')).toEqual([]);
  });

  it('answers malformed JSON and an invalid namespace in the path with 400', async () => {
    expect((await api.request('PUT', '/v1/namespaces/x/resourcequotas/q', '{"kind":')).status).toBe(400);
    const badNamespace = await api.request('GET', '/v1/namespaces/Bad_NS/resourcequotas');
    expect(badNamespace.status).toBe(400);
    expect(badNamespace.body.message).toContain('invalid namespace "Bad_NS"');
  });

  it('allows lowering hard below current usage, and shows used > hard', async () => {
    const path = '/v1/namespaces/lowered/resourcequotas/compute';
    await api.request('PUT', path, quota({ 'requests.cpu': '2' }));
    const ledger = api.app.get(Ledger);
    for (const name of ['p1', 'p2']) {
      const outcome = await ledger.admit({
        namespace: 'lowered',
        source: 'rest',
        request: {
          operation: 'CREATE',
          groupResource: { group: '', resource: 'pods' },
          namespace: 'lowered',
          name,
          object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, uid: name }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '500m' } } }] } },
        },
        dryRun: false,
        requester: 'test',
      });
      expect(outcome.result.allowed).toBe(true);
    }
    const lowered = await api.request('PUT', path, quota({ 'requests.cpu': '500m' }));
    expect(lowered.status).toBe(200);
    expect(lowered.body.status).toEqual({ hard: { 'requests.cpu': '500m' }, used: { 'requests.cpu': '1' } });
  });
});

describe('admin API: LimitRange', () => {
  it('stores the API server defaults, canonical quantities, and deletes', async () => {
    const path = '/v1/namespaces/team-l/limitranges/limits';
    const created = await api.request('PUT', path, {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'limits' },
      spec: { limits: [{ type: 'Container', max: { memory: '1.5Gi', cpu: '2' } }] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'LimitRange',
      metadata: { name: 'limits', namespace: 'team-l', resourceVersion: '1' },
      spec: { limits: [{ type: 'Container', max: { memory: '1536Mi', cpu: '2' }, default: { memory: '1536Mi', cpu: '2' }, defaultRequest: { memory: '1536Mi', cpu: '2' } }] },
    });
    expect((await api.request('GET', '/v1/namespaces/team-l/limitranges')).body).toMatchObject({ kind: 'LimitRangeList', items: [{ metadata: { name: 'limits' } }] });
    expect((await api.request('PUT', path, { kind: 'LimitRange', apiVersion: 'v1', spec: { limits: [{ type: 'Nope' }] } })).status).toBe(422);
    expect((await api.request('DELETE', path)).status).toBe(200);
    expect((await api.request('GET', path)).status).toBe(404);
    expect((await api.request('DELETE', path)).status).toBe(404);
  });
});
