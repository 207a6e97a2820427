import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '@quota/domain';
import { startApi, type RunningApi } from '../support/api.js';
import { Ledger } from '../support/ledger.js';
import { bearer, writeTokensFile, type TestToken } from '../support/tokens.js';

/**
 * What a token may touch: a tenant must never get more than its quota. Reviews are
 * the kube-apiserver's (role webhook); what the cluster reserved is committed, shrunk or
 * released only from what the cluster holds (the reconciler's listing, here the ledger's own
 * reconcile with a listing the test writes) or by the API server's own review; a terminal
 * transition comes only from the listing.
 */
const TOKENS = {
  admin: { name: 'platform-admin', token: 'trust-admin-0123456789abcdef0123456789ab', roles: ['admin'] },
  apiserver: { name: 'kube-apiserver', token: 'trust-apiserver-0123456789abcdef01234567', roles: ['webhook'], trustUserInfo: true },
  tenant: {
    name: 'team-t-ci',
    token: 'trust-tenant-0123456789abcdef0123456789a',
    roles: ['admission', 'auditor'],
    namespaces: ['team-t', 'team-v'],
  },
} satisfies Record<string, TestToken>;
const PODS = { group: '', resource: 'pods' };
const PVCS = { group: '', resource: 'persistentvolumeclaims' };

let api: RunningApi;
let ledger: Ledger;
beforeAll(async () => {
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)) }, 'qltrust');
  ledger = new Ledger(api.db.dataSource);
});
afterAll(async () => {
  await ledger?.close();
  await api?.close();
});

const as = (who: keyof typeof TOKENS) => bearer(TOKENS[who].token);
let seq = 0;

