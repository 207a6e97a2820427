import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceDeduplicationId, reconcileQueue } from '@quota/jobs';
import { DefinitionQueries } from '@quota/ledger';
import { startApi, type RunningApi } from '../support/api.js';
import { withoutReviewExtras } from '../support/review.js';
import { until } from '../support/wait.js';

let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlwebhook');
  await api.request('PUT', '/v1/namespaces/team-a/resourcequotas/compute', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { pods: '2', 'requests.cpu': '1' } },
  });
  await api.request('PUT', '/v1/namespaces/team-a/limitranges/defaults', {
    apiVersion: 'v1',
    kind: 'LimitRange',
    spec: { limits: [{ type: 'Container', default: { cpu: '300m' }, defaultRequest: { cpu: '200m' }, max: { cpu: '800m' } }] },
  });
});
afterAll(async () => {
  await api?.close();
});

let uidSeq = 0;
const pod = (name: string, cpu?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', uid: `obj-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', ...(cpu ? { resources: { requests: { cpu }, limits: { cpu } } } : {}) }] },
});

/** An AdmissionReview as kube-apiserver v1.30 sends it. */
function review(operation: string, object: unknown, extra: Record<string, unknown> = {}) {
  const name = (object as { metadata?: { name?: string } } | null)?.metadata?.name ?? (extra['name'] as string | undefined) ?? '';
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `review-${++uidSeq}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name,
      namespace: 'team-a',
      operation,
      userInfo: { username: 'system:serviceaccount:ci:deployer', uid: 'sa-1', groups: ['system:serviceaccounts', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: {
        apiVersion: 'meta.k8s.io/v1',
        kind: operation === 'CREATE' ? 'CreateOptions' : operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions',
      },
      ...extra,
    },
  };
}

const reserved = async (namespace = 'team-a'): Promise<number> =>
  Number(
    (await api.db.dataSource.query(`SELECT count(*) FROM ledger_events WHERE namespace = $1 AND type = 'Reserved'`, [namespace]))[0].count,
  );
const eventCount = async (): Promise<number> => Number((await api.db.dataSource.query(`SELECT count(*) FROM ledger_events`))[0].count);
const decisionCount = async (): Promise<number> =>
  Number((await api.db.dataSource.query(`SELECT count(*) FROM admission_decisions`))[0].count);
const validate = (body: unknown) => api.request('POST', '/v1/admission/validate', body);
const mutate = (body: unknown) => api.request('POST', '/v1/admission/mutate', body);
const quota = (namespace: string, hard: Record<string, string>) =>
  api.request('PUT', `/v1/namespaces/${namespace}/resourcequotas/compute`, { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard } });
/** A pod of another namespace than team-a, with its review. */
const podIn = (namespace: string, name: string, cpu?: string) => ({
  ...pod(name, cpu),
  metadata: { name, namespace, uid: `obj-${namespace}-${name}` },
});

describe('the validating webhook', () => {
  it('admits a CREATE within quota and reserves it, then denies one over quota with HTTP 200 and Kubernetes text', async () => {
    const first = await validate(review('CREATE', pod('web-1', '400m')));
    expect(first.status).toBe(200);
    // The audit annotations tie kube-apiserver's audit log to the ledger: the decision and the reservation it made.
    expect(first.body).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: `review-${uidSeq}`,
        allowed: true,
        auditAnnotations: { decision: expect.stringMatching(/^\d+$/), reservation: expect.any(String) },
      },
    });
    const logged = await api.request('GET', `/v1/namespaces/team-a/decisions/${first.body.response.auditAnnotations.decision}`);
    expect(logged.body).toMatchObject({
      allowed: true,
      name: 'web-1',
      result: { reservationId: first.body.response.auditAnnotations.reservation },
    });
    expect(await reserved()).toBe(1);

    // The admission that fills the quota is allowed with a warning (QUOTA_WARNING_PERCENT, 90 by default).
    const second = await validate(review('CREATE', pod('web-2', '400m')));
    expect(second.body.response).toMatchObject({
      allowed: true,
      warnings: expect.arrayContaining(['quota "compute": pods at 100% of its limit (2/2)']),
    });

    const third = await validate(review('CREATE', pod('web-3', '100m')));
    expect(third.status).toBe(200);
    expect(third.body.response).toEqual({
      uid: `review-${uidSeq}`,
      allowed: false,
      status: {
        metadata: {},
        status: 'Failure',
        code: 403,
        reason: 'Forbidden',
        message: 'pods "web-3" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2',
        // A denial names its request as every error does (the X-Request-Id answered with it).
        details: { requestId: third.headers.get('x-request-id') },
      },
      auditAnnotations: { decision: expect.stringMatching(/^\d+$/) },
    });
    expect(await reserved()).toBe(2);
  });

  it('denies a container over the LimitRange maximum with LimitRanger text', async () => {
    const response = await validate(review('CREATE', pod('big', '2')));
    expect(response.body.response.allowed).toBe(false);
    expect(response.body.response.status.message).toBe('pods "big" is forbidden: maximum cpu usage per Container is 800m, but limit is 2');
  });

  it('charges a PVC expansion only its increase, a pod label change nothing, and admits a DELETE (object null) without appending', async () => {
    await api.request('PUT', '/v1/namespaces/team-c/resourcequotas/storage', {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      spec: { hard: { 'requests.storage': '5Gi' } },
    });
    const pvc = (size: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'team-c', uid: 'obj-data', resourceVersion: '7' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
    });
    const pvcReview = (operation: string, object: unknown, extra: Record<string, unknown> = {}) =>
      review(operation, object, {
        namespace: 'team-c',
        kind: { group: '', version: 'v1', kind: 'PersistentVolumeClaim' },
        resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
        ...extra,
      });
    expect((await validate(pvcReview('CREATE', pvc('1Gi')))).body.response.allowed).toBe(true);
    expect((await validate(pvcReview('UPDATE', pvc('3Gi'), { oldObject: pvc('1Gi') }))).body.response.allowed).toBe(true);
    const events = await api.db.dataSource.query(
      `SELECT data FROM ledger_events WHERE namespace = 'team-c' AND type = 'Reserved' ORDER BY version`,
    );
    expect(
      events.map((e: { data: { operation: string; charged: Record<string, string> } }) => [
        e.data.operation,
        e.data.charged['requests.storage'],
      ]),
    ).toEqual([
      ['CREATE', '1Gi'],
      ['UPDATE', '2Gi'],
    ]);
    // While the 3Gi expansion is not confirmed the ledger holds the claim at 1Gi: the next one is
    // charged over that (5Gi), whatever oldObject says, since the first may never have happened.
    const tooBig = await validate(pvcReview('UPDATE', pvc('6Gi'), { oldObject: pvc('3Gi') }));
    expect(tooBig.body.response.status.message).toBe(
      'persistentvolumeclaims "data" is forbidden: exceeded quota: storage, requested: requests.storage=5Gi, used: requests.storage=3Gi, limited: requests.storage=5Gi',
    );

    const before = await reserved();
    const relabel = await validate(
      review(
        'UPDATE',
        { ...pod('web-1', '400m'), metadata: { ...pod('web-1').metadata, labels: { v: '2' } } },
        { oldObject: pod('web-1', '400m') },
      ),
    );
    expect(relabel.body.response.allowed).toBe(true);
    const del = await validate(review('DELETE', null, { name: 'web-2', oldObject: pod('web-2', '400m') }));
    expect(withoutReviewExtras(del.body.response)).toEqual({ uid: `review-${uidSeq}`, allowed: true });
    expect(await reserved()).toBe(before);
    // The admitted DELETE queued a prompt, delayed reconcile of the namespace (BullMQ's
    // PostgreSQL backend here: no REDIS_URL).
    const queue = reconcileQueue({ kind: 'postgres', url: api.db.url });
    try {
      const job = await until('the after-delete job', async () => {
        const id = await queue.getDeduplicationJobId(namespaceDeduplicationId('team-a', 'after-delete'));
        return id ? queue.getJob(id) : undefined;
      });
      expect(job.data).toEqual({ namespace: 'team-a', reason: 'after-delete' });
      expect(job.opts.delay).toBe(5000);
    } finally {
      await queue.close();
    }
  });

  it('decides a dryRun review and appends nothing; the same pod without dryRun is reserved', async () => {
    expect((await quota('team-dry', { pods: '5', 'requests.cpu': '1' })).status).toBe(201);
    const dry = await validate(review('CREATE', podIn('team-dry', 'web', '100m'), { namespace: 'team-dry', dryRun: true }));
    expect(withoutReviewExtras(dry.body.response)).toEqual({ uid: `review-${uidSeq}`, allowed: true });
    expect(await reserved('team-dry')).toBe(0);
    const overDry = await validate(review('CREATE', podIn('team-dry', 'big', '900m'), { namespace: 'team-dry', dryRun: true }));
    expect(overDry.body.response).toMatchObject({ allowed: true });

    const real = await validate(review('CREATE', podIn('team-dry', 'web', '100m'), { namespace: 'team-dry' }));
    expect(real.body.response.allowed).toBe(true);
    expect(await reserved('team-dry')).toBe(1);
    // The dry run of the 900m pod charged nothing, so only 100m is used now.
    const usage = await api.request('GET', '/v1/namespaces/team-dry/usage');
    expect(usage.body.quotas[0].used).toMatchObject({ pods: '1', 'requests.cpu': '100m' });
  });

  it('answers a repeated review uid with the first answer and charges once, even when the repeats race', async () => {
    await api.request('PUT', '/v1/namespaces/team-b/resourcequotas/compute', {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      spec: { hard: { pods: '5' } },
    });
    const body = review(
      'CREATE',
      { ...pod('once', '100m'), metadata: { name: 'once', namespace: 'team-b', uid: 'obj-once' } },
      { namespace: 'team-b' },
    );
    const answers = await Promise.all(Array.from({ length: 10 }, () => validate(body)));
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(withoutReviewExtras(answers[0]?.body.response)).toEqual({ uid: body.request.uid, allowed: true });
    const count = await api.db.dataSource.query(
      `SELECT count(*)::int AS n FROM ledger_events WHERE namespace = 'team-b' AND type = 'Reserved'`,
    );
    expect(count[0].n).toBe(1);
  });

  it('answers a review sent twice with its first answer even after the quota filled, and charges once', async () => {
    await quota('team-r', { pods: '1' });
    const first = review('CREATE', podIn('team-r', 'a'), { namespace: 'team-r' });
    const second = review('CREATE', podIn('team-r', 'b'), { namespace: 'team-r' });
    const firstAnswer = await validate(first);
    expect(withoutReviewExtras(firstAnswer.body.response)).toEqual({ uid: first.request.uid, allowed: true });
    const secondAnswer = await validate(second);
    expect(secondAnswer.body.response.status.message).toBe(
      'pods "b" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1',
    );

    // kube-apiserver retries a review on a timeout: the answer must not flip.
    expect((await validate(first)).body).toEqual(firstAnswer.body);
    // The same denial; only the request it names (details.requestId, its X-Request-Id) is the new one's.
    const again = await validate(second);
    expect(again.body.response.status.details.requestId).toBe(again.headers.get('x-request-id'));
    const { details: _again, ...againStatus } = again.body.response.status;
    const { details: _first, ...firstStatus } = secondAnswer.body.response.status;
    expect({ ...again.body.response, status: againStatus }).toEqual({ ...secondAnswer.body.response, status: firstStatus });
    expect(await reserved('team-r')).toBe(1);
  });

  it('admits a Scale subresource UPDATE without charging', async () => {
    const before = await reserved();
    const scale = await validate(
      review(
        'UPDATE',
        { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'team-a' }, spec: { replicas: 5 } },
        {
          kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
          resource: { group: 'apps', version: 'v1', resource: 'deployments' },
          subResource: 'scale',
          requestSubResource: 'scale',
          oldObject: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'team-a' }, spec: { replicas: 2 } },
        },
      ),
    );
    expect(scale.body.response.allowed).toBe(true);
    expect(await reserved()).toBe(before);
  });

  it('admits in a namespace the ledger has never seen without creating it, and cluster-scoped objects (Namespaces aside: those are recorded, see shared-quotas.test.ts)', async () => {
    const ledger = api.app.get(DefinitionQueries);
    const before = await eventCount();
    const answer = await validate(review('CREATE', podIn('unmanaged', 'free', '5'), { namespace: 'unmanaged' }));
    expect(withoutReviewExtras(answer.body.response)).toEqual({ uid: `review-${uidSeq}`, allowed: true });
    expect(await ledger.namespaceExists('unmanaged')).toBe(false);
    const cluster = await validate(
      review(
        'CREATE',
        { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-x' } },
        {
          namespace: '',
          kind: { group: '', version: 'v1', kind: 'PersistentVolume' },
          resource: { group: '', version: 'v1', resource: 'persistentvolumes' },
        },
      ),
    );
    expect(withoutReviewExtras(cluster.body.response)).toEqual({ uid: `review-${uidSeq}`, allowed: true });
    expect(await eventCount()).toBe(before);
  });

  const bare = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' };
  it.each([
    ['malformed JSON', '{"apiVersion":', 'body', 'not valid JSON'],
    [
      'a v1beta1 review',
      { ...review('CREATE', pod('x')), apiVersion: 'admission.k8s.io/v1beta1' },
      'apiVersion',
      'apiVersion: Unsupported value: "admission.k8s.io/v1beta1"',
    ],
    ['a review of another kind', { ...review('CREATE', pod('x')), kind: 'AdmissionRequest' }, 'kind', 'kind: Unsupported value'],
    ['a review without request', bare, 'request', 'request: Required value'],
    [
      'a review without uid',
      { ...bare, request: { operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'pods' } } },
      'request.uid',
      'request.uid: Required value',
    ],
    [
      'a review with an unknown operation',
      { ...bare, request: { ...review('CREATE', pod('x')).request, operation: 'PATCH' } },
      'request.operation',
      'request.operation: Unsupported value: "PATCH"',
    ],
    [
      'a review whose dryRun is a string',
      { ...bare, request: { ...review('CREATE', pod('x')).request, dryRun: 'false' } },
      'request.dryRun',
      'request.dryRun: must be a boolean',
    ],
  ])('answers %s with a 400 Status naming the field, and writes nothing', async (_case, body, field, text) => {
    const [events, decisions] = [await eventCount(), await decisionCount()];
    for (const send of [validate, mutate]) {
      const response = await send(body);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 400, reason: 'BadRequest' });
      expect(response.body.message).toContain(text);
      if (field !== 'body') expect(response.body.details.causes).toEqual([expect.objectContaining({ field })]);
    }
    expect([await eventCount(), await decisionCount()]).toEqual([events, decisions]);
  });
});

describe('the mutating webhook', () => {
  it('answers LimitRange defaults as a base64 JSONPatch and writes nothing', async () => {
    const [events, decisions] = [await eventCount(), await decisionCount()];
    const response = await mutate(review('CREATE', pod('bare')));
    expect(response.status).toBe(200);
    expect(response.body.response).toMatchObject({ uid: `review-${uidSeq}`, allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(response.body.response.patch, 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/containers/0/resources', value: { limits: { cpu: '300m' }, requests: { cpu: '200m' } } },
      {
        op: 'add',
        path: '/metadata/annotations',
        value: { 'kubernetes.io/limit-ranger': 'LimitRanger plugin set: cpu request for container app; cpu limit for container app' },
      },
    ]);
    expect([await eventCount(), await decisionCount()]).toEqual([events, decisions]);
  });

  it('defaults a pod that breaks the LimitRange maximum instead of denying it (validate denies)', async () => {
    const object = {
      ...pod('mixed'),
      spec: {
        containers: [
          { name: 'app', image: 'nginx' },
          { name: 'big', image: 'nginx', resources: { requests: { cpu: '2' }, limits: { cpu: '2' } } },
        ],
      },
    };
    const response = await mutate(review('CREATE', object));
    expect(response.body.response).toMatchObject({ allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(response.body.response.patch, 'base64').toString())).toContainEqual({
      op: 'add',
      path: '/spec/containers/0/resources',
      value: { limits: { cpu: '300m' }, requests: { cpu: '200m' } },
    });
  });

  it.each([
    ['a pod that needs no defaults', () => review('CREATE', pod('full', '300m'))],
    ['a DELETE (object null)', () => review('DELETE', null, { name: 'web-1', oldObject: pod('web-1', '400m') })],
    ['a pod UPDATE', () => review('UPDATE', pod('web-1'), { oldObject: pod('web-1') })],
    ['a namespace without LimitRanges', () => review('CREATE', podIn('team-b', 'bare'), { namespace: 'team-b' })],
    ['a namespace the ledger has never seen', () => review('CREATE', podIn('nowhere', 'bare'), { namespace: 'nowhere' })],
    [
      'a Deployment',
      () =>
        review(
          'CREATE',
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'web', namespace: 'team-a' },
            spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
          },
          {
            kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
            resource: { group: 'apps', version: 'v1', resource: 'deployments' },
          },
        ),
    ],
    [
      'a cluster-scoped object',
      () =>
        review(
          'CREATE',
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } },
          {
            namespace: '',
            kind: { group: '', version: 'v1', kind: 'Namespace' },
            resource: { group: '', version: 'v1', resource: 'namespaces' },
          },
        ),
    ],
  ])('allows %s without a patch', async (_case, make) => {
    const body = make();
    const response = await mutate(body);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: body.request.uid, allowed: true },
    });
  });
});
