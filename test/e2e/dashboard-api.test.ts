import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { bearer, writeTokensFile, type TestToken } from '../support/tokens.js';

/**
 * What the dashboard asks the API for: who the token is (whoami), "would this be admitted?"
 * (whatif), one decision and the decisions log newest first, who made each reservation, and
 * the dashboard's own files under /ui. Real PostgreSQL, tokens required.
 */
const TOKENS = {
  admin: { name: 'platform-admin', token: 'admin-dash-0123456789abcdef0123456789ab', roles: ['admin'] },
  auditor: { name: 'audit-bot', token: 'auditor-dash-0123456789abcdef0123456789', roles: ['auditor'] },
  admission: { name: 'kube-apiserver', token: 'admission-dash-0123456789abcdef01234567', roles: ['admission'] },
  teamAuditor: { name: 'team-a-viewer', token: 'team-a-dash-0123456789abcdef0123456789a', roles: ['auditor'], namespaces: ['team-a'] },
} satisfies Record<string, TestToken>;

type StatusBody = { kind: string; apiVersion: string; status: string; code: number; reason: string; message: string };
type Decision = {
  id: string;
  namespace: string;
  requester: string;
  dryRun: boolean;
  allowed: boolean;
  source: string;
  name?: string;
  result: { code: number; message?: string };
};
type Marker = { kind: string; decisionId?: string; requester?: string };

const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'a', image: 'x' }] } });
const podBody = (name: string) => ({ kind: 'Pod', object: pod(name) });
const quota = (pods: string) => ({ apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods } } });

let api: RunningApi;
const as = (who: keyof typeof TOKENS) => bearer(TOKENS[who].token);
const whatIf = (body: unknown, who: keyof typeof TOKENS = 'auditor', namespace = 'team-a') =>
  api.request('POST', `/v1/namespaces/${namespace}/whatif`, body, as(who));
const reserve = (name: string, namespace = 'team-a') =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, podBody(name), as('admission'));
const usageVersion = async (namespace = 'team-a'): Promise<number> => {
  const { status, body } = await api.request('GET', `/v1/namespaces/${namespace}/usage`, undefined, as('auditor'));
  expect(status).toBe(200);
  return body.version as number;
};
const allDecisions = async (namespace = 'team-a', order = 'oldest'): Promise<Decision[]> => {
  const { status, body } = await api.request(
    'GET',
    `/v1/namespaces/${namespace}/decisions?limit=1000&order=${order}`,
    undefined,
    as('auditor'),
  );
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.next).toBeUndefined();
  return body.items as Decision[];
};

beforeAll(async () => {
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)) }, 'qldashapi');
  const put = await api.request('PUT', '/v1/namespaces/team-a/resourcequotas/compute', quota('1'), as('admin'));
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  // Another namespace with a decision of its own (for ids that belong elsewhere).
  expect((await api.request('PUT', '/v1/namespaces/team-b/resourcequotas/compute', quota('10'), as('admin'))).status).toBe(201);
  expect((await reserve('elsewhere', 'team-b')).status).toBe(201);
});
afterAll(async () => {
  await api?.close();
});

