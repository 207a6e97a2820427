import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceDeduplicationId, reconcileQueue } from '@quota/jobs';
import { startApi, type RunningApi } from '../support/api.js';
import { until } from '../support/wait.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

/**
 * The first round of attack findings, each replayed as it was reported, over HTTP with the
 * README's tokens. Finding 1 (memory) is test/e2e/body-memory.test.ts (it needs its own
 * process and heap); findings 3 (forged actors) and 4 (rate-limit keys) are in
 * test/e2e/security.test.ts; the laws behind finding 2 are in libs/domain/src/admission/decide.spec.ts.
 */
const TOKENS = {
  admin: { name: 'platform-admin', token: 'findings-admin-0123456789abcdef0123456789', roles: ['admin'] },
  apiserver: { name: 'kube-apiserver', token: 'findings-apiserver-0123456789abcdef012345', roles: ['webhook'], trustUserInfo: true },
  teamA: {
    name: 'team-a-ci',
    token: 'findings-team-a-0123456789abcdef0123456789',
    roles: ['admission', 'auditor'],
    namespaces: ['team-a', 'team-r', 'team-s', 'team-i', 'team-c'],
  },
  auditor: { name: 'auditor', token: 'findings-auditor-0123456789abcdef012345678', roles: ['auditor'] },
};

let api: RunningApi;
beforeAll(async () => {
  api = await startApi(
    { insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)), quotasPerNamespaceMax: 4, limitRangesPerNamespaceMax: 2 },
    'qlfind',
  );
});
afterAll(async () => {
  await api?.close();
});

const as = (who: keyof typeof TOKENS) => bearer(TOKENS[who].token);
const putQuota = (namespace: string, name: string, hard: Record<string, unknown>) =>
  api.request(
    'PUT',
    `/v1/namespaces/${namespace}/resourcequotas/${name}`,
    { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard } },
    as('admin'),
  );
const usage = async (namespace: string): Promise<Record<string, string>> =>
  (await api.request('GET', `/v1/namespaces/${namespace}/usage`, undefined, as('auditor'))).body.quotas[0].used;
const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await api.db.dataSource.query(sql, params))[0].count);

let seq = 0;
const pvc = (namespace: string, uid: string, size: string, resourceVersion?: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: `claim-${uid.toLowerCase()}`, namespace, uid, ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
});
const pvcReview = (namespace: string, operation: string, object: unknown, oldObject: unknown = null) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `finding-${++seq}`,
    kind: { group: '', version: 'v1', kind: 'PersistentVolumeClaim' },
    resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
    namespace,
    name: (object as { metadata: { name: string } } | null)?.metadata.name ?? '',
    operation,
    userInfo: { username: 'system:serviceaccount:team-a:ci' },
    object,
    oldObject,
    dryRun: false,
  },
});
const validate = (body: unknown, who: keyof typeof TOKENS = 'apiserver') => api.request('POST', '/v1/admission/validate', body, as(who));
const reserve = (namespace: string, body: unknown) => api.request('POST', `/v1/namespaces/${namespace}/reservations`, body, as('teamA'));

