import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

/**
 * A HierarchicalResourceQuota's usage, usage?at= and usage/series, read with
 * a token scoped to its parent namespace, showed every descendant's name and usage and the
 * descendants' denials (object names, requester, message), while the same token got 403 on the
 * child's own decisions. The model now: the subtree's total, as HNC's status shows it, to every
 * token that may read the parent; each namespace's part, and its denials, only to a token whose
 * scope includes that namespace.
 */
const TOKENS = {
  admin: { name: 'platform-admin', token: 'scope-admin-0123456789abcdef0123456789abcd', roles: ['admin', 'admission'] },
  parent: {
    name: 'org-auditor',
    token: 'scope-parent-0123456789abcdef0123456789abc',
    roles: ['auditor', 'admission'],
    namespaces: ['org'],
  },
  subtree: {
    name: 'org-lead',
    token: 'scope-subtree-0123456789abcdef0123456789ab',
    roles: ['auditor'],
    namespaces: ['org', 'org-dev', 'org-prod'],
  },
  child: { name: 'dev-ci', token: 'scope-child-0123456789abcdef0123456789abcd', roles: ['admission'], namespaces: ['org-dev'] },
};
type Who = keyof typeof TOKENS;

let api: RunningApi;
let since: string;
let until: string;
const as = (who: Who) => bearer(TOKENS[who].token);
const get = (path: string, who: Who) => api.request('GET', path, undefined, as(who));
const reserve = (namespace: string, name: string, who: Who) =>
  api.request(
    'POST',
    `/v1/namespaces/${namespace}/reservations`,
    { kind: 'Widget', resource: 'widgets.example.com', name, resources: { pods: '1' } },
    as(who),
  );

beforeAll(async () => {
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)) }, 'qlhrqscope');
  since = new Date(Date.now() - 1000).toISOString();
  for (const child of ['org-dev', 'org-prod']) {
    const body = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: child, labels: { 'org.tree.hnc.x-k8s.io/depth': '1' } } };
    expect((await api.request('PUT', `/v1/namespaces/${child}`, body, as('admin'))).status).toBe(201);
  }
  const hrq = {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'HierarchicalResourceQuota',
    metadata: { name: 'tree' },
    spec: { hard: { pods: '3' } },
  };
  expect((await api.request('PUT', '/v1/namespaces/org/hierarchicalresourcequotas/tree', hrq, as('admin'))).status).toBe(201);
  expect((await reserve('org', 'o1', 'parent')).status).toBe(201);
  expect((await reserve('org-dev', 'd1', 'child')).status).toBe(201);
  expect((await reserve('org-prod', 'p1', 'admin')).status).toBe(201);
  expect((await reserve('org-dev', 'secret-project', 'child')).status).toBe(403);
  expect((await reserve('org', 'o2', 'parent')).status).toBe(403);
  until = new Date(Date.now() + 1000).toISOString();
});
afterAll(async () => {
  await api?.close();
});

const PATH = '/v1/namespaces/org/hierarchicalresourcequotas/tree';
const namesOf = (usage: { namespaces: { namespace: string }[] }) => usage.namespaces.map((n) => n.namespace);
const denialsOf = (series: { markers: { kind: string; name?: string }[] }) =>
  series.markers.filter((m) => m.kind === 'denial').map((m) => m.name);

describe("a HierarchicalResourceQuota's usage, read with a token scoped to its parent", () => {
  it("shows the subtree total, and only the parent namespace's part", async () => {
    const now = await get(`${PATH}/usage`, 'parent');
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ hard: { pods: '3' }, used: { pods: '3' }, namespacesWithheld: 2 });
    expect(namesOf(now.body)).toEqual(['org']);
    expect(JSON.stringify(now.body)).not.toMatch(/org-dev|org-prod/);

    const then = await get(`${PATH}/usage?at=${encodeURIComponent(until)}`, 'parent');
    expect(then.body).toMatchObject({ used: { pods: '3' }, namespacesWithheld: 2 });
    expect(namesOf(then.body)).toEqual(['org']);
  });

  it('marks only the denials of the parent namespace on the series', async () => {
    const series = await get(`${PATH}/usage/series?since=${since}&until=${until}&points=5`, 'parent');
    expect(series.status).toBe(200);
    expect(series.body.points.at(-1).used).toEqual({ pods: '3' });
    expect(denialsOf(series.body)).toEqual(['o2']);
    expect(JSON.stringify(series.body)).not.toMatch(/secret-project|dev-ci/);
    // As the child's own decisions are refused to it.
    expect((await get('/v1/namespaces/org-dev/decisions?allowed=false', 'parent')).status).toBe(403);
  });

  it('shows everything to a token whose scope includes every descendant, and to an unscoped one', async () => {
    for (const who of ['subtree', 'admin'] as const) {
      const now = await get(`${PATH}/usage`, who);
      expect(now.status, who).toBe(200);
      expect(namesOf(now.body)).toEqual(['org', 'org-dev', 'org-prod']);
      expect(now.body.namespacesWithheld).toBeUndefined();
      expect(denialsOf((await get(`${PATH}/usage/series?since=${since}&until=${until}&points=5`, who)).body)).toEqual([
        'secret-project',
        'o2',
      ]);
    }
  });
});

describe("a HierarchicalResourceQuota's queue, read with a token scoped to its parent", () => {
  it("shows only the parent namespace's waiters; the descendants' are other teams' and counted as withheld", async () => {
    const wait = (namespace: string, name: string, who: Who) =>
      api.request(
        'POST',
        `/v1/namespaces/${namespace}/reservations`,
        { kind: 'Widget', resource: 'widgets.example.com', name, resources: { pods: '1' }, wait: { seconds: 60 } },
        as(who),
      );
    expect((await wait('org-dev', 'secret-queued', 'child')).status).toBe(202);
    expect((await wait('org', 'o3', 'parent')).status).toBe(202);
    const scoped = await get(`${PATH}/queue`, 'parent');
    expect(scoped.status).toBe(200);
    expect(scoped.body.namespaces.map((n: { namespace: string }) => n.namespace)).toEqual(['org']);
    expect(scoped.body.namespacesWithheld).toBe(1);
    expect(JSON.stringify(scoped.body)).not.toMatch(/org-dev|secret-queued/);
    const all = await get(`${PATH}/queue`, 'admin');
    expect(all.body.namespaces.map((n: { namespace: string }) => n.namespace).sort()).toEqual(['org', 'org-dev']);
    expect(all.body.namespacesWithheld).toBeUndefined();
  });
});