function pod(
  uid: string,
  cpu: string,
  extra: { status?: Record<string, unknown>; metadata?: Record<string, unknown>; activeDeadlineSeconds?: number } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${uid}`, namespace: 'team-t', uid, resourceVersion: '5', ...extra.metadata },
    spec: {
      containers: [{ name: 'app', image: 'x', resources: { requests: { cpu }, limits: { cpu } } }],
      ...(extra.activeDeadlineSeconds === undefined ? {} : { activeDeadlineSeconds: extra.activeDeadlineSeconds }),
    },
    status: { phase: 'Running', ...extra.status },
  } as KubeObject;
}

function pvc(uid: string, size: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `claim-${uid}`, namespace: 'team-v', uid, resourceVersion: '3' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
  } as KubeObject;
}

function review(
  namespace: string,
  kind: string,
  resource: typeof PODS,
  operation: string,
  object: KubeObject | null,
  oldObject: KubeObject | null = null,
  subResource?: string,
) {
  const name = (object ?? oldObject)?.metadata?.name ?? '';
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `trust-${++seq}`,
      kind: { group: '', version: 'v1', kind },
      resource: { ...resource, version: 'v1' },
      ...(subResource ? { subResource } : {}),
      namespace,
      name,
      operation,
      object,
      oldObject,
      dryRun: false,
    },
  };
}

const validate = (body: unknown, who: keyof typeof TOKENS) => api.request('POST', '/v1/admission/validate', body, as(who));
const used = async (namespace: string): Promise<Record<string, string>> =>
  (await api.request('GET', `/v1/namespaces/${namespace}/usage`, undefined, as('tenant'))).body.quotas[0].used;
const listing = (namespace: string, groupResource: typeof PODS, objects: KubeObject[]) =>
  ledger.reconcile(
    namespace,
    {
      covers: [groupResource],
      objects: objects.map((object) => ({ groupResource, uid: object.metadata?.uid ?? '', name: object.metadata?.name ?? '', object })),
      listedAt: Date.now() + 1,
    },
    { actor: 'system:reconciler', graceMs: 60_000 },
  );

describe("a running pod's usage", () => {
  it("cannot be erased by a tenant's token (resize claiming Succeeded, or a past deletionTimestamp), nor by a review's word that the pod ended", async () => {
    expect(
      (
        await api.request(
          'PUT',
          '/v1/namespaces/team-t/resourcequotas/compute',
          { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods: '10', 'requests.cpu': '4' } } },
          as('admin'),
        )
      ).status,
    ).toBe(201);
    expect((await validate(review('team-t', 'Pod', PODS, 'CREATE', pod('p1', '500m')), 'apiserver')).body.response.allowed).toBe(true);
    await listing('team-t', PODS, [pod('p1', '500m')]);
    expect(await used('team-t')).toMatchObject({ 'requests.cpu': '500m', pods: '1' });

    const finished = review(
      'team-t',
      'Pod',
      PODS,
      'UPDATE',
      pod('p1', '500m', { status: { phase: 'Succeeded' } }),
      pod('p1', '500m'),
      'resize',
    );
    const lapsed = review(
      'team-t',
      'Pod',
      PODS,
      'UPDATE',
      pod('p1', '500m', {
        activeDeadlineSeconds: 1,
        metadata: { deletionTimestamp: '2020-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 },
      }),
      pod('p1', '500m'),
    );
    for (const forged of [finished, lapsed]) {
      const refused = await validate(forged, 'tenant');
      expect(refused.status).toBe(403);
      expect(refused.body.message).toContain('needs the role webhook');
    }
    // The API server's own review saying so is taken as a change of nothing the ledger counts...
    expect((await validate(finished, 'apiserver')).body.response.allowed).toBe(true);
    // ...and the listing, which shows the pod Running, keeps its compute charged.
    await listing('team-t', PODS, [pod('p1', '500m')]);
    expect(await used('team-t')).toMatchObject({ 'requests.cpu': '500m', pods: '1' });
    // Only a listing that shows the pod Succeeded gives its compute back.
    await listing('team-t', PODS, [pod('p1', '500m', { status: { phase: 'Succeeded' } })]);
    expect(await used('team-t')).toMatchObject({ 'requests.cpu': '0', pods: '0' });
  });
});

describe('what the kube-apiserver reserved', () => {
  it('is neither released, committed nor shrunk by a tenant REST call; its own REST reservations are', async () => {
    expect(
      (
        await api.request(
          'PUT',
          '/v1/namespaces/team-v/resourcequotas/storage',
          { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { 'requests.storage': '10Gi' } } },
          as('admin'),
        )
      ).status,
    ).toBe(201);
    const created = await validate(review('team-v', 'PersistentVolumeClaim', PVCS, 'CREATE', pvc('v1', '2Gi')), 'apiserver');
    expect(created.body.response.allowed).toBe(true);
    const id = created.body.response.auditAnnotations.reservation as string;
    const path = `/v1/namespaces/team-v/reservations/${id}`;

    const released = await api.request('DELETE', path, undefined, as('tenant'));
    expect(released.status).toBe(403);
    expect(released.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', details: { kind: 'reservations', name: id } });
    expect((await api.request('POST', `${path}/commit`, undefined, as('tenant'))).status).toBe(403);
    const shrunk = await api.request(
      'POST',
      '/v1/namespaces/team-v/reservations',
      { kind: 'PersistentVolumeClaim', operation: 'UPDATE', object: pvc('v1', '1Gi'), oldObject: pvc('v1', '2Gi') },
      as('tenant'),
    );
    expect(shrunk.status).toBe(403);
    expect(shrunk.body.message).toContain("admitted by the cluster's webhook");
    expect((await api.request('GET', path, undefined, as('tenant'))).body).toMatchObject({
      state: 'reserved',
      origin: 'webhook',
      charged: { 'requests.storage': '2Gi' },
    });
    expect(await used('team-v')).toMatchObject({ 'requests.storage': '2Gi' });

    const own = await api.request(
      'POST',
      '/v1/namespaces/team-v/reservations',
      { kind: 'PersistentVolumeClaim', object: pvc('v2', '1Gi') },
      as('tenant'),
    );
    expect(own.status).toBe(201);
    expect((await api.request('GET', `/v1/namespaces/team-v/reservations/${own.body.id}`, undefined, as('tenant'))).body).toMatchObject({
      origin: 'rest',
    });
    expect((await api.request('DELETE', `/v1/namespaces/team-v/reservations/${own.body.id}`, undefined, as('tenant'))).status).toBe(200);
    expect(await used('team-v')).toMatchObject({ 'requests.storage': '2Gi' });
  });
});

describe('Namespace reviews', () => {
  const namespaceReview = (name: string, labels: Record<string, string>, resourceVersion = '7') => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `trust-ns-${++seq}`,
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      namespace: name,
      name,
      operation: 'UPDATE',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels, resourceVersion } },
      oldObject: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, resourceVersion } },
      dryRun: false,
    },
  });
  const crq = (name: string, tenant: string) => ({
    apiVersion: 'quota.openshift.io/v1',
    kind: 'ClusterResourceQuota',
    spec: { selector: { labels: { matchLabels: { tenant } } }, quota: { hard: { pods: '5' } } },
    metadata: { name },
  });

  it("record nothing where the reconciler lists the cluster (labels come from the stored object), and refuse a relabel past a shared quota's cap", async () => {
    const listed = await startApi(
      {
        insecureDev: false,
        tokensFile: writeTokensFile(Object.values(TOKENS)),
        namespaceLabelsFrom: 'cluster',
        sharedQuotaNamespacesMax: 1,
      },
      'qltrustns',
    );
    try {
      const call = (method: string, path: string, body?: unknown) => listed.request(method, path, body, as('admin'));
      expect((await call('PUT', '/v1/clusterresourcequotas/acme', crq('acme', 'acme'))).status).toBe(201);
      expect(
        (
          await call('PUT', '/v1/namespaces/team-1', {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name: 'team-1', labels: { tenant: 'acme' } },
          })
        ).status,
      ).toBe(201);
      // A relabel the API server may yet fail to store: allowed, and nothing recorded from it.
      const relabel = await listed.request(
        'POST',
        '/v1/admission/validate',
        namespaceReview('team-2', { tenant: 'beta' }),
        as('apiserver'),
      );
      expect(relabel.body.response).toMatchObject({ allowed: true });
      expect((await call('GET', '/v1/namespaces/team-2')).status).toBe(404);
      // acme covers as many namespaces as one may (1): a relabel that would add team-2 is refused.
      const crowd = await listed.request('POST', '/v1/admission/validate', namespaceReview('team-2', { tenant: 'acme' }), as('apiserver'));
      expect(crowd.body.response).toMatchObject({ allowed: false, status: { code: 403 } });
      expect(crowd.body.response.status.message).toContain('clusterresourcequota "acme", which covers 1 namespaces already');
      // The same through the admin API (and a review where no listing exists): refused, nothing written.
      const put = await call('PUT', '/v1/namespaces/team-2', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-2', labels: { tenant: 'acme' } },
      });
      expect(put.status).toBe(403);
      expect((await call('GET', '/v1/clusterresourcequotas/acme')).body.status.namespaces).toHaveLength(1);
    } finally {
      await listed.close();
    }
  });
});