describe('finding 2: over-admission through UPDATE', () => {
  it('via the webhook: the 100Gi UPDATE claiming a 100Gi old object is denied, and used stays within hard', async () => {
    expect((await putQuota('team-a', 'storage', { 'requests.storage': '10Gi' })).status).toBe(201);
    expect((await validate(pvcReview('team-a', 'CREATE', pvc('team-a', 'X', '5Gi')))).body.response.allowed).toBe(true);
    expect((await validate(pvcReview('team-a', 'CREATE', pvc('team-a', 'Y', '50Gi')))).body.response.allowed).toBe(false);
    const attack = await validate(pvcReview('team-a', 'UPDATE', pvc('team-a', 'X', '100Gi', '3'), pvc('team-a', 'X', '100Gi', '2')));
    expect(attack.body.response).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(attack.body.response.status.message).toContain(
      'requested: requests.storage=95Gi, used: requests.storage=5Gi, limited: requests.storage=10Gi',
    );
    // The reported follow-up: commit what was reserved. Only the 5Gi claim is there, and a
    // tenant's REST call may not settle what the cluster's webhook reserved.
    const reservations = await api.request('GET', '/v1/namespaces/team-a/reservations?state=reserved', undefined, as('teamA'));
    expect(reservations.body.items).toHaveLength(1);
    for (const r of reservations.body.items)
      expect((await api.request('POST', `/v1/namespaces/team-a/reservations/${r.id}/commit`, undefined, as('teamA'))).status).toBe(403);
    expect(await usage('team-a')).toMatchObject({ 'requests.storage': '5Gi' });
  });

  it('via REST: an UPDATE from a claimed 99Gi to 100Gi is charged over the 5Gi the ledger holds, so it is denied', async () => {
    expect((await putQuota('team-r', 'storage', { 'requests.storage': '10Gi' })).status).toBe(201);
    const created = await reserve('team-r', { kind: 'PersistentVolumeClaim', object: pvc('team-r', 'R', '5Gi') });
    expect(created.status).toBe(201);
    const attack = await reserve('team-r', {
      kind: 'PersistentVolumeClaim',
      operation: 'UPDATE',
      object: pvc('team-r', 'R', '100Gi', '3'),
      oldObject: pvc('team-r', 'R', '99Gi', '2'),
    });
    expect(attack.status).toBe(403);
    expect(attack.body.details.denial).toMatchObject({ resource: 'requests.storage', requested: '95Gi', used: '5Gi', hard: '10Gi' });
    expect((await api.request('POST', `/v1/namespaces/team-r/reservations/${created.body.id}/commit`, undefined, as('teamA'))).status).toBe(
      200,
    );
    expect(await usage('team-r')).toMatchObject({ 'requests.storage': '5Gi' });
  });

  it('via REST: giving up the settled claim takes its pending change along, so the change cannot be committed on top of the freed room', async () => {
    expect((await putQuota('team-s', 'storage', { 'requests.storage': '10Gi' })).status).toBe(201);
    const created = await reserve('team-s', { kind: 'PersistentVolumeClaim', object: pvc('team-s', 'S', '5Gi') });
    const grown = await reserve('team-s', {
      kind: 'PersistentVolumeClaim',
      operation: 'UPDATE',
      object: pvc('team-s', 'S', '8Gi', '3'),
      oldObject: pvc('team-s', 'S', '5Gi', '2'),
    });
    expect(grown.status).toBe(201);
    expect(grown.body.charged).toMatchObject({ 'requests.storage': '3Gi' });
    expect((await api.request('DELETE', `/v1/namespaces/team-s/reservations/${created.body.id}`, undefined, as('teamA'))).status).toBe(200);
    expect((await api.request('GET', `/v1/namespaces/team-s/reservations/${grown.body.id}`, undefined, as('teamA'))).body).toMatchObject({
      state: 'released',
      releaseReason: 'cancelled',
    });
    expect((await reserve('team-s', { kind: 'PersistentVolumeClaim', object: pvc('team-s', 'T', '7Gi') })).status).toBe(201);
    expect((await api.request('POST', `/v1/namespaces/team-s/reservations/${grown.body.id}/commit`, undefined, as('teamA'))).status).toBe(
      409,
    );
    expect(await usage('team-s')).toMatchObject({ 'requests.storage': '7Gi' });
  });
});

