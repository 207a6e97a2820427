import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@quota/config';
import { createAdmissionApi } from '../../apps/admission-api/src/app.js';
import { startApi, type RunningApi } from '../support/api.js';
import { bearer, writeTokensFile, type TestToken } from '../support/tokens.js';

const TOKENS = {
  admin: { name: 'platform-admin', token: 'admin-0123456789abcdef0123456789abcdef', roles: ['admin'] },
  apiserver: { name: 'kube-apiserver', token: 'apiserver-0123456789abcdef0123456789ab', roles: ['webhook'], trustUserInfo: true },
  relay: { name: 'review-relay', token: 'relay-0123456789abcdef0123456789abcdef', roles: ['webhook'] },
  admission: { name: 'platform-ci', token: 'admission-0123456789abcdef0123456789ab', roles: ['admission'] },
  auditor: { name: 'audit-bot', token: 'auditor-0123456789abcdef0123456789abcd', roles: ['auditor'] },
  teamA: { name: 'team-a-ci', token: 'team-a-0123456789abcdef0123456789abcde', roles: ['admission', 'auditor'], namespaces: ['team-a'] },
  teamAdmin: { name: 'team-a-admin', token: 'team-admin-0123456789abcdef0123456789', roles: ['admin'], namespaces: ['team-a'] },
} satisfies Record<string, TestToken>;

const quota = { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods: '100', 'requests.cpu': '10' } } };
const limitRange = { apiVersion: 'v1', kind: 'LimitRange', spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '100m' } }] } };
let seq = 0;
const reserve = () => ({ requestId: `sec-${++seq}`, kind: 'Pod', name: `p-${seq}`, resources: { pods: '1' } });
const review = (namespace: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `sec-review-${++seq}`,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace,
    name: `w-${seq}`,
    operation: 'CREATE',
    userInfo: { username: 'system:serviceaccount:ci:deployer' },
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `w-${seq}`, namespace, uid: `u-${seq}` },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    },
    dryRun: false,
  },
});

type StatusBody = { message: string; details: { requestId: string } };

let api: RunningApi;
const logLines: string[] = [];
beforeAll(async () => {
  const logs = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)), logLevel: 'info' }, 'qlsec', {
    logDestination: logs,
  });
  for (const ns of ['team-a', 'team-b']) {
    expect((await api.request('PUT', `/v1/namespaces/${ns}/resourcequotas/compute`, quota, bearer(TOKENS.admin.token))).status).toBe(201);
  }
});
afterAll(async () => {
  await api?.close();
});

type Call = readonly [method: string, path: string, body?: () => unknown];
const CALLS: Record<string, Call> = {
  'put quota': ['PUT', '/v1/namespaces/team-a/resourcequotas/compute', () => quota],
  'delete limitrange': ['DELETE', '/v1/namespaces/team-a/limitranges/defaults'],
  'put limitrange': ['PUT', '/v1/namespaces/team-a/limitranges/defaults', () => limitRange],
  'get quota': ['GET', '/v1/namespaces/team-a/resourcequotas/compute'],
  'list quotas': ['GET', '/v1/namespaces/team-a/resourcequotas'],
  usage: ['GET', '/v1/namespaces/team-a/usage'],
  events: ['GET', '/v1/namespaces/team-a/events'],
  decisions: ['GET', '/v1/namespaces/team-a/decisions'],
  'quota history': ['GET', '/v1/namespaces/team-a/resourcequotas/compute/history'],
  'projection lag': ['GET', '/v1/projections/usage'],
  reserve: ['POST', '/v1/namespaces/team-a/reservations', reserve],
  webhook: ['POST', '/v1/admission/validate', () => review('team-a')],
  mutate: ['POST', '/v1/admission/mutate', () => review('team-a')],
};

