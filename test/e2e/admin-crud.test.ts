import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerCommands } from '@quota/ledger';
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

const eventCount = async (): Promise<number> => {
  const rows: { count: string }[] = await api.db.dataSource.query(`SELECT count(*) FROM ledger_events`);
  return Number(rows[0]?.count);
};

const quota = (hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'compute', labels: { team: 'a' }, ...extra },
  spec: { hard },
});

const pod = (name: string, cpu: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: name },
  spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }] },
});

const CONFLICT_MESSAGE =
  'Operation cannot be fulfilled on resourcequotas "compute": the object has been modified; please apply your changes to the latest version and try again';

describe('admin API: ResourceQuota', () => {
  it('warns, on a PUT, of an object count admission never sees (counted only after the fact), and of nothing else', async () => {
    const path = '/v1/namespaces/team-w/resourcequotas/compute';
    const routed = await api.request(
      'PUT',
      path,
      quota({ 'count/configmaps': '5', 'count/deployments.apps': '2', 'count/poddisruptionbudgets.policy': '2', pods: '3' }),
    );
    expect(routed.status).toBe(201);
    expect(routed.headers.get('warning')).toBeNull();
    const unrouted = await api.request('PUT', path, quota({ 'count/resourcequotas': '2', 'count/configmaps': '5' }));
    expect(unrouted.status).toBe(200);
    expect(unrouted.headers.get('warning')).toBe(
      '299 - "count/resourcequotas is counted only after the fact: the webhooks are not sent resourcequotas writes (quotas are defined through the ledger), so a create past it is not refused; the reconciler counts what exists"',
    );
  });

  it('creates, reads, replaces with optimistic concurrency, lists and deletes a quota, each change a ledger event with its actor', async () => {
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
    expect(Number.isNaN(Date.parse(created.body.metadata.creationTimestamp))).toBe(false);

    // A read's status.used is the projection's, annotated with the version it reflects.
    const beforeProjection = await api.request('GET', path);
    expect(beforeProjection.body.metadata.annotations).toEqual({
      'quota-ledger.io/used-version': '0',
      'quota-ledger.io/ledger-version': '1',
    });
    await api.settle();
    const read = await api.request('GET', path);
    expect(read.status).toBe(200);
    const { annotations, ...metadata } = read.body.metadata;
    expect({ ...read.body, metadata }).toEqual(created.body);
    expect(annotations).toMatchObject({ 'quota-ledger.io/used-version': '1', 'quota-ledger.io/ledger-version': '1' });
    expect(Number.isNaN(Date.parse(annotations['quota-ledger.io/used-projected-at']))).toBe(false);

    const replaced = await api.request('PUT', path, quota({ pods: '20' }, { resourceVersion: '1' }));
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata).toMatchObject({
      resourceVersion: '2',
      uid: created.body.metadata.uid,
      creationTimestamp: created.body.metadata.creationTimestamp,
    });

    const stale = await api.request('PUT', path, quota({ pods: '30' }, { resourceVersion: '1' }));
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ kind: 'Status', status: 'Failure', code: 409, reason: 'Conflict', message: CONFLICT_MESSAGE });

    const current = await api.request('PUT', path, quota({ pods: '30' }, { resourceVersion: '2' }));
    expect(current.status).toBe(200);
    expect(current.body.metadata.resourceVersion).toBe('3');
    expect(current.body.status.hard).toEqual({ pods: '30' });

    const list = await api.request('GET', '/v1/namespaces/team-a/resourcequotas');
    expect(list.status).toBe(200);
    const { annotations: _freshness, ...listedMetadata } = list.body.items[0].metadata;
    expect({ ...list.body, items: [{ ...list.body.items[0], metadata: listedMetadata }] }).toEqual({
      apiVersion: 'v1',
      kind: 'ResourceQuotaList',
      metadata: {},
      items: [current.body],
    });

    const deleted = await api.request('DELETE', path, undefined, { 'x-remote-user': 'bob' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(current.body);
    const gone = await api.request('GET', path);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      message: 'resourcequotas "compute" not found',
      details: { name: 'compute', kind: 'resourcequotas' },
    });
    const deletedAgain = await api.request('DELETE', path);
    expect(deletedAgain.status).toBe(404);
    expect(deletedAgain.body.message).toBe('resourcequotas "compute" not found');
    expect((await api.request('GET', '/v1/namespaces/team-a/resourcequotas')).body.items).toEqual([]);

    expect(await events('team-a')).toEqual([
      { type: 'QuotaDefined', actor: 'alice' },
      { type: 'QuotaChanged', actor: 'anonymous' },
      { type: 'QuotaChanged', actor: 'anonymous' },
      { type: 'QuotaRemoved', actor: 'bob' },
    ]);
  });

  it('appends nothing when the same quota is put twice, and ignores a status in the body', async () => {
    const path = '/v1/namespaces/idem/resourcequotas/compute';
    const first = await api.request('PUT', path, quota({ 'requests.cpu': '1500m' }));
    expect(first.status).toBe(201);
    const before = await eventCount();
    const second = await api.request('PUT', path, {
      ...quota({ 'requests.cpu': '1.5' }),
      status: { hard: { 'requests.cpu': '99' }, used: { 'requests.cpu': '98' } },
    });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.body.status).toEqual({ hard: { 'requests.cpu': '1500m' }, used: { 'requests.cpu': '0' } });
    expect(await eventCount()).toBe(before);
    expect(await events('idem')).toEqual([{ type: 'QuotaDefined', actor: 'anonymous' }]);
  });

  it('answers an empty list for a namespace the ledger has never seen', async () => {
    const list = await api.request('GET', '/v1/namespaces/never-seen/resourcequotas');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ apiVersion: 'v1', kind: 'ResourceQuotaList', metadata: {}, items: [] });
    expect((await api.request('GET', '/v1/namespaces/never-seen/resourcequotas/compute')).status).toBe(404);
    expect((await api.request('DELETE', '/v1/namespaces/never-seen/resourcequotas/compute')).status).toBe(404);
  });

  it('refuses a resourceVersion for a quota that does not exist yet', async () => {
    const response = await api.request(
      'PUT',
      '/v1/namespaces/fresh/resourcequotas/compute',
      quota({ pods: '1' }, { resourceVersion: '7' }),
    );
    expect(response.status).toBe(409);
    expect(response.body.reason).toBe('Conflict');
    expect(await events('fresh')).toEqual([]);
  });

  it.each([
    ['a negative hard limit', quota({ pods: '-1' }), 422, 'spec.hard[pods]'],
    ['an unknown scope', { ...quota({ pods: '1' }), spec: { hard: { pods: '1' }, scopes: ['Nope'] } }, 422, 'spec.scopes'],
    ['an invalid resource name', quota({ 'bad name!': '1' }), 422, 'spec.hard[bad name!]'],
    ['an unknown field in the spec', { ...quota({ pods: '1' }), spec: { hard: { pods: '1' }, hardd: {} } }, 400, 'spec.hardd'],
  ])('refuses %s, naming the field, and writes nothing', async (_case, body, code, field) => {
    const before = await eventCount();
    const response = await api.request('PUT', '/v1/namespaces/invalid/resourcequotas/compute', body);
    expect(response.status).toBe(code);
    expect(response.body).toMatchObject({ kind: 'Status', code });
    expect(response.body.details.causes.map((c: { field: string }) => c.field)).toContain(field);
    expect(await eventCount()).toBe(before);
  });

  // A quantity that does not parse fails Go's JSON decoding in the API server, before
  // validation, so Kubernetes answers 400 BadRequest there, not 422 Invalid.
  it('refuses a quantity that does not parse with 400, naming the field, and writes nothing', async () => {
    const before = await eventCount();
    const response = await api.request('PUT', '/v1/namespaces/invalid/resourcequotas/compute', quota({ 'requests.cpu': 'abc' }));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect(response.body.message).toContain(
      'spec.hard[requests.cpu]: Invalid value: "abc": must be a quantity such as "500m", "2", "1Gi" or "1e3"',
    );
    expect(response.body.details.causes.map((c: { field: string }) => c.field)).toContain('spec.hard[requests.cpu]');
    expect(await eventCount()).toBe(before);
  });

  it.each([
    [
      'a name that differs from the URL',
      { ...quota({ pods: '1' }), metadata: { name: 'other' } },
      'the name of the object (other) does not match the name on the URL (compute)',
    ],
    [
      'another namespace',
      { ...quota({ pods: '1' }), metadata: { namespace: 'team-b' } },
      'the namespace of the provided object does not match the namespace sent on the request',
    ],
    ['a resourceVersion that is not a decimal integer', quota({ pods: '1' }, { resourceVersion: 'abc' }), 'metadata.resourceVersion'],
    ['a resourceVersion that is a number, not a string', quota({ pods: '1' }, { resourceVersion: 3 }), 'metadata.resourceVersion'],
    ['an array body', [1, 2], 'must be a ResourceQuota object'],
    ['a JSON string body', '"compute"', 'not valid JSON'],
    ['malformed JSON', '{"kind":', 'not valid JSON'],
  ])('answers %s with 400 and writes nothing', async (_case, body, text) => {
    const before = await eventCount();
    const response = await api.request('PUT', '/v1/namespaces/invalid/resourcequotas/compute', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect(response.body.message).toContain(text);
    expect(await eventCount()).toBe(before);
  });

  it('answers an invalid namespace or name in the path with 400', async () => {
    const badNamespace = await api.request('GET', '/v1/namespaces/Bad_NS/resourcequotas');
    expect(badNamespace.status).toBe(400);
    expect(badNamespace.body.message).toContain('invalid namespace "Bad_NS"');
    expect((await api.request('PUT', '/v1/namespaces/Bad_NS/resourcequotas/compute', quota({ pods: '1' }))).status).toBe(400);
    expect((await api.request('PUT', '/v1/namespaces/ok/resourcequotas/Bad_Name', quota({ pods: '1' }))).status).toBe(400);
  });

  it('allows lowering hard below current usage, and shows used > hard', async () => {
    const path = '/v1/namespaces/lowered/resourcequotas/compute';
    expect((await api.request('PUT', path, quota({ 'requests.cpu': '2' }))).status).toBe(201);
    const ledger = api.app.get(LedgerCommands);
    for (const name of ['p1', 'p2']) {
      const outcome = await ledger.admit({
        namespace: 'lowered',
        source: 'rest',
        request: {
          operation: 'CREATE',
          groupResource: { group: '', resource: 'pods' },
          namespace: 'lowered',
          name,
          object: pod(name, '500m'),
        },
        dryRun: false,
        requester: 'test',
      });
      expect(outcome.result.allowed).toBe(true);
    }
    await api.settle();
    expect((await api.request('GET', path)).body.status).toEqual({ hard: { 'requests.cpu': '2' }, used: { 'requests.cpu': '1' } });

    const lowered = await api.request('PUT', path, quota({ 'requests.cpu': '500m' }));
    expect(lowered.status).toBe(200);
    expect(lowered.body.status).toEqual({ hard: { 'requests.cpu': '500m' }, used: { 'requests.cpu': '1' } });
    await api.settle();
    expect((await api.request('GET', path)).body.status).toEqual({ hard: { 'requests.cpu': '500m' }, used: { 'requests.cpu': '1' } });
  });

  it("counts the namespace's quotas against count/resourcequotas and resourcequotas: a create past them is 403 exceeded quota, a replace is not", async () => {
    const path = (name: string) => `/v1/namespaces/counted/resourcequotas/${name}`;
    const named = (name: string, hard: Record<string, string>) => ({ ...quota(hard), metadata: { name } });
    const objects = await api.request('PUT', path('objects'), named('objects', { 'count/resourcequotas': '2', resourcequotas: '2' }));
    expect(objects.status).toBe(201);
    // It counts itself, as Kubernetes' quota controller counts every ResourceQuota in the namespace.
    expect(objects.body.status.used).toEqual({ 'count/resourcequotas': '1', resourcequotas: '1' });
    expect((await api.request('PUT', path('compute'), named('compute', { pods: '1' }))).status).toBe(201);
    await api.settle();
    expect((await api.request('GET', path('objects'))).body.status).toEqual({
      hard: { 'count/resourcequotas': '2', resourcequotas: '2' },
      used: { 'count/resourcequotas': '2', resourcequotas: '2' },
    });

    const before = await eventCount();
    const refused = await api.request('PUT', path('storage'), named('storage', { 'requests.storage': '10Gi' }));
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message:
        'resourcequotas "storage" is forbidden: exceeded quota: objects, requested: count/resourcequotas=1,resourcequotas=1, used: count/resourcequotas=2,resourcequotas=2, limited: count/resourcequotas=2,resourcequotas=2',
      details: { name: 'storage', kind: 'resourcequotas' },
    });
    expect(await eventCount()).toBe(before);

    // Replacing a quota creates nothing; deleting one makes room.
    expect((await api.request('PUT', path('compute'), named('compute', { pods: '2' }))).status).toBe(200);
    expect((await api.request('DELETE', path('compute'))).status).toBe(200);
    const storage = await api.request('PUT', path('storage'), named('storage', { 'requests.storage': '10Gi' }));
    expect(storage.status).toBe(201);
    const list = await api.request('GET', '/v1/namespaces/counted/resourcequotas');
    expect(
      list.body.items.map((q: { metadata: { name: string }; status: { used: Record<string, string> } }) => [
        q.metadata.name,
        q.status.used,
      ]),
    ).toEqual([
      ['objects', { 'count/resourcequotas': '2', resourcequotas: '2' }],
      ['storage', { 'requests.storage': '0' }],
    ]);
  });
});