describe('finding 5: unbounded quota size', () => {
  it('refuses a spec.hard of 20,000 entries, and of 65, naming the field; 64 is accepted', async () => {
    const hard = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`example.com/r${i}`, '1']));
    const huge = await putQuota('team-q', 'huge', hard(20_000));
    expect(huge.status).toBe(400);
    expect(huge.body.message).toContain('holds more than 20000 values');
    const over = await putQuota('team-q', 'over', hard(65));
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({
      reason: 'Invalid',
      details: { causes: [{ reason: 'FieldValueTooMany', field: 'spec.hard', message: 'Too many: 65: must have at most 64 items' }] },
    });
    expect((await putQuota('team-q', 'wide', hard(64))).status).toBe(201);
  });

  it('refuses one ResourceQuota and one LimitRange more than a namespace may hold (QUOTAS_PER_NAMESPACE_MAX, LIMIT_RANGES_PER_NAMESPACE_MAX), writing nothing', async () => {
    for (let i = 0; i < 4; i++) expect((await putQuota('team-n', `q${i}`, { pods: '1' })).status).toBe(201);
    const events = await count(`SELECT count(*) FROM ledger_events WHERE namespace = 'team-n'`);
    const fifth = await putQuota('team-n', 'q4', { pods: '1' });
    expect(fifth.status).toBe(403);
    expect(fifth.body.message).toBe(
      'resourcequotas "q4" is forbidden: namespace "team-n" already has 4 ResourceQuotas, the most it may have (QUOTAS_PER_NAMESPACE_MAX=4)',
    );
    expect(await count(`SELECT count(*) FROM ledger_events WHERE namespace = 'team-n'`)).toBe(events);
    // Changing one that exists is still allowed.
    expect((await putQuota('team-n', 'q0', { pods: '2' })).status).toBe(200);
    const limitRange = { apiVersion: 'v1', kind: 'LimitRange', spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } };
    for (const name of ['l0', 'l1'])
      expect((await api.request('PUT', `/v1/namespaces/team-n/limitranges/${name}`, limitRange, as('admin'))).status).toBe(201);
    expect((await api.request('PUT', '/v1/namespaces/team-n/limitranges/l2', limitRange, as('admin'))).status).toBe(403);
  });
});

