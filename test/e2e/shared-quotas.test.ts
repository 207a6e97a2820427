import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { disagreements } from '../support/shared-quotas.js';
import { poolOf } from '../support/api.js';
import { ClusterWriter } from '@quota/ledger';

/**
 * Quotas over several namespaces through HTTP: Namespace objects, ClusterResourceQuota (with
 * AppliedClusterResourceQuota) and HierarchicalResourceQuota, their validation, history, and
 * admission charging them.
 */
let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlsharedapi');
});
afterAll(async () => {
  await api?.close();
});

const namespace = (name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels, ...extra },
});
const crq = (name: string, labels: Record<string, string>, hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'quota.openshift.io/v1',
  kind: 'ClusterResourceQuota',
  metadata: { name, ...extra },
  spec: { selector: { labels: { matchLabels: labels } }, quota: { hard } },
});
const reserve = (ns: string, i: number, cpu = '100m') =>
  api.request('POST', `/v1/namespaces/${ns}/reservations`, {
    requestId: `r-${ns}-${i}`,
    kind: 'Pod',
    name: `pod-${i}`,
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${i}`, uid: `uid-${ns}-${i}` },
      spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu } } }] },
    },
  });

describe('Namespace objects', () => {
  it('are created, read, replaced with optimistic concurrency, listed in history and deleted', async () => {
    const created = await api.request('PUT', '/v1/namespaces/ns-one', namespace('ns-one', { team: 'red' }), { 'x-remote-user': 'alice' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'ns-one', resourceVersion: '1', labels: { team: 'red' } },
      status: { phase: 'Active' },
    });
    expect(created.body.metadata.namespace).toBeUndefined();
    expect((await api.request('GET', '/v1/namespaces/ns-one')).body).toEqual(created.body);

    const same = await api.request('PUT', '/v1/namespaces/ns-one', namespace('ns-one', { team: 'red' }));
    expect(same.status).toBe(200);
    expect(same.body.metadata.resourceVersion).toBe('1');
    const stale = await api.request('PUT', '/v1/namespaces/ns-one', namespace('ns-one', { team: 'blue' }, { resourceVersion: '7' }));
    expect(stale.status).toBe(409);
    const changed = await api.request('PUT', '/v1/namespaces/ns-one', namespace('ns-one', { team: 'blue' }, { resourceVersion: '1' }));
    expect(changed.body.metadata).toMatchObject({ resourceVersion: '2', uid: created.body.metadata.uid, labels: { team: 'blue' } });

    const history = await api.request('GET', '/v1/namespaces/ns-one/history');
    expect(history.body.items.map((c: { type: string; changed: string[] }) => [c.type, c.changed])).toEqual([
      ['NamespaceDefined', ['labels.team']],
      ['NamespaceChanged', ['labels.team']],
    ]);
    expect((await api.request('DELETE', '/v1/namespaces/ns-one')).status).toBe(200);
    expect((await api.request('GET', '/v1/namespaces/ns-one')).status).toBe(404);
    expect((await api.request('DELETE', '/v1/namespaces/ns-one')).status).toBe(404);
  });

  it('refuses what the API server refuses, writing nothing', async () => {
    const before = await api.db.dataSource.query(`SELECT count(*)::int AS n FROM ledger_events`);
    const badLabel = await api.request('PUT', '/v1/namespaces/ns-bad', namespace('ns-bad', { 'not a key': 'x' }));
    expect(badLabel.status).toBe(422);
    expect(badLabel.body).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    const badName = await api.request('PUT', '/v1/namespaces/Bad_Name', namespace('Bad_Name', {}));
    expect(badName.status).toBe(400);
    const mismatch = await api.request('PUT', '/v1/namespaces/ns-a', namespace('ns-b', {}));
    expect(mismatch.status).toBe(400);
    expect(await api.db.dataSource.query(`SELECT count(*)::int AS n FROM ledger_events`)).toEqual(before);
  });
});

describe('ClusterResourceQuota', () => {
  it('covers the namespaces its selector picks, charges them in the same transaction, and names itself in a denial', async () => {
    for (const ns of ['crq-a', 'crq-b'])
      expect((await api.request('PUT', `/v1/namespaces/${ns}`, namespace(ns, { tenant: 'acme' }))).status).toBe(201);
    const created = await api.request(
      'PUT',
      '/v1/clusterresourcequotas/acme',
      crq('acme', { tenant: 'acme' }, { pods: '3', 'requests.cpu': '1' }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'acme', resourceVersion: '1' },
      spec: {
        selector: { labels: { matchLabels: { tenant: 'acme' } }, annotations: null },
        quota: { hard: { pods: '3', 'requests.cpu': '1' } },
      },
      status: {
        total: { hard: { pods: '3', 'requests.cpu': '1' }, used: { pods: '0', 'requests.cpu': '0' } },
        namespaces: [
          { namespace: 'crq-a', status: { hard: { pods: '3', 'requests.cpu': '1' }, used: { pods: '0', 'requests.cpu': '0' } } },
          { namespace: 'crq-b', status: { hard: { pods: '3', 'requests.cpu': '1' }, used: { pods: '0', 'requests.cpu': '0' } } },
        ],
      },
    });
    expect((await reserve('crq-a', 1)).status).toBe(201);
    expect((await reserve('crq-b', 2)).status).toBe(201);
    expect((await reserve('crq-b', 3)).status).toBe(201);
    const denied = await reserve('crq-a', 4);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'pods "pod-4" is forbidden: exceeded cluster quota: acme, requested: pods=1, used: pods=3, limited: pods=3',
    );
    expect(denied.body.details.denial).toMatchObject({
      kind: 'Exceeded',
      quota: 'acme',
      quotaKind: 'ClusterResourceQuota',
      resource: 'pods',
      used: '3',
      hard: '3',
    });

    const read = await api.request('GET', '/v1/clusterresourcequotas/acme');
    expect(read.body.status.total.used).toEqual({ pods: '3', 'requests.cpu': '300m' });
    expect(
      read.body.status.namespaces.map((n: { namespace: string; status: { used: { pods: string } } }) => [n.namespace, n.status.used.pods]),
    ).toEqual([
      ['crq-a', '1'],
      ['crq-b', '2'],
    ]);
    const list = await api.request('GET', '/v1/clusterresourcequotas');
    expect(list.body).toMatchObject({ kind: 'ClusterResourceQuotaList', items: [read.body] });

    const applied = await api.request('GET', '/v1/namespaces/crq-b/appliedclusterresourcequotas');
    expect(applied.body.kind).toBe('AppliedClusterResourceQuotaList');
    expect(applied.body.items[0]).toMatchObject({
      kind: 'AppliedClusterResourceQuota',
      metadata: { name: 'acme', namespace: 'crq-b' },
      status: read.body.status,
    });
    expect((await api.request('GET', '/v1/namespaces/crq-b/appliedclusterresourcequotas/acme')).status).toBe(200);
    expect((await api.request('GET', '/v1/namespaces/other/appliedclusterresourcequotas/acme')).status).toBe(404);

    // Raising the limit is a change with history; a stale resourceVersion is a conflict.
    expect(
      (
        await api.request(
          'PUT',
          '/v1/clusterresourcequotas/acme',
          crq('acme', { tenant: 'acme' }, { pods: '4', 'requests.cpu': '1' }, { resourceVersion: '9' }),
        )
      ).status,
    ).toBe(409);
    const raised = await api.request(
      'PUT',
      '/v1/clusterresourcequotas/acme',
      crq('acme', { tenant: 'acme' }, { pods: '4', 'requests.cpu': '1' }, { resourceVersion: '1' }),
    );
    expect(raised.status).toBe(200);
    expect(raised.body.metadata.resourceVersion).toBe('2');
    expect((await reserve('crq-a', 5)).status).toBe(201);
    const history = await api.request('GET', '/v1/clusterresourcequotas/acme/history');
    expect(history.body.items.map((c: { type: string; changed: string[] }) => [c.type, c.changed])).toEqual([
      ['SharedQuotaDefined', ['pods', 'requests.cpu', 'selector']],
      ['SharedQuotaChanged', ['pods']],
    ]);
    expect(await disagreements(poolOf(api.db.dataSource))).toEqual([]);
  });

  it('moves a namespace in and out with its labels, and refuses a selector that selects everything', async () => {
    const out = await api.request('PUT', '/v1/namespaces/crq-b', namespace('crq-b', { tenant: 'other' }));
    expect(out.status).toBe(200);
    const read = await api.request('GET', '/v1/clusterresourcequotas/acme');
    expect(read.body.status.namespaces.map((n: { namespace: string }) => n.namespace)).toEqual(['crq-a']);
    expect(read.body.status.total.used.pods).toBe('2');
    expect((await api.request('GET', '/v1/namespaces/crq-b/appliedclusterresourcequotas')).body.items).toEqual([]);

    const everything = await api.request('PUT', '/v1/clusterresourcequotas/all', {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'all' },
      spec: { selector: { labels: {} }, quota: { hard: { pods: '1' } } },
    });
    expect(everything.status).toBe(422);
    expect(everything.body.message).toContain('must restrict the selected projects');
    const matchExpressions = Array.from({ length: 65 }, (_, i) => ({ key: `k${i}`, operator: 'Exists' }));
    const tooMany = await api.request('PUT', '/v1/clusterresourcequotas/many', {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'many' },
      spec: { selector: { labels: { matchExpressions } }, quota: { hard: { pods: '1' } } },
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.details.causes[0]).toMatchObject({ reason: 'FieldValueTooMany', field: 'spec.selector.labels.matchExpressions' });

    const removed = await api.request('DELETE', '/v1/clusterresourcequotas/acme');
    expect(removed.status).toBe(200);
    expect((await api.request('GET', '/v1/clusterresourcequotas/acme')).status).toBe(404);
    expect((await reserve('crq-a', 6)).status).toBe(201);
    expect(await disagreements(poolOf(api.db.dataSource))).toEqual([]);
  });
});

describe('HierarchicalResourceQuota', () => {
  it('covers its namespace and every descendant HNC labelled, charging all of them atomically', async () => {
    await api.request(
      'PUT',
      '/v1/namespaces/child-1',
      namespace('child-1', { 'org.tree.hnc.x-k8s.io/depth': '1', 'child-1.tree.hnc.x-k8s.io/depth': '0' }),
    );
    const created = await api.request('PUT', '/v1/namespaces/org/hierarchicalresourcequotas/org-pods', {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: 'org-pods' },
      spec: { hard: { pods: '2' } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: 'org-pods', namespace: 'org' },
      spec: { hard: { pods: '2' } },
      status: { hard: { pods: '2' }, used: { pods: '0' } },
    });
    expect((await reserve('org', 1)).status).toBe(201);
    expect((await reserve('child-1', 2)).status).toBe(201);
    const denied = await reserve('child-1', 3);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'pods "pod-3" is forbidden: exceeded hierarchical quota in namespace "org": "org-pods", requested: pods=1, used: pods=2, limited: pods=2',
    );
    expect(denied.body.details.denial).toMatchObject({ quotaKind: 'HierarchicalResourceQuota', quotaNamespace: 'org', quota: 'org-pods' });
    expect((await api.request('GET', '/v1/namespaces/org/hierarchicalresourcequotas')).body.items[0].status.used).toEqual({ pods: '2' });
    expect((await api.request('GET', '/v1/namespaces/org/hierarchicalresourcequotas/org-pods/history')).body.items).toHaveLength(1);
    expect((await api.request('DELETE', '/v1/namespaces/org/hierarchicalresourcequotas/org-pods')).status).toBe(200);
    expect((await reserve('child-1', 4)).status).toBe(201);
    expect(await disagreements(poolOf(api.db.dataSource))).toEqual([]);
  });
});

describe('a shared quota as it was', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** An instant after everything written so far and before anything written next (the ledger's clock). */
  const instant = async (): Promise<string> => {
    await sleep(3);
    const { rows } = await poolOf(api.db.dataSource).query<{ at: Date }>(`SELECT clock_timestamp() AS at`);
    await sleep(3);
    return (rows[0] as { at: Date }).at.toISOString();
  };
  const usageAt = async (path: string, at: string) => {
    const answer = await api.request('GET', `${path}/usage?at=${encodeURIComponent(at)}`);
    expect(answer.status).toBe(200);
    return answer.body;
  };

  it('answers usage at any instant (the sum over the namespaces it covered then) and a series with its limit changes and denials', async () => {
    const before = await instant();
    for (const ns of ['past-a', 'past-b']) await api.request('PUT', `/v1/namespaces/${ns}`, namespace(ns, { tenant: 'past' }));
    expect((await api.request('PUT', '/v1/clusterresourcequotas/past', crq('past', { tenant: 'past' }, { pods: '5' }))).status).toBe(201);
    const created = await instant();
    for (const [ns, i] of [
      ['past-a', 1],
      ['past-b', 2],
      ['past-b', 3],
    ] as const)
      expect((await reserve(ns, i)).status).toBe(201);
    const charged = await instant();
    const now = await api.request('GET', '/v1/clusterresourcequotas/past/usage');
    expect(now.body).toEqual({
      key: 'clusterresourcequotas/past',
      version: 1,
      defined: true,
      hard: { pods: '5' },
      used: { pods: '3' },
      namespaces: [
        { namespace: 'past-a', used: { pods: '1' } },
        { namespace: 'past-b', used: { pods: '2' } },
      ],
      overHard: [],
    });
    await api.request('PUT', '/v1/namespaces/past-b', namespace('past-b', { tenant: 'elsewhere' }));
    const moved = await instant();
    await api.request('PUT', '/v1/clusterresourcequotas/past', crq('past', { tenant: 'past' }, { pods: '1' }));
    expect((await reserve('past-a', 4)).status).toBe(403);
    const lowered = await instant();
    expect((await api.request('DELETE', '/v1/clusterresourcequotas/past')).status).toBe(200);
    const removed = await instant();

    const path = '/v1/clusterresourcequotas/past';
    expect(await usageAt(path, before)).toEqual({
      key: 'clusterresourcequotas/past',
      at: before,
      version: 0,
      defined: false,
      hard: {},
      used: {},
      namespaces: [],
      overHard: [],
    });
    expect(await usageAt(path, created)).toMatchObject({
      version: 1,
      defined: true,
      hard: { pods: '5' },
      used: { pods: '0' },
      namespaces: [
        { namespace: 'past-a', used: { pods: '0' } },
        { namespace: 'past-b', used: { pods: '0' } },
      ],
    });
    const atCharged = await usageAt(path, charged);
    expect(atCharged).toMatchObject({ hard: now.body.hard, used: now.body.used });
    expect(atCharged.namespaces.map(({ namespace: ns, used }: { namespace: string; used: unknown }) => ({ namespace: ns, used }))).toEqual(
      now.body.namespaces,
    );
    expect(await usageAt(path, moved)).toMatchObject({
      version: 1,
      used: { pods: '1' },
      namespaces: [{ namespace: 'past-a', used: { pods: '1' } }],
    });
    expect(await usageAt(path, lowered)).toMatchObject({ version: 2, hard: { pods: '1' }, used: { pods: '1' } });
    expect(await usageAt(path, removed)).toMatchObject({ version: 3, defined: false, hard: {}, used: {}, namespaces: [] });

    const series = await api.request(
      'GET',
      `${path}/usage/series?since=${encodeURIComponent(before)}&until=${encodeURIComponent(removed)}&points=40`,
    );
    expect(series.status).toBe(200);
    expect(series.body.points).toHaveLength(40);
    expect(Math.max(...series.body.points.map((p: { used: { pods?: string } }) => Number(p.used.pods ?? 0)))).toBe(3);
    expect(series.body.markers.map((m: { kind: string; change?: string }) => m.change ?? m.kind)).toEqual([
      'defined',
      'changed',
      'denial',
      'removed',
    ]);
    expect(series.body.markers[2]).toMatchObject({
      kind: 'denial',
      name: 'pod-4',
      message: expect.stringContaining('exceeded cluster quota: past'),
    });

    expect((await api.request('GET', '/v1/clusterresourcequotas/never/usage')).status).toBe(404);
    expect((await api.request('GET', `/v1/clusterresourcequotas/never/usage?at=${encodeURIComponent(removed)}`)).status).toBe(404);
    expect((await api.request('GET', `${path}/usage`)).status).toBe(404);
    const bad = await api.request('GET', `${path}/usage?at=yesterday`);
    expect(bad.status).toBe(400);
    expect(
      (await api.request('GET', `${path}/usage/series?since=${encodeURIComponent(removed)}&until=${encodeURIComponent(before)}`)).status,
    ).toBe(400);
  });

  it('answers the same for a HierarchicalResourceQuota over its subtree', async () => {
    await api.request('PUT', '/v1/namespaces/past-child', namespace('past-child', { 'past-root.tree.hnc.x-k8s.io/depth': '1' }));
    const hrq = {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: 'tree' },
      spec: { hard: { pods: '4' } },
    };
    expect((await api.request('PUT', '/v1/namespaces/past-root/hierarchicalresourcequotas/tree', hrq)).status).toBe(201);
    expect((await reserve('past-root', 1)).status).toBe(201);
    expect((await reserve('past-child', 2)).status).toBe(201);
    const charged = await instant();
    expect((await reserve('past-child', 3)).status).toBe(201);
    const path = '/v1/namespaces/past-root/hierarchicalresourcequotas/tree';
    expect(await usageAt(path, charged)).toMatchObject({
      key: 'hierarchicalresourcequotas/past-root/tree',
      defined: true,
      hard: { pods: '4' },
      used: { pods: '2' },
    });
    expect((await api.request('GET', `${path}/usage`)).body.used).toEqual({ pods: '3' });
    const series = await api.request('GET', `${path}/usage/series?points=5`);
    expect(series.body.points.at(-1).used).toEqual({ pods: '3' });
  });
});

describe("the webhook's Namespace reviews", () => {
  let seq = 0;
  const namespaceReview = (
    operation: 'CREATE' | 'UPDATE' | 'DELETE',
    name: string,
    labels: Record<string, string> | undefined,
    extra: Record<string, unknown> = {},
  ) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `ns-review-${++seq}`,
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      name,
      operation,
      userInfo: { username: 'kubernetes-admin' },
      // As kube-apiserver sends it: server-set fields and kubectl's last-applied copy included.
      ...(labels === undefined
        ? {}
        : {
            object: {
              apiVersion: 'v1',
              kind: 'Namespace',
              metadata: {
                name,
                uid: '6f7d4c2e-5a1b-4c3d-9e8f-0a1b2c3d4e5f',
                resourceVersion: '48211',
                creationTimestamp: '2026-11-24T10:00:00Z',
                labels: { 'kubernetes.io/metadata.name': name, ...labels },
                annotations: {
                  'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"Namespace"}',
                  owner: 'web-team',
                },
                managedFields: [{ manager: 'kubectl', operation: 'Update' }],
              },
              spec: { finalizers: ['kubernetes'] },
              status: { phase: 'Active' },
            },
          }),
      dryRun: false,
      ...extra,
    },
  });
  const validate = (body: unknown) => api.request('POST', '/v1/admission/validate', body);

  it('records CREATE, UPDATE and DELETE, so the labels a cluster gives a namespace choose its cluster quotas with no import', async () => {
    expect((await api.request('PUT', '/v1/clusterresourcequotas/web', crq('web', { tenant: 'web' }, { pods: '1' }))).status).toBe(201);
    const created = await validate(namespaceReview('CREATE', 'web-prod', { tenant: 'web' }));
    expect(created.status).toBe(200);
    expect(created.body.response).toEqual({ uid: `ns-review-${seq}`, allowed: true });
    const recorded = await api.request('GET', '/v1/namespaces/web-prod');
    expect(recorded.body.metadata).toMatchObject({
      name: 'web-prod',
      labels: { 'kubernetes.io/metadata.name': 'web-prod', tenant: 'web' },
      annotations: { owner: 'web-team' },
    });
    expect(recorded.body.metadata.annotations).not.toHaveProperty('kubectl.kubernetes.io/last-applied-configuration');
    expect(
      (await api.request('GET', '/v1/namespaces/web-prod/appliedclusterresourcequotas')).body.items.map(
        (q: { metadata: { name: string } }) => q.metadata.name,
      ),
    ).toEqual(['web']);
    expect((await reserve('web-prod', 1)).status).toBe(201);
    expect((await reserve('web-prod', 2)).body.message).toContain('exceeded cluster quota: web');

    // The same review again (kube-apiserver retries) and an UPDATE that changes no label write nothing.
    const events = async () =>
      (await api.db.dataSource.query(`SELECT count(*)::int AS n FROM ledger_events WHERE namespace = 'web-prod'`))[0].n as number;
    const before = await events();
    expect((await validate(namespaceReview('UPDATE', 'web-prod', { tenant: 'web' }))).body.response.allowed).toBe(true);
    expect(await events()).toBe(before);

    // Relabelled out: its pod's charge leaves the cluster quota in the same transaction.
    expect((await validate(namespaceReview('UPDATE', 'web-prod', { tenant: 'elsewhere' }))).body.response.allowed).toBe(true);
    expect((await api.request('GET', '/v1/clusterresourcequotas/web')).body.status.total.used).toEqual({ pods: '0' });
    const history = await api.request('GET', '/v1/namespaces/web-prod/history');
    expect(history.body.items.map((c: { type: string; actor: string }) => c.type)).toEqual(['NamespaceDefined', 'NamespaceChanged']);

    expect((await validate(namespaceReview('DELETE', 'web-prod', undefined))).body.response.allowed).toBe(true);
    expect((await api.request('GET', '/v1/namespaces/web-prod')).status).toBe(404);
    // A namespace the ledger never recorded is deleted all the same.
    expect((await validate(namespaceReview('DELETE', 'never-seen', undefined))).body.response.allowed).toBe(true);
    expect(await disagreements(poolOf(api.db.dataSource))).toEqual([]);
  });

  it('writes nothing for a dry run or a subresource, and refuses a review it cannot read', async () => {
    expect((await validate(namespaceReview('CREATE', 'dry-ns', { tenant: 'web' }, { dryRun: true }))).body.response.allowed).toBe(true);
    expect((await api.request('GET', '/v1/namespaces/dry-ns')).status).toBe(404);
    const status = namespaceReview('UPDATE', 'sub-ns', { tenant: 'web' }, { subResource: 'status' });
    expect((await validate(status)).body.response.allowed).toBe(true);
    expect((await api.request('GET', '/v1/namespaces/sub-ns')).status).toBe(404);
    const noObject = await validate(namespaceReview('CREATE', 'bare-ns', undefined));
    expect(noObject.status).toBe(400);
    expect(noObject.body.message).toContain('request.object');
    const mismatch = namespaceReview('CREATE', 'one-ns', { tenant: 'web' });
    mismatch.request.name = 'other-ns';
    expect((await validate(mismatch)).status).toBe(400);
    expect((await api.request('GET', '/v1/namespaces/one-ns')).status).toBe(404);
  });
});

describe('a shared quota that came from a cluster object', () => {
  it('a ClusterResourceQuota from a LedgerClusterQuota is refused to REST writes (409), and a REST PUT cannot claim to be one', async () => {
    const managed = { 'quota-ledger.io/managed-by': 'ledgerclusterquotas.quota-ledger.io' };
    const ref = { kind: 'ClusterResourceQuota', name: 'from-cluster' } as const;
    await api.app
      .get(ClusterWriter)
      .putSharedQuota(
        { ref, spec: { hard: { pods: '1' } }, selector: { labels: { matchLabels: { t: 'x' } } }, metadata: { annotations: managed } },
        { actor: 'system:reconciler' },
      );
    const put = await api.request('PUT', '/v1/clusterresourcequotas/from-cluster', crq('from-cluster', { t: 'x' }, { pods: '9' }));
    const removal = await api.request('DELETE', '/v1/clusterresourcequotas/from-cluster');
    for (const refused of [put, removal]) {
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        kind: 'Status',
        reason: 'Conflict',
        details: { name: 'from-cluster', kind: 'clusterresourcequotas' },
      });
      expect(refused.body.message).toContain('it is managed by the cluster object ledgerclusterquotas.quota-ledger.io "from-cluster";');
    }
    expect((await api.request('GET', '/v1/clusterresourcequotas/from-cluster')).body.spec.quota).toEqual({ hard: { pods: '1' } });

    const claimed = await api.request(
      'PUT',
      '/v1/clusterresourcequotas/claims',
      crq('claims', { t: 'y' }, { pods: '1' }, { annotations: { ...managed, team: 'y' } }),
    );
    expect(claimed.status).toBe(201);
    expect(claimed.body.metadata.annotations).toEqual({ team: 'y' });
    expect((await api.request('DELETE', '/v1/clusterresourcequotas/claims')).status).toBe(200);
  });

  it('a HierarchicalResourceQuota from a LedgerHierarchicalQuota is refused to REST writes (409), and a REST PUT cannot claim to be one', async () => {
    const managed = { 'quota-ledger.io/managed-by': 'ledgerhierarchicalquotas.quota-ledger.io' };
    await api.app.get(ClusterWriter).putSharedQuota(
      {
        ref: { kind: 'HierarchicalResourceQuota', name: 'from-cluster', namespace: 'hrq-c' },
        spec: { hard: { pods: '1' } },
        metadata: { annotations: managed },
      },
      { actor: 'system:reconciler' },
    );
    const hrq = (name: string, annotations?: Record<string, string>) => ({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: { hard: { pods: '9' } },
    });
    const path = '/v1/namespaces/hrq-c/hierarchicalresourcequotas';
    for (const refused of [
      await api.request('PUT', `${path}/from-cluster`, hrq('from-cluster')),
      await api.request('DELETE', `${path}/from-cluster`),
    ]) {
      expect(refused.status).toBe(409);
      expect(refused.body.message).toContain(
        'it is managed by the cluster object ledgerhierarchicalquotas.quota-ledger.io "from-cluster" in namespace "hrq-c"',
      );
    }
    const claimed = await api.request('PUT', `${path}/claims`, hrq('claims', { ...managed, team: 'c' }));
    expect(claimed.body.metadata.annotations).toEqual({ team: 'c' });
    expect((await api.request('DELETE', `${path}/claims`)).status).toBe(200);
  });
});