describe('GET /v1/whoami', () => {
  it.each([
    ['admin', ['admin'], '*'],
    ['auditor', ['auditor'], '*'],
    ['admission', ['admission'], '*'],
    ['teamAuditor', ['auditor'], ['team-a']],
  ] as const)('names the %s token, its roles and its namespaces', async (who, roles, namespaces) => {
    const { status, body } = await api.request('GET', '/v1/whoami', undefined, as(who));
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({ apiVersion: 'quota-ledger.io/v1', kind: 'WhoAmI', name: TOKENS[who].name, roles, namespaces });
  });

  it('sorts roles and namespaces', async () => {
    const tokens = [
      { name: 'many-roles', token: 'many-roles-0123456789abcdef0123456789abcd', roles: ['auditor', 'admission', 'admin'] },
      {
        name: 'many-namespaces',
        token: 'many-ns-0123456789abcdef0123456789abcdef',
        roles: ['auditor', 'admission'],
        namespaces: ['zeta', 'alpha', 'mid'],
      },
    ];
    const several = await startApi({ insecureDev: false, tokensFile: writeTokensFile(tokens) }, 'qldashwho');
    try {
      const roles = await several.request('GET', '/v1/whoami', undefined, bearer(tokens[0]!.token));
      expect(roles.status, JSON.stringify(roles.body)).toBe(200);
      expect(roles.body).toMatchObject({ name: 'many-roles', roles: ['admin', 'admission', 'auditor'], namespaces: '*' });
      const namespaces = await several.request('GET', '/v1/whoami', undefined, bearer(tokens[1]!.token));
      expect(namespaces.status, JSON.stringify(namespaces.body)).toBe(200);
      expect(namespaces.body).toMatchObject({
        name: 'many-namespaces',
        roles: ['admission', 'auditor'],
        namespaces: ['alpha', 'mid', 'zeta'],
      });
    } finally {
      await several.close();
    }
  });

  it('answers 401 Status with WWW-Authenticate without a token', async () => {
    const response = await fetch(`${api.base}/v1/whoami`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="quota-ledger"');
    expect(await response.json()).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401, reason: 'Unauthorized' });
  });

  it('answers 401 for a token it does not know', async () => {
    const response = await fetch(`${api.base}/v1/whoami`, { headers: bearer(`${TOKENS.admin.token.slice(0, -1)}x`) });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="quota-ledger"');
    const body = (await response.json()) as StatusBody;
    expect(body).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
    expect(body.message).toContain('not recognized');
  });
});