describe('finding 6: idempotency keys, repeated uids, namespaces, probes, unmanaged namespaces', () => {
  it('answers a requestId reused with a different body with 409 naming the key, and the same body with the first answer', async () => {
    expect((await putQuota('team-i', 'compute', { 'example.com/gpu': '10' })).status).toBe(201);
    const body = (amount: string) => ({
      requestId: 'deploy-7',
      kind: 'Widget',
      resource: 'widgets.example.com',
      name: 'w',
      resources: { 'example.com/gpu': amount },
    });
    const first = await reserve('team-i', body('1'));
    expect(first.status).toBe(201);
    expect(await reserve('team-i', body('1'))).toEqual(first);
    // Keys in another order are the same request.
    expect(
      (
        await reserve('team-i', {
          resources: { 'example.com/gpu': '1' },
          name: 'w',
          resource: 'widgets.example.com',
          kind: 'Widget',
          requestId: 'deploy-7',
        })
      ).status,
    ).toBe(201);
    const events = await count(`SELECT count(*) FROM ledger_events WHERE namespace = 'team-i'`);
    const reused = await reserve('team-i', body('9'));
    expect(reused.status).toBe(409);
    expect(reused.body).toMatchObject({
      kind: 'Status',
      reason: 'Conflict',
      message:
        'the requestId "deploy-7" was already used in namespace "team-i" for a different request; a new request needs a new requestId',
    });
    expect(await count(`SELECT count(*) FROM ledger_events WHERE namespace = 'team-i'`)).toBe(events);
    expect(await usage('team-i')).toMatchObject({ 'example.com/gpu': '1' });
  });

  it('answers a review uid reused with a different object with a 409 denial, recording nothing', async () => {
    expect((await putQuota('team-u', 'storage', { 'requests.storage': '100Gi' })).status).toBe(201);
    const first = pvcReview('team-u', 'CREATE', pvc('team-u', 'A', '1Gi'));
    expect((await validate(first, 'apiserver')).body.response.allowed).toBe(true);
    const decisions = await count(`SELECT count(*) FROM admission_decisions WHERE namespace = 'team-u'`);
    const reused = { ...first, request: { ...first.request, object: pvc('team-u', 'A', '90Gi') } };
    const answer = await validate(reused, 'apiserver');
    expect(answer.status).toBe(200);
    expect(answer.body.response).toMatchObject({ uid: first.request.uid, allowed: false, status: { code: 409, reason: 'Conflict' } });
    expect(answer.body.response.status.message).toContain(`the AdmissionReview uid "${first.request.uid}" was already used`);
    expect(await count(`SELECT count(*) FROM admission_decisions WHERE namespace = 'team-u'`)).toBe(decisions);
  });

  it('charges a second CREATE of the same uid once when it is the same, and refuses a bigger one instead of charging the old size', async () => {
    expect((await putQuota('team-c', 'storage', { 'requests.storage': '10Gi' })).status).toBe(201);
    expect((await validate(pvcReview('team-c', 'CREATE', pvc('team-c', 'C', '2Gi')))).body.response.allowed).toBe(true);
    expect((await validate(pvcReview('team-c', 'CREATE', pvc('team-c', 'C', '2Gi')))).body.response.allowed).toBe(true);
    const bigger = await validate(pvcReview('team-c', 'CREATE', pvc('team-c', 'C', '9Gi')));
    expect(bigger.body.response).toMatchObject({ allowed: false, status: { code: 409, reason: 'Conflict' } });
    expect(bigger.body.response.status.message).toContain('is already admitted');
    expect(await usage('team-c')).toMatchObject({ 'requests.storage': '2Gi' });
    // Through REST the object is not the tenant's to change at all: the cluster admitted it.
    const rest = await reserve('team-c', { kind: 'PersistentVolumeClaim', object: pvc('team-c', 'C', '9Gi') });
    expect(rest.status).toBe(403);
  });

  it('answers a webhook review whose object sits in another namespace than the request with 400, as REST does', async () => {
    const mismatched = pvcReview('team-a', 'CREATE', pvc('team-b', 'M', '1Gi'));
    const answer = await validate(mismatched);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ kind: 'Status', code: 400 });
    expect(answer.body.details.causes[0].field).toBe('request.object.metadata.namespace');
    const rest = await reserve('team-a', { kind: 'PersistentVolumeClaim', object: pvc('team-b', 'M', '1Gi') });
    expect(rest.status).toBe(400);
  });

  it('never limits /healthz/ or /HEALTHZ (both reach the probe)', async () => {
    const limited = await startApi(
      { insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)), rateLimitPerSecond: 1, rateLimitBurst: 1 },
      'qlfindrate',
    );
    try {
      for (let i = 0; i < 5; i++)
        for (const path of ['/healthz/', '/HEALTHZ']) expect((await fetch(`${limited.base}${path}`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('writes no decision and queues no reconcile for a DELETE review in a namespace it never managed', async () => {
    const decisions = await count(`SELECT count(*) FROM admission_decisions`);
    const review = pvcReview('never-managed', 'DELETE', null, pvc('never-managed', 'D', '1Gi'));
    expect((await validate(review, 'apiserver')).body.response.allowed).toBe(true);
    expect(
      (await validate(pvcReview('never-managed', 'CREATE', pvc('never-managed', 'E', '1Gi')), 'apiserver')).body.response.allowed,
    ).toBe(true);
    expect(await count(`SELECT count(*) FROM admission_decisions`)).toBe(decisions);
    // A DELETE in a managed namespace does queue its prompt reconcile (BullMQ on PostgreSQL here).
    expect((await validate(pvcReview('team-u', 'DELETE', null, pvc('team-u', 'A', '1Gi')), 'apiserver')).body.response.allowed).toBe(true);
    const queue = reconcileQueue({ kind: 'postgres', url: api.db.url });
    try {
      await until(
        'the after-delete job of team-u',
        async () => (await queue.getDeduplicationJobId(namespaceDeduplicationId('team-u', 'after-delete'))) ?? undefined,
      );
      expect(await queue.getDeduplicationJobId(namespaceDeduplicationId('never-managed', 'after-delete'))).toBeNull();
    } finally {
      await queue.close();
    }
  });
});