// Each role against every call: allowed (2xx, or 404 where the object may not exist) or 403.
const MATRIX: ReadonlyArray<[keyof typeof TOKENS, keyof typeof CALLS, 'allowed' | 'forbidden']> = [
  ['admin', 'put quota', 'allowed'],
  ['admin', 'put limitrange', 'allowed'],
  ['admin', 'get quota', 'allowed'],
  ['admin', 'events', 'allowed'],
  ['admin', 'projection lag', 'allowed'],
  ['admin', 'reserve', 'forbidden'],
  ['admin', 'webhook', 'forbidden'],
  ['apiserver', 'webhook', 'allowed'],
  ['apiserver', 'mutate', 'allowed'],
  ['apiserver', 'reserve', 'forbidden'],
  ['apiserver', 'get quota', 'forbidden'],
  ['apiserver', 'put quota', 'forbidden'],
  ['apiserver', 'events', 'forbidden'],
  // A tenant's REST role never speaks for the cluster (its reviews once erased usage).
  ['admission', 'webhook', 'forbidden'],
  ['admission', 'mutate', 'forbidden'],
  ['admission', 'reserve', 'allowed'],
  ['admission', 'get quota', 'allowed'],
  ['admission', 'usage', 'allowed'],
  ['admission', 'put quota', 'forbidden'],
  ['admission', 'delete limitrange', 'forbidden'],
  ['admission', 'events', 'forbidden'],
  ['admission', 'decisions', 'forbidden'],
  ['auditor', 'events', 'allowed'],
  ['auditor', 'decisions', 'allowed'],
  ['auditor', 'quota history', 'allowed'],
  ['auditor', 'list quotas', 'allowed'],
  ['auditor', 'projection lag', 'allowed'],
  ['auditor', 'put quota', 'forbidden'],
  ['auditor', 'delete limitrange', 'forbidden'],
  ['auditor', 'reserve', 'forbidden'],
  ['auditor', 'webhook', 'forbidden'],
  ['teamA', 'reserve', 'allowed'],
  ['teamA', 'webhook', 'forbidden'],
  ['teamA', 'mutate', 'forbidden'],
  ['teamA', 'events', 'allowed'],
  ['teamA', 'put quota', 'forbidden'],
  ['teamA', 'projection lag', 'forbidden'],
];

describe('roles', () => {
  it.each(MATRIX)('%s: %s is %s', async (who, call, expected) => {
    const [method, path, body] = CALLS[call]!;
    const { status, body: answer } = await api.request(method, path, body?.(), bearer(TOKENS[who].token));
    if (expected === 'allowed') {
      expect(status, JSON.stringify(answer)).toBeLessThan(400);
    } else {
      expect(status).toBe(403);
      expect(answer).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
      expect(answer.message).toContain(TOKENS[who].name);
    }
  });

  it('records the token name as the actor of what it writes, whatever X-Remote-User claims', async () => {
    const put = await api.request('PUT', '/v1/namespaces/team-b/limitranges/actor', limitRange, {
      ...bearer(TOKENS.admin.token),
      'x-remote-user': 'someone-else',
    });
    expect(put.status).toBe(201);
    const events = await api.request('GET', '/v1/namespaces/team-b/events?limit=100', undefined, bearer(TOKENS.auditor.token));
    const defined = events.body.items.filter((e: { type: string }) => e.type === 'LimitRangeDefined');
    expect(defined.map((e: { actor: string }) => e.actor)).toEqual(['platform-admin']);
  });
});

describe('identities (the actor could be forged through userInfo)', () => {
  const audit = (path: string) => api.request('GET', path, undefined, bearer(TOKENS.auditor.token));
  const sendReview = async (who: keyof typeof TOKENS, username: string) => {
    const body = review('team-a');
    body.request.userInfo = { username };
    const answer = await api.request('POST', '/v1/admission/validate', body, bearer(TOKENS[who].token));
    expect(answer.body.response.allowed).toBe(true);
    const decisions = await audit('/v1/namespaces/team-a/decisions?order=newest&limit=1000');
    const decision = decisions.body.items.find((d: { requestKey?: string }) => d.requestKey === `review:${body.request.uid}`);
    const reservation = await audit(`/v1/namespaces/team-a/reservations/${decision.result.reservationId}`);
    return { decision, reservation: reservation.body };
  };

  it('records a reviewer without trustUserInfo as the requester and actor, and drops the user its review claims to act for', async () => {
    const { decision, reservation } = await sendReview('relay', 'system:admin');
    expect(decision.requester).toBe('review-relay');
    expect(decision).not.toHaveProperty('onBehalfOf');
    expect(reservation.requester).toBe('review-relay');
    expect(reservation.history[0]).toMatchObject({ type: 'Reserved', actor: 'review-relay' });
    expect(reservation.history[0]).not.toHaveProperty('onBehalfOf');
    // Filtering by the forged name finds nothing it wrote.
    const forged = await audit('/v1/namespaces/team-a/decisions?requester=system:admin');
    expect(forged.body.items).toEqual([]);
  });

  it('records the user a trusted relay (trustUserInfo: the kube-apiserver) acts for beside its own name', async () => {
    const { decision, reservation } = await sendReview('apiserver', 'jane@example.com');
    expect(decision).toMatchObject({ requester: 'kube-apiserver', onBehalfOf: 'jane@example.com' });
    expect(reservation).toMatchObject({ requester: 'kube-apiserver', onBehalfOf: 'jane@example.com' });
    expect(reservation.history[0]).toMatchObject({ actor: 'kube-apiserver', onBehalfOf: 'jane@example.com' });
    const listed = await audit('/v1/namespaces/team-a/reservations?state=reserved');
    expect(listed.body.items.find((r: { id: string }) => r.id === reservation.id)).toMatchObject({
      requester: 'kube-apiserver',
      onBehalfOf: 'jane@example.com',
    });
  });
});

