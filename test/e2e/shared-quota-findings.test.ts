import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

/**
 * The attack and audit findings about shared quotas, over HTTP.
 *
 * Finding 3: a REST reservation of a plain `resources` list refused by a shared quota is worded,
 * detailed and recorded exactly as an object's denial is: the quota by its kind and name (never
 * its internal key), quotaKind/quotaNamespace in details.denial, and a marker on the shared
 * quota's usage series.
 *
 * Finding 10: a namespace relabelled into a ClusterResourceQuota brings its usage along and can
 * leave the shared quota above hard; its usage says which resources, and a gauge counts them.
 */
let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlshareddeny');
});
afterAll(async () => {
  await api?.close();
});

const metric = async (name: string, labels: string): Promise<number | undefined> => {
  const text = await (await fetch(`${api.base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
};

const putNamespace = (name: string, labels: Record<string, string>) =>
  api.request('PUT', `/v1/namespaces/${name}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const reserveList = (namespace: string, name: string) =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, {
    kind: 'Widget',
    resource: 'widgets.example.com',
    name,
    resources: { pods: '1' },
  });
const reservePod = (namespace: string, name: string) =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, {
    kind: 'Pod',
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, uid: `uid-${namespace}-${name}` },
      spec: { containers: [{ name: 'app', image: 'x' }] },
    },
  });

describe('a plain resources list refused by a shared quota', () => {
  it('names a ClusterResourceQuota as an object denial does, and marks its series', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    expect((await putNamespace('acme-a', { tenant: 'acme' })).status).toBe(201);
    const crq = {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'acme' },
      spec: { selector: { labels: { matchLabels: { tenant: 'acme' } } }, quota: { hard: { pods: '1' } } },
    };
    expect((await api.request('PUT', '/v1/clusterresourcequotas/acme', crq)).status).toBe(201);
    expect((await reserveList('acme-a', 'w1')).status).toBe(201);
    const list = await reserveList('acme-a', 'w2');
    const object = await reservePod('acme-a', 'p1');
    expect(list.status).toBe(403);
    expect(list.body.message).toBe(
      'widgets.example.com "w2" is forbidden: exceeded cluster quota: acme, requested: pods=1, used: pods=1, limited: pods=1',
    );
    expect(list.body.details.denial).toEqual({ ...object.body.details.denial });
    expect(list.body.details.denial).toMatchObject({
      kind: 'Exceeded',
      quota: 'acme',
      quotaKind: 'ClusterResourceQuota',
      resource: 'pods',
    });

    const until = new Date(Date.now() + 1000).toISOString();
    const series = await api.request('GET', `/v1/clusterresourcequotas/acme/usage/series?since=${since}&until=${until}&points=5`);
    expect(series.status).toBe(200);
    const denials = series.body.markers.filter((m: { kind: string }) => m.kind === 'denial').map((m: { name: string }) => m.name);
    expect(denials).toEqual(['w2', 'p1']);
    // A namespace with no ResourceQuota of its own names the shared quota covering it, in its usage and in the list (it said "no quota").
    const covering = [{ kind: 'ClusterResourceQuota', name: 'acme', hard: { pods: '1' }, used: { pods: '1' } }];
    expect((await api.request('GET', '/v1/namespaces/acme-a/usage')).body).toMatchObject({ quotas: [], shared: covering });
    expect((await api.request('GET', '/v1/namespaces?contains=acme-a')).body.items).toEqual([
      expect.objectContaining({ namespace: 'acme-a', quotas: [], shared: covering }),
    ]);
    // Each says which quota refused and for what: the cluster quota's pods chart draws both.
    for (const marker of series.body.markers.filter((m: { kind: string }) => m.kind === 'denial'))
      expect(marker).toMatchObject({ quota: 'acme', quotaKind: 'ClusterResourceQuota', resources: ['pods'] });
  });

  // The denials earlier versions recorded under the quota's key are in the ledger for good; its page shows them too.
  it("marks the series with a denial recorded under the quota's key, as earlier versions recorded a plain list's", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const denied = await reserveList('acme-a', 'legacy-1');
    expect(denied.status).toBe(403);
    // The decision as such a version wrote it: `quota` the key, no quotaKind (the log is append-only; the test steps around that).
    await api.db.dataSource.query('ALTER TABLE admission_decisions DISABLE TRIGGER admission_decisions_no_update_delete');
    try {
      await api.db.dataSource.query(
        `UPDATE admission_decisions SET result = jsonb_set(result #- '{denial,quotaKind}', '{denial,quota}', '"clusterresourcequotas/acme"') WHERE name = 'legacy-1'`,
      );
    } finally {
      await api.db.dataSource.query('ALTER TABLE admission_decisions ENABLE TRIGGER admission_decisions_no_update_delete');
    }
    const until = new Date(Date.now() + 1000).toISOString();
    const series = await api.request('GET', `/v1/clusterresourcequotas/acme/usage/series?since=${since}&until=${until}&points=5`);
    expect(series.body.markers.filter((m: { name?: string }) => m.name === 'legacy-1')).toEqual([
      expect.objectContaining({ kind: 'denial', quota: 'clusterresourcequotas/acme', resources: ['pods'] }),
    ]);
  });

  it('names a HierarchicalResourceQuota as HNC does, with its namespace, and marks its series', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    expect((await putNamespace('tree-child', { 'tree.tree.hnc.x-k8s.io/depth': '1' })).status).toBe(201);
    const hrq = {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: 'sub' },
      spec: { hard: { pods: '1' } },
    };
    expect((await api.request('PUT', '/v1/namespaces/tree/hierarchicalresourcequotas/sub', hrq)).status).toBe(201);
    expect((await reserveList('tree', 'w1')).status).toBe(201);
    const list = await reserveList('tree-child', 'w2');
    expect(list.status).toBe(403);
    expect(list.body.message).toBe(
      'widgets.example.com "w2" is forbidden: exceeded hierarchical quota in namespace "tree": "sub", requested: pods=1, used: pods=1, limited: pods=1',
    );
    expect(list.body.details.denial).toMatchObject({
      kind: 'Exceeded',
      quota: 'sub',
      quotaKind: 'HierarchicalResourceQuota',
      quotaNamespace: 'tree',
    });

    const until = new Date(Date.now() + 1000).toISOString();
    const series = await api.request(
      'GET',
      `/v1/namespaces/tree/hierarchicalresourcequotas/sub/usage/series?since=${since}&until=${until}&points=5`,
    );
    expect(series.body.markers.filter((m: { kind: string }) => m.kind === 'denial').map((m: { name: string }) => m.name)).toEqual(['w2']);
  });
});