// The steps below build on each other (vitest runs a file's tests in order).
describe('POST /v1/namespaces/{ns}/whatif', () => {
  it.each(['admin', 'auditor', 'admission', 'teamAuditor'] as const)(
    'answers %s with the decision a reserve would get, and writes nothing',
    async (who) => {
      const version = await usageVersion();
      const { status, body } = await whatIf(podBody('p'), who);
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ apiVersion: 'quota-ledger.io/v1', kind: 'WhatIf', namespace: 'team-a', allowed: true, code: 200 });
      expect(body.charged).toMatchObject({ pods: '1' });
      expect(body.denial).toBeUndefined();
      expect(await usageVersion()).toBe(version);
      const reservations = await api.request('GET', '/v1/namespaces/team-a/reservations', undefined, as('auditor'));
      expect(reservations.status).toBe(200);
      expect(reservations.body.items).toEqual([]);
    },
  );

  it('answers a plain resource list too', async () => {
    const { status, body } = await whatIf({ kind: 'Pod', resources: { pods: '1' } });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ allowed: true, charged: { pods: '1' } });
  });

  it('answers allowed: false with the explanation once the quota is spent, as 200', async () => {
    const reserved = await reserve('p');
    expect(reserved.status, JSON.stringify(reserved.body)).toBe(201);
    const version = await usageVersion();
    const { status, body } = await whatIf(podBody('q'));
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ kind: 'WhatIf', namespace: 'team-a', allowed: false, code: 403, stage: 'ResourceQuota' });
    expect(body.message).toContain('exceeded quota: compute');
    expect(body.denial).toMatchObject({ kind: 'Exceeded', quota: 'compute', resource: 'pods' });
    expect(body.charged).toEqual({});
    expect(await usageVersion()).toBe(version);
    const reservations = await api.request('GET', '/v1/namespaces/team-a/reservations', undefined, as('auditor'));
    expect(reservations.body.items).toHaveLength(1);
  });

  it.each([
    ['an empty body', {}, 'kind'],
    ['both object and resources', { kind: 'Pod', object: pod('x'), resources: { pods: '1' } }, 'object'],
    ['neither object nor resources', { kind: 'Pod' }, 'object'],
    ['a requestId (only a reserve has one)', { ...podBody('x'), requestId: 'r-1' }, 'requestId'],
    ['dryRun (a what-if is always one)', { ...podBody('x'), dryRun: true }, 'dryRun'],
    ['dryRun false', { ...podBody('x'), dryRun: false }, 'dryRun'],
    ['an unknown field', { ...podBody('x'), force: true }, 'force'],
  ])('answers 400 Status for %s, naming the field', async (_what, body, field) => {
    const version = await usageVersion();
    const answer = await whatIf(body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body).toMatchObject({ kind: 'Status', code: 400, status: 'Failure' });
    expect(answer.body.message).toContain(field);
    expect(await usageVersion()).toBe(version);
  });

  it('answers 404 Status for a namespace without a stream', async () => {
    const { status, body } = await whatIf(podBody('x'), 'admin', 'nowhere');
    expect(status, JSON.stringify(body)).toBe(404);
    expect(body).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it('answers 403 to a token scoped to another namespace', async () => {
    const { status, body } = await whatIf(podBody('x'), 'teamAuditor', 'team-b');
    expect(status).toBe(403);
    expect(body).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    expect(body.message).toContain(TOKENS.teamAuditor.name);
  });

  it('answers 401 without a token', async () => {
    expect((await api.request('POST', '/v1/namespaces/team-a/whatif', podBody('x'))).status).toBe(401);
  });

  it('logs no what-if, whoever asked: a what-if is a read, and a read-only auditor leaves nothing behind', async () => {
    const decisions = await allDecisions();
    expect(decisions.filter((d) => d.dryRun)).toEqual([]);
    const real = decisions.filter((d) => !d.dryRun);
    expect(real.map((d) => [d.requester, d.allowed, d.name])).toEqual([[TOKENS.admission.name, true, 'p']]);
  });

  it('does not mark dry-run denials on the usage chart, only real ones', async () => {
    const before = await api.request('GET', '/v1/namespaces/team-a/usage/series?points=2', undefined, as('auditor'));
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body.markers.filter((m: Marker) => m.kind === 'denial')).toEqual([]);

    const denied = await reserve('r');
    expect(denied.status, JSON.stringify(denied.body)).toBe(403);
    const realDenial = (await allDecisions()).find((d) => !d.dryRun && !d.allowed);
    expect(realDenial).toBeDefined();
    const after = await api.request('GET', '/v1/namespaces/team-a/usage/series?points=2', undefined, as('auditor'));
    const denials = after.body.markers.filter((m: Marker) => m.kind === 'denial');
    expect(denials).toHaveLength(1);
    expect(denials[0]).toMatchObject({ kind: 'denial', decisionId: realDenial!.id, requester: TOKENS.admission.name, name: 'r' });
  });
});

describe('GET /v1/namespaces/{ns}/decisions/{id}', () => {
  it('answers each decision as the list shows it', async () => {
    const decisions = await allDecisions();
    expect(decisions.length).toBeGreaterThanOrEqual(2);
    for (const decision of decisions) {
      const { status, body } = await api.request('GET', `/v1/namespaces/team-a/decisions/${decision.id}`, undefined, as('auditor'));
      expect(status, decision.id).toBe(200);
      expect(body).toEqual(decision);
    }
  });

  it('lets the admin read one, a scoped auditor only in its namespace, and not the admission token', async () => {
    const [first] = await allDecisions();
    expect((await api.request('GET', `/v1/namespaces/team-a/decisions/${first!.id}`, undefined, as('admin'))).status).toBe(200);
    expect((await api.request('GET', `/v1/namespaces/team-a/decisions/${first!.id}`, undefined, as('teamAuditor'))).status).toBe(200);
    expect((await api.request('GET', `/v1/namespaces/team-b/decisions/${first!.id}`, undefined, as('teamAuditor'))).status).toBe(403);
    expect((await api.request('GET', `/v1/namespaces/team-a/decisions/${first!.id}`, undefined, as('admission'))).status).toBe(403);
  });

  it('answers 404 Status for an id it does not have', async () => {
    const { status, body } = await api.request('GET', '/v1/namespaces/team-a/decisions/999999999', undefined, as('auditor'));
    expect(status).toBe(404);
    expect(body).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    expect(body.message).toContain('999999999');
  });

  it("answers 404 for another namespace's decision", async () => {
    const [theirs] = await allDecisions('team-b');
    expect(theirs).toMatchObject({ namespace: 'team-b', name: 'elsewhere' });
    expect((await api.request('GET', `/v1/namespaces/team-b/decisions/${theirs!.id}`, undefined, as('auditor'))).status).toBe(200);
    const { status, body } = await api.request('GET', `/v1/namespaces/team-a/decisions/${theirs!.id}`, undefined, as('auditor'));
    expect(status).toBe(404);
    expect(body).toMatchObject({ kind: 'Status', code: 404 });
  });

  it.each(['abc', '1234567890123456789', '-1', '1e3'])('answers 400 Status for the id %s', async (id) => {
    const { status, body } = await api.request('GET', `/v1/namespaces/team-a/decisions/${id}`, undefined, as('auditor'));
    expect(status).toBe(400);
    expect(body).toMatchObject({ kind: 'Status', code: 400 });
    expect(body.message).toContain('decision id');
  });
});

