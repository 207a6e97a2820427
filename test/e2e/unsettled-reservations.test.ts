import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type Io } from '../../apps/quotactl/src/cli.js';
import { startApi, type RunningApi } from '../support/api.js';

/**
 * A webhook reservation no reconcile can settle is reported: here no reconciler runs
 * and no inventory lists Widgets, so the widget the webhook admitted stays reserved and keeps
 * counting. Grace and interval are shortened so that "long after a reconciler would have settled
 * it" is a second away.
 */
let api: RunningApi;

beforeAll(async () => {
  api = await startApi({ reconcileGraceSeconds: 0, reconcileIntervalSeconds: 1 }, 'qlunsettled');
  const put = await api.request('PUT', '/v1/namespaces/crd/resourcequotas/widgets', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { 'count/widgets.example.com': '5' } },
  });
  expect(put.status).toBe(201);
});
afterAll(async () => {
  await api?.close();
});

const widgetReview = (name: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `review-${name}`,
    kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
    resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
    name,
    namespace: 'crd',
    operation: 'CREATE',
    userInfo: { username: 'system:serviceaccount:ci:deployer', groups: ['system:authenticated'] },
    object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'crd', uid: `uid-${name}` }, spec: {} },
    oldObject: null,
    dryRun: false,
  },
});

describe('unsettled webhook reservations', () => {
  it('are none at first, then counted by resource in /usage/unsettled and warned of by /readyz, which stays ready', async () => {
    expect((await api.request('GET', '/v1/namespaces/crd/usage/unsettled')).body).toMatchObject({ items: [] });
    const review = await api.request('POST', '/v1/admission/validate', widgetReview('w-1'));
    expect(review.body.response.allowed).toBe(true);
    // Two grace periods (0 s) and two reconcile intervals (1 s) later, nothing has settled it.
    await new Promise((resolve) => setTimeout(resolve, 2200));

    const unsettled = await api.request('GET', '/v1/namespaces/crd/usage/unsettled');
    expect(unsettled.status).toBe(200);
    expect(unsettled.body.items).toEqual([{ resource: 'widgets.example.com', count: 1, namespaces: 1 }]);
    expect(Date.parse(unsettled.body.reservedBefore)).toBeGreaterThan(0);
    expect((await api.request('GET', '/v1/namespaces/other/usage/unsettled')).body.items).toEqual([]);

    const ready = await api.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatch(
      /^\[\+\]unsettled-reservations ok \(warning: webhook reservations never committed nor released, still counted: widgets\.example\.com: 1 in 1 namespace; .*CUSTOM_RESOURCES.*\)$/m,
    );
    expect(ready.body).toMatch(/readyz check passed\n$/);

    // `quotactl describe quota` says so under the quota whose Used counts it (status.used is the projection's).
    await api.settle();
    let out = '';
    const io: Io = {
      stdout: (text) => void (out += text),
      stderr: () => undefined,
      readFile: async () => '',
      readStdin: async () => '',
      cwd: process.cwd(),
      env: { QUOTA_LEDGER_SERVER: api.base },
      now: () => Date.now(),
      version: 'test',
    };
    expect(await run(['describe', 'quota', '-n', 'crd'], io)).toBe(0);
    expect(out).toMatch(/count\/widgets\.example\.com\s+1\s+5/);
    expect(out).toMatch(/^Unsettled: +widgets\.example\.com 1 \(webhook reservations never committed nor released: .*CUSTOM_RESOURCES\)$/m);
  });
});