describe('a shared quota left above hard by a namespace relabelled into it', () => {
  it('says which resources are over hard in its usage, now and as it was, and counts it in a gauge', async () => {
    const crq = (pods: string) => ({
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'over' },
      spec: { selector: { labels: { matchLabels: { tenant: 'over' } } }, quota: { hard: { pods } } },
    });
    expect((await putNamespace('over-a', { tenant: 'over' })).status).toBe(201);
    expect((await putNamespace('over-b', { tenant: 'elsewhere' })).status).toBe(201);
    expect((await api.request('PUT', '/v1/clusterresourcequotas/over', crq('2'))).status).toBe(201);
    expect((await reservePod('over-a', 'p1')).status).toBe(201);
    // over-b's own pods, charged by a quota of its own before it joins.
    expect(
      (
        await api.request('PUT', '/v1/namespaces/over-b/resourcequotas/own', {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          spec: { hard: { pods: '10' } },
        })
      ).status,
    ).toBe(201);
    for (const name of ['p2', 'p3']) expect((await reservePod('over-b', name)).status).toBe(201);
    const within = await api.request('GET', '/v1/clusterresourcequotas/over/usage');
    expect(within.body).toMatchObject({ used: { pods: '1' }, overHard: [] });
    expect(await metric('quota_ledger_shared_quotas_over_hard', 'kind="ClusterResourceQuota"')).toBe(0);

    expect((await putNamespace('over-b', { tenant: 'over' })).status).toBe(200);
    const joined = new Date(Date.now() + 5).toISOString();
    const over = await api.request('GET', '/v1/clusterresourcequotas/over/usage');
    expect(over.body).toMatchObject({ hard: { pods: '2' }, used: { pods: '3' }, overHard: [{ resource: 'pods', used: '3', hard: '2' }] });
    expect((await reservePod('over-a', 'p4')).status).toBe(403);
    expect(await metric('quota_ledger_shared_quotas_over_hard', 'kind="ClusterResourceQuota"')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await api.request('GET', `/v1/clusterresourcequotas/over/usage?at=${joined}`)).body.overHard).toEqual([
      { resource: 'pods', used: '3', hard: '2' },
    ]);

    // Raised above usage again: nothing is over hard.
    expect((await api.request('PUT', '/v1/clusterresourcequotas/over', crq('5'))).status).toBe(200);
    expect((await api.request('GET', '/v1/clusterresourcequotas/over/usage')).body.overHard).toEqual([]);
    expect(await metric('quota_ledger_shared_quotas_over_hard', 'kind="ClusterResourceQuota"')).toBe(0);
  });
});