describe('GET /v1/namespaces/{ns}/decisions?order=', () => {
  it('answers newest first, ids strictly descending, the same set as oldest first', async () => {
    const oldest = await allDecisions('team-a', 'oldest');
    const newest = await allDecisions('team-a', 'newest');
    const ids = newest.map((d) => BigInt(d.id));
    for (let i = 1; i < ids.length; i++) expect(ids[i]! < ids[i - 1]!).toBe(true);
    expect(newest).toEqual([...oldest].reverse());
  });

  it('pages newest first with limit and after, without repeats', async () => {
    const oldest = await allDecisions('team-a', 'oldest');
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 100; page++) {
      const { status, body } = await api.request(
        'GET',
        `/v1/namespaces/team-a/decisions?order=newest&limit=1${after ? `&after=${after}` : ''}`,
        undefined,
        as('auditor'),
      );
      expect(status).toBe(200);
      expect(body.items.length).toBeLessThanOrEqual(1);
      seen.push(...body.items.map((d: Decision) => d.id));
      if (!body.next) break;
      after = body.next;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(oldest.map((d) => d.id).reverse());
  });

  it('answers order=oldest as the default order', async () => {
    const { body } = await api.request('GET', '/v1/namespaces/team-a/decisions?limit=1000', undefined, as('auditor'));
    expect(body.items).toEqual(await allDecisions('team-a', 'oldest'));
  });

  it('answers 400 naming order for order=sideways', async () => {
    const { status, body } = await api.request('GET', '/v1/namespaces/team-a/decisions?order=sideways', undefined, as('auditor'));
    expect(status).toBe(400);
    expect(body).toMatchObject({ kind: 'Status', code: 400 });
    expect(body.message).toContain('order');
  });
});

describe('GET /v1/namespaces/{ns}/reservations', () => {
  it('names who reserved each one', async () => {
    const { status, body } = await api.request('GET', '/v1/namespaces/team-a/reservations', undefined, as('admin'));
    expect(status).toBe(200);
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({ requester: TOKENS.admission.name });
    const theirs = await api.request('GET', '/v1/namespaces/team-b/reservations', undefined, as('auditor'));
    expect(theirs.body.items.map((r: { requester?: string }) => r.requester)).toEqual([TOKENS.admission.name]);
  });
});