describe('a token scoped to team-a', () => {
  const headers = bearer(TOKENS.teamA.token);

  it('may not reserve in team-b, and nothing is written there', async () => {
    const before = await api.request('GET', '/v1/namespaces/team-b/events?limit=1000', undefined, bearer(TOKENS.auditor.token));
    const { status, body } = await api.request('POST', '/v1/namespaces/team-b/reservations', reserve(), headers);
    expect(status).toBe(403);
    expect(body.message).toContain('may act only in namespace team-a');
    const after = await api.request('GET', '/v1/namespaces/team-b/events?limit=1000', undefined, bearer(TOKENS.auditor.token));
    expect(after.body.items).toHaveLength(before.body.items.length);
  });

  it("may not send a webhook review, for team-b or its own namespace: reviews are the webhook role's", async () => {
    for (const namespace of ['team-b', 'team-a']) {
      const { status, body } = await api.request('POST', '/v1/admission/validate', review(namespace), headers);
      expect(status).toBe(403);
      expect(body.message).toContain('needs the role webhook');
    }
  });

  it("may not read team-b's audit trail", async () => {
    expect((await api.request('GET', '/v1/namespaces/team-b/decisions', undefined, headers)).status).toBe(403);
  });
});

describe('authentication failures', () => {
  it.each([
    ['no Authorization header', {}, 'authentication required'],
    ['a Basic credential', { authorization: 'Basic dXNlcjpwYXNz' }, 'must be "Bearer TOKEN"'],
    ['"Bearer" with no token', { authorization: 'Bearer ' }, 'must be "Bearer TOKEN"'],
    ['a token with a space in it', { authorization: 'Bearer abc def' }, 'must be "Bearer TOKEN"'],
    ['an unknown token', { authorization: 'Bearer not-a-configured-token' }, 'not recognized'],
    ['a known token with one character changed', { authorization: `Bearer ${TOKENS.admin.token.slice(0, -1)}0` }, 'not recognized'],
    ['a very long token', { authorization: `Bearer ${'a'.repeat(4096)}` }, 'not recognized'],
  ])('answers 401 Status for %s', async (_what, headers, message) => {
    const response = await fetch(`${api.base}/v1/namespaces/team-a/resourcequotas`, { headers });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="quota-ledger"');
    const body = (await response.json()) as StatusBody;
    expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401, reason: 'Unauthorized' });
    expect(body.message).toContain(message);
    expect(body.details.requestId).toBe(response.headers.get('x-request-id'));
  });

  it('never writes a token into the logs', () => {
    const all = logLines.join('\n');
    for (const { token } of Object.values(TOKENS)) expect(all).not.toContain(token);
  });

  it('leaves probes, metrics and the docs open', async () => {
    for (const path of ['/healthz', '/metrics', '/docs/openapi.json']) expect((await fetch(`${api.base}${path}`)).status, path).toBe(200);
  });
});