describe('admin API: LimitRange', () => {
  const path = '/v1/namespaces/team-l/limitranges/limits';
  const limitRange = (limits: unknown[], extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'limits', ...extra },
    spec: { limits },
  });

  it('stores the API server defaults with canonical quantities, then reads, lists, replaces and deletes', async () => {
    const created = await api.request(
      'PUT',
      path,
      limitRange([
        { type: 'Container', max: { memory: '1.5Gi', cpu: '2' }, min: { cpu: '0.1' } },
        { type: 'Pod', max: { cpu: '4000m' }, maxLimitRequestRatio: { cpu: '2' } },
      ]),
      { 'x-remote-user': 'carol' },
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: {
        name: 'limits',
        namespace: 'team-l',
        uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        resourceVersion: '1',
        creationTimestamp: expect.any(String),
      },
      spec: {
        limits: [
          // A Container item's default and defaultRequest come from max, as the API server defaults them.
          {
            type: 'Container',
            max: { memory: '1536Mi', cpu: '2' },
            min: { cpu: '100m' },
            default: { memory: '1536Mi', cpu: '2' },
            defaultRequest: { memory: '1536Mi', cpu: '2' },
          },
          { type: 'Pod', max: { cpu: '4' }, maxLimitRequestRatio: { cpu: '2' } },
        ],
      },
    });
    expect(created.body).not.toHaveProperty('status');

    const read = await api.request('GET', path);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    const list = await api.request('GET', '/v1/namespaces/team-l/limitranges');
    expect(list.body).toEqual({ apiVersion: 'v1', kind: 'LimitRangeList', metadata: {}, items: [created.body] });

    const stale = await api.request('PUT', path, limitRange([{ type: 'Container', max: { cpu: '1' } }], { resourceVersion: '9' }));
    expect(stale.status).toBe(409);
    expect(stale.body.message).toBe(
      'Operation cannot be fulfilled on limitranges "limits": the object has been modified; please apply your changes to the latest version and try again',
    );
    const replaced = await api.request('PUT', path, limitRange([{ type: 'Container', max: { cpu: '1' } }], { resourceVersion: '1' }));
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata).toMatchObject({ resourceVersion: '2', uid: created.body.metadata.uid });
    expect(replaced.body.spec.limits).toEqual([
      { type: 'Container', max: { cpu: '1' }, default: { cpu: '1' }, defaultRequest: { cpu: '1' } },
    ]);
    const again = await api.request('PUT', path, limitRange([{ type: 'Container', max: { cpu: '1000m' } }]));
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe('2');

    const deleted = await api.request('DELETE', path, undefined, { 'x-remote-user': 'dave' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(replaced.body);
    const gone = await api.request('GET', path);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({
      reason: 'NotFound',
      message: 'limitranges "limits" not found',
      details: { name: 'limits', kind: 'limitranges' },
    });
    expect((await api.request('DELETE', path)).status).toBe(404);
    expect((await api.request('GET', '/v1/namespaces/team-l/limitranges')).body.items).toEqual([]);

    expect(await events('team-l')).toEqual([
      { type: 'LimitRangeDefined', actor: 'carol' },
      { type: 'LimitRangeChanged', actor: 'anonymous' },
      { type: 'LimitRangeRemoved', actor: 'dave' },
    ]);
  });

  it("refuses to change or delete one that came from the cluster's LimitRange object (409), and a REST write cannot claim to be one", async () => {
    const clusterPath = '/v1/namespaces/team-lc/limitranges/from-cluster';
    const fromCluster = {
      name: 'from-cluster',
      spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '250m' } }] },
      metadata: { annotations: { 'quota-ledger.io/managed-by': 'limitranges' } },
    };
    await api.app.get(LedgerCommands).putLimitRange('team-lc', fromCluster, { actor: 'system:reconciler' });
    const put = await api.request('PUT', clusterPath, {
      ...limitRange([{ type: 'Container', max: { cpu: '1' } }]),
      metadata: { name: 'from-cluster' },
    });
    const removal = await api.request('DELETE', clusterPath);
    for (const refused of [put, removal]) {
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        kind: 'Status',
        reason: 'Conflict',
        code: 409,
        details: { name: 'from-cluster', kind: 'limitranges' },
      });
      expect(refused.body.message).toContain('it is managed by the cluster object limitranges "from-cluster" in namespace "team-lc"');
    }
    expect((await api.request('GET', clusterPath)).body.spec).toEqual(fromCluster.spec);

    // Our annotations are the system's: a REST PUT's claim to be from the cluster is dropped, so it stays the API's to delete.
    const claimed = await api.request('PUT', '/v1/namespaces/team-lc/limitranges/claims', {
      ...limitRange([]),
      metadata: { name: 'claims', annotations: { 'quota-ledger.io/managed-by': 'limitranges', team: 'c' } },
    });
    expect(claimed.body.metadata.annotations).toEqual({ team: 'c' });
    expect((await api.request('DELETE', '/v1/namespaces/team-lc/limitranges/claims')).status).toBe(200);
  });

  it.each([
    ['an unknown type', limitRange([{ type: 'Nope' }]), 422, 'spec.limits[0].type'],
    ['min above max', limitRange([{ type: 'Container', max: { cpu: '1' }, min: { cpu: '2' } }]), 422, 'spec.limits[0].min[cpu]'],
    ['a name that differs from the URL', limitRange([], { name: 'other' }), 400, 'metadata.name'],
    ['a string body', '"limits"', 400, undefined],
  ])('refuses %s and writes nothing', async (_case, body, code, field) => {
    const before = await eventCount();
    const response = await api.request('PUT', '/v1/namespaces/invalid-l/limitranges/limits', body);
    expect(response.status).toBe(code);
    expect(response.body.kind).toBe('Status');
    if (field) expect(response.body.details.causes.map((c: { field: string }) => c.field)).toContain(field);
    expect(await eventCount()).toBe(before);
  });
});