describe('the dashboard at /ui', () => {
  it('redirects /ui to /ui/', async () => {
    const response = await fetch(`${api.base}/ui`, { redirect: 'manual' });
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('/ui/');
  });

  it('serves index.html with a strict content security policy, revalidated on each load, without a token', async () => {
    const response = await fetch(`${api.base}/ui/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await response.text()).toContain('<title>quota-ledger</title>');
  });

  it('serves the hashed script index.html loads, cached for good', async () => {
    const html = await (await fetch(`${api.base}/ui/`)).text();
    const src = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(src, html).toBeDefined();
    const response = await fetch(`${api.base}${src!}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    expect(response.headers.get('cache-control')).toContain('immutable');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await response.text()).length).toBeGreaterThan(0);
  });

  it('serves the stylesheet index.html links, cached for good', async () => {
    const html = await (await fetch(`${api.base}/ui/`)).text();
    const href = /href="(\/ui\/assets\/[^"]+\.css)"/.exec(html)?.[1];
    expect(href, html).toBeDefined();
    const response = await fetch(`${api.base}${href!}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/css/);
    expect(response.headers.get('cache-control')).toContain('immutable');
  });

  it('answers 404 Status for a file that is not there', async () => {
    const response = await fetch(`${api.base}/ui/nope.js`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ kind: 'Status', code: 404 });
  });

  it('leads a browser from / to /ui/, and keeps the JSON 404 for a client that asks for JSON and for every other unknown path', async () => {
    for (const accept of ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', '*/*']) {
      const response = await fetch(`${api.base}/`, { redirect: 'manual', headers: { accept } });
      expect(response.status, accept).toBe(302);
      expect(response.headers.get('location')).toBe('/ui/');
    }
    const json = await fetch(`${api.base}/`, { redirect: 'manual', headers: { accept: 'application/json' } });
    expect(json.status).toBe(404);
    expect(await json.json()).toMatchObject({ kind: 'Status', code: 404 });
    for (const path of ['/nope', '/v1/nope', '/index.html']) {
      const response = await fetch(`${api.base}${path}`, { redirect: 'manual', headers: { accept: 'text/html' } });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type'), path).toMatch(/^application\/json/);
    }
  });

  it('tells the sign-in page, without a token, that a token is needed (and no development token file on a production setup)', async () => {
    const response = await fetch(`${api.base}/ui/session.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ authentication: 'token' });
  });

  it('names the development token file of the zero-setup start, and says when the API is open to everyone', async () => {
    // As apps/standalone writes them: tokens.yaml, and dev-token beside it; QUOTA_LEDGER_INSECURE_DEV set.
    const tokensFile = writeTokensFile([TOKENS.admin]);
    const devTokenFile = join(dirname(tokensFile), 'dev-token');
    writeFileSync(devTokenFile, `${TOKENS.admin.token}\n`, { mode: 0o600 });
    const standalone = await startApi({ insecureDev: true, tokensFile }, 'qldashdev');
    try {
      const answer = await (await fetch(`${standalone.base}/ui/session.json`)).json();
      expect(answer).toEqual({ authentication: 'token', devTokenFile });
      // The token itself is never served.
      expect(JSON.stringify(answer)).not.toContain(TOKENS.admin.token);
      // What docs/security.md says: with a tokens file the flag lets no one in; a token is still needed.
      expect((await fetch(`${standalone.base}/v1/whoami`)).status).toBe(401);
      expect((await fetch(`${standalone.base}/v1/whoami`, { headers: bearer('not-a-token-0123456789') })).status).toBe(401);
      expect((await fetch(`${standalone.base}/v1/whoami`, { headers: bearer(TOKENS.admin.token) })).status).toBe(200);
    } finally {
      await standalone.close();
    }
    const open = await startApi({ insecureDev: true, tokensFile: undefined }, 'qldashopen');
    try {
      expect(await (await fetch(`${open.base}/ui/session.json`)).json()).toEqual({ authentication: 'open' });
      // Without one, every caller is an anonymous admin with every role, named by X-Remote-User when it sends one.
      expect(await (await fetch(`${open.base}/v1/whoami`)).json()).toMatchObject({
        name: 'anonymous',
        roles: expect.arrayContaining(['admin', 'admission', 'auditor', 'webhook']),
        namespaces: '*',
      });
      expect(await (await fetch(`${open.base}/v1/whoami`, { headers: { 'x-remote-user': 'alice' } })).json()).toMatchObject({
        name: 'alice',
      });
    } finally {
      await open.close();
    }
  });

  it('serves nothing from outside its directory', async () => {
    for (const path of ['/ui/%2e%2e/package.json', '/ui/%2e%2e/%2e%2e/package.json', '/ui/assets/']) {
      expect((await fetch(`${api.base}${path}`)).status, path).toBe(404);
    }
  });
});