describe('request ids', () => {
  it('echoes a sane X-Request-Id and puts it on the log line of the request', async () => {
    const response = await fetch(`${api.base}/v1/namespaces/team-a/resourcequotas/nope`, {
      headers: { ...bearer(TOKENS.auditor.token), 'x-request-id': 'trace-abc.123' },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBe('trace-abc.123');
    expect(((await response.json()) as StatusBody).details.requestId).toBe('trace-abc.123');
    const line = logLines.map((l) => JSON.parse(l)).find((l) => l.requestId === 'trace-abc.123' && l.msg === 'request');
    expect(line).toMatchObject({ app: 'admission-api', method: 'GET', status: 404, level: 'info' });
  });

  it('replaces an id that could forge log lines', async () => {
    const response = await fetch(`${api.base}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('start-up', () => {
  it('refuses to start with no tokens unless QUOTA_LEDGER_INSECURE_DEV is set', async () => {
    const config = { ...loadConfig({}), databaseUrl: api.db.url, logLevel: 'error' as const };
    await expect(createAdmissionApi(config)).rejects.toThrow(/no tokens configured: set TOKENS_FILE/);
  });

  it('refuses a tokens file that holds a token in the clear', async () => {
    const file = writeTokensFile([TOKENS.admin]);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, 'tokens:\n  - name: oops\n    sha256: admin-0123456789abcdef0123456789abcdef\n    roles: [admin]\n');
    const config = { ...loadConfig({}), databaseUrl: api.db.url, logLevel: 'error' as const, tokensFile: file };
    await expect(createAdmissionApi(config)).rejects.toThrow(/tokens\[0\]\.sha256 must be 64 lowercase hex digits/);
  });
});

describe('rate limit', () => {
  const limitedApi = () =>
    startApi(
      { insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)), rateLimitPerSecond: 1, rateLimitBurst: 3 },
      'qlrate',
    );
  const statusOf = async (base: string, headers: Record<string, string>, path = '/v1/namespaces/team-a/resourcequotas'): Promise<number> =>
    (await fetch(`${base}${path}`, { headers })).status;

  it('gives a token one bucket however "Bearer" is spelled (finding 4: 64 spellings were 64 buckets)', async () => {
    const limited = await limitedApi();
    try {
      const spellings = ['Bearer', 'bearer', 'BEARER', 'bEaReR', 'BeArEr'].map((word) => ({
        authorization: `${word} ${TOKENS.admission.token}`,
      }));
      const statuses = [];
      for (const headers of spellings) statuses.push(await statusOf(limited.base, headers));
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await limited.close();
    }
  });

  it('limits wrong tokens by the address they come from, and never refills a real client on their account', async () => {
    const limited = await limitedApi();
    try {
      for (let i = 0; i < 3; i++) expect(await statusOf(limited.base, bearer(TOKENS.admission.token))).toBe(200);
      expect(await statusOf(limited.base, bearer(TOKENS.admission.token))).toBe(429);
      const strangers = [];
      for (let i = 0; i < 40; i++) strangers.push(await statusOf(limited.base, bearer(`wrong-token-${i}`)));
      expect(strangers.slice(0, 3)).toEqual([401, 401, 401]);
      expect(new Set(strangers.slice(3))).toEqual(new Set([429]));
      expect(await statusOf(limited.base, bearer(TOKENS.admission.token))).toBe(429);
      // Another principal from the same address has its own bucket.
      expect(await statusOf(limited.base, bearer(TOKENS.auditor.token))).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("never answers the kube-apiserver's reviews 429 (under failurePolicy Fail that denies the write), but limits a tenant's token on the same route", async () => {
    const limited = await limitedApi();
    try {
      const post = async (token: string): Promise<number> =>
        (
          await fetch(`${limited.base}/v1/admission/validate`, {
            method: 'POST',
            headers: { ...bearer(token), 'content-type': 'application/json' },
            body: JSON.stringify(review('team-a')),
          })
        ).status;
      const apiServer: number[] = [];
      for (let i = 0; i < 8; i++) apiServer.push(await post(TOKENS.apiserver.token));
      expect(apiServer).toEqual(Array(8).fill(200));
      const tenant: number[] = [];
      for (let i = 0; i < 5; i++) tenant.push(await post(TOKENS.teamA.token));
      // A tenant may not send reviews at all (403), and its refused calls spend its bucket like any.
      expect(tenant.slice(0, 3)).toEqual([403, 403, 403]);
      expect(tenant[4]).toBe(429);
      // The API server's own bucket is spent by nothing it reviewed: its other calls (which its role refuses) are counted as anyone's.
      expect(await statusOf(limited.base, bearer(TOKENS.apiserver.token))).toBe(403);
    } finally {
      await limited.close();
    }
  });

  it('never limits the probes, however the path is cased or slashed', async () => {
    const limited = await limitedApi();
    try {
      for (let i = 0; i < 8; i++) {
        for (const path of ['/healthz', '/healthz/', '/HEALTHZ', '/readyz?exclude=queue', '/metrics'])
          expect(await statusOf(limited.base, {}, path), path).toBe(200);
      }
    } finally {
      await limited.close();
    }
  });

  it('answers 429 with Retry-After once a client spends its burst, and counts each token apart', async () => {
    const limited = await startApi(
      { insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)), rateLimitPerSecond: 1, rateLimitBurst: 3 },
      'qlrate',
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push(
          (await limited.request('GET', '/v1/namespaces/team-a/resourcequotas', undefined, bearer(TOKENS.admission.token))).status,
        );
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses[4]).toBe(429);
      const response = await fetch(`${limited.base}/v1/namespaces/team-a/resourcequotas`, { headers: bearer(TOKENS.admission.token) });
      expect(response.status).toBe(429);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await response.json()).toMatchObject({ code: 429, reason: 'TooManyRequests' });
      expect((await limited.request('GET', '/v1/namespaces/team-a/resourcequotas', undefined, bearer(TOKENS.auditor.token))).status).toBe(
        200,
      );
      expect((await fetch(`${limited.base}/healthz`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('quotas over several namespaces and a token scoped to one namespace', () => {
  it('cannot relabel its namespace out of a cluster quota, or touch cluster quotas, but reads what applies to it', async () => {
    const team = bearer(TOKENS.teamAdmin.token);
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { tenant: 'x' } } };
    expect((await api.request('PUT', '/v1/namespaces/team-a', namespace, team)).status).toBe(403);
    expect((await api.request('DELETE', '/v1/namespaces/team-a', undefined, team)).status).toBe(403);
    const crq = {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      spec: { selector: { labels: { matchLabels: { tenant: 'x' } } }, quota: { hard: { pods: '1' } } },
    };
    expect((await api.request('PUT', '/v1/clusterresourcequotas/x', crq, team)).status).toBe(403);
    expect((await api.request('PUT', '/v1/namespaces/team-a', namespace, bearer(TOKENS.admin.token))).status).toBe(201);
    expect(
      (await api.request('GET', '/v1/namespaces/team-a/appliedclusterresourcequotas', undefined, bearer(TOKENS.teamA.token))).status,
    ).toBe(200);
    expect(
      (await api.request('GET', '/v1/namespaces/team-b/appliedclusterresourcequotas', undefined, bearer(TOKENS.teamA.token))).status,
    ).toBe(403);
  });

  it("cannot relabel its namespace through the webhook either: a Namespace review is the kube-apiserver's (webhook role), and a tenant's writes nothing", async () => {
    const namespaceReview = (labels: Record<string, string>) => ({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: `sec-ns-${++seq}`,
        kind: { group: '', version: 'v1', kind: 'Namespace' },
        resource: { group: '', version: 'v1', resource: 'namespaces' },
        // kube-apiserver names the namespace itself here for a Namespace's UPDATE.
        namespace: 'team-a',
        name: 'team-a',
        operation: 'UPDATE',
        object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels } },
        oldObject: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { tenant: 'x' } } },
        dryRun: false,
      },
    });
    for (const tenant of [TOKENS.teamA, TOKENS.admission]) {
      const escape = await api.request('POST', '/v1/admission/validate', namespaceReview({ tenant: 'nobody' }), bearer(tenant.token));
      expect(escape.status).toBe(403);
      expect(escape.body.message).toContain('needs the role webhook');
    }
    expect((await api.request('GET', '/v1/namespaces/team-a', undefined, bearer(TOKENS.admin.token))).body.metadata.labels).toEqual({
      tenant: 'x',
    });
    const relayed = await api.request('POST', '/v1/admission/validate', namespaceReview({ tenant: 'y' }), bearer(TOKENS.apiserver.token));
    expect(relayed.body.response).toMatchObject({ allowed: true });
    expect((await api.request('GET', '/v1/namespaces/team-a', undefined, bearer(TOKENS.admin.token))).body.metadata.labels).toEqual({
      tenant: 'y',
    });
  });
});
