import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditedRequests, auditFlags } from '../support/audit-log.js';
import { startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { kubeApi, type KubeApi } from '../support/kube-api.js';
import {
  defineQuota,
  eventsOfObject,
  eventually,
  ledgerEvents,
  pod,
  uidOf,
  untilCounted,
  untilUsed,
  type LedgerEventView,
} from '../support/ledger-reads.js';
import { prepareLedgerStack, RECONCILER_SERVICE_ACCOUNT, startLedgerStack, type LedgerStack } from '../support/ledger-stack.js';
import { startRefusingWebhook, type RefusingWebhook } from '../support/refusing-webhook.js';
import { startSlowProxy, type SlowProxy } from '../support/slow-proxy.js';

// The reconciler as built, listing a real kube-apiserver (INVENTORY_SOURCE=kubernetes) with the
// ServiceAccount token deploy/kubernetes/base/rbac.yaml grants, through a TCP proxy that can slow
// its requests down. The apiserver audits the reconciler's requests (what it listed, in which
// pages, with which answer), compacts etcd every second and serves continued lists from etcd
// (ListFromCacheSnapshot off), so that a slow paged list can outlive its continue token.

const RECONCILER_USER = `system:serviceaccount:${RECONCILER_SERVICE_ACCOUNT.namespace}:${RECONCILER_SERVICE_ACCOUNT.name}`;
const GRACE_SECONDS = 5;
const counts = { objects: 0, committed: 0, released: 0, terminated: 0, refused: 0, pages: 0, restartedAfter410: 0 };

let plane: ControlPlane;
let stack: LedgerStack;
let proxy: SlowProxy;
let second: RefusingWebhook;
let kube: KubeApi;

beforeAll(async () => {
  const audit = auditFlags(RECONCILER_USER);
  const prepared = await prepareLedgerStack();
  plane = await startControlPlane({
    controllers: ['namespace'],
    admission: { configuration: prepared.admission },
    apiServerFlags: [...audit.flags, '--etcd-compaction-interval=1s', '--feature-gates=ListFromCacheSnapshot=false'],
  });
  audit.cleanup();
  proxy = await startSlowProxy({ host: '127.0.0.1', port: Number(new URL(plane.server).port) });
  stack = await startLedgerStack(plane, prepared, { inventoryServer: proxy.url, graceSeconds: GRACE_SECONDS });
  kube = kubeApi(plane);
  // Another admission step after ours: it refuses the pods named refused-*.
  second = await startRefusingWebhook(plane, 'second-opinion', (review) =>
    review.operation === 'CREATE' && review.name?.startsWith('refused-')
      ? `pods "${review.name}" is forbidden: the second opinion says no`
      : undefined,
  );
  await second.register([{ apiGroups: [''], resources: ['pods'], operations: ['CREATE'] }], {
    probe: () => plane.tryKubectl(['create', '--dry-run=server', '-f', '-'], pod('probe', 'default')),
  });
});

afterAll(async () => {
  kube?.close();
  await stack?.stop();
  await proxy?.close();
  await second?.close();
  await plane?.stop();
  console.log(
    `reconciler e2e: ${counts.objects} objects made with kubectl, ${counts.committed} committed, ${counts.released} released, ${counts.terminated} terminated, ` +
      `${counts.refused} refused after ours, ${counts.pages} pages of one listing, ${counts.restartedAfter410} lists restarted after a 410`,
  );
});

async function namespaceWithQuota(namespace: string, hard: Record<string, string>): Promise<void> {
  await plane.createNamespace(namespace);
  await defineQuota(stack, namespace, 'compute', hard);
  await untilCounted(stack, namespace);
}

async function create(manifest: string): Promise<void> {
  await plane.kubectl(['create', '-f', '-'], manifest);
  counts.objects++;
}

/** Waits until every reservation of the object (by uid) is settled as `settled` says, and returns its events. */
function untilSettled(namespace: string, uid: string, settled: (events: LedgerEventView[]) => boolean): Promise<LedgerEventView[]> {
  return eventually(`object ${uid} in ${namespace} to be settled`, async () => {
    const events = eventsOfObject(await ledgerEvents(stack, namespace), uid);
    return settled(events) ? events : undefined;
  });
}

/**
 * Runs `work` while writes elsewhere move etcd's revision on and each second's compaction drops
 * what a paged list's first snapshot needs, and each request of the reconciler takes 1.2 s more:
 * its pages of one object outlive their continue token.
 */
async function underChurn(work: () => Promise<void>): Promise<void> {
  await kube
    .call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'churn' }, data: { n: '0' } })
    .catch(() => undefined);
  let writes = 0;
  const writer = setInterval(
    () =>
      void kube
        .call('PUT', '/api/v1/namespaces/default/configmaps/churn', { metadata: { name: 'churn' }, data: { n: String(++writes) } })
        .catch(() => undefined),
    100,
  );
  proxy.delayMs = 1200;
  try {
    await work();
  } finally {
    clearInterval(writer);
    proxy.delayMs = 0;
  }
}

/** Starts the reconciler with `env` and waits until the namespace's five configmaps are committed. */
async function startSlowly(namespace: string, env: Record<string, string>): Promise<void> {
  await stack.startApp('reconciler', env);
  await eventually(
    'every configmap committed through the slow listing',
    async () => ((await ledgerEvents(stack, namespace)).filter((e) => e.type === 'Committed').length === 5 ? true : undefined),
    150_000,
  );
}

/** The reconciler's list requests since `from` (an index into the audit log), by path without the query. */
function listsSince(from: number): Map<string, { requestURI: string; code: number }[]> {
  const byPath = new Map<string, { requestURI: string; code: number }[]>();
  for (const request of auditedRequests(plane).slice(from)) {
    if (request.verb !== 'list') continue;
    const path = request.requestURI.split('?')[0]!;
    byPath.set(path, [...(byPath.get(path) ?? []), request]);
  }
  return byPath;
}

const has = (type: string, reason?: string) => (events: LedgerEventView[]) =>
  events.some((e) => e.type === type && (reason === undefined || e.data.reason === reason));

describe('the reconciler against kube-apiserver, with the ServiceAccount of rbac.yaml', () => {
  it('commits what kubectl created and releases what it deleted', async () => {
    await namespaceWithQuota('rc-basic', { pods: '10', 'requests.cpu': '4', 'count/configmaps': '10' });
    await create(pod('web', 'rc-basic', { cpu: '500m' }));
    await plane.kubectl(['create', 'configmap', 'settings', '-n', 'rc-basic', '--from-literal=a=b']);
    counts.objects++;
    const [web, settings] = [await uidOf(stack, 'pod', 'web', 'rc-basic'), await uidOf(stack, 'configmap', 'settings', 'rc-basic')];
    for (const uid of [web, settings]) await untilSettled('rc-basic', uid ?? '', has('Committed'));
    counts.committed += 2;
    expect(await untilUsed(stack, 'rc-basic', 'compute', { pods: '1', 'requests.cpu': '500m', 'count/configmaps': '1' })).toBeDefined();

    await plane.kubectl(['delete', 'pod', 'web', '-n', 'rc-basic', '--wait=false']);
    await plane.kubectl(['delete', 'configmap', 'settings', '-n', 'rc-basic']);
    for (const uid of [web, settings]) await untilSettled('rc-basic', uid ?? '', has('Released', 'deleted'));
    counts.released += 2;
    await untilUsed(stack, 'rc-basic', 'compute', { pods: '0', 'requests.cpu': '0', 'count/configmaps': '0' });
  });

  it('releases, once and after the grace period, what another admission step refused after ours admitted it', async () => {
    await namespaceWithQuota('rc-refused', { pods: '10' });
    const refused = await plane.tryKubectl(['create', '-f', '-'], pod('refused-1', 'rc-refused'));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'admission webhook "second-opinion.test.example.com" denied the request: pods "refused-1" is forbidden: the second opinion says no',
    );
    counts.refused++;
    // Both validating webhooks saw the same object, with the uid it would have been stored under.
    const uid = second.refused.find((r) => r.name === 'refused-1')?.object?.metadata?.uid as string;
    expect(await uidOf(stack, 'pod', 'refused-1', 'rc-refused')).toBeUndefined();
    const events = await untilSettled('rc-refused', uid, has('Released'));
    expect(events.map((e) => [e.type, e.data.reason])).toEqual([
      ['Reserved', undefined],
      ['Released', 'stale'],
    ]);
    const [reserved, released] = events;
    expect(Date.parse(released?.time ?? '') - Date.parse(reserved?.time ?? '')).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000);
    counts.released++;
    await untilUsed(stack, 'rc-refused', 'compute', { pods: '0' });
    // Later listings release nothing more.
    await create(pod('after', 'rc-refused'));
    await untilSettled('rc-refused', (await uidOf(stack, 'pod', 'after', 'rc-refused')) ?? '', has('Committed'));
    expect(eventsOfObject(await ledgerEvents(stack, 'rc-refused'), uid).filter((e) => e.type === 'Released')).toHaveLength(1);
  });

  it('stops charging compute for terminal pods (phase set through the status subresource, or past their deletion grace period)', async () => {
    await namespaceWithQuota('rc-terminal', { pods: '10', 'requests.cpu': '4', 'count/pods': '10' });
    await create(pod('done', 'rc-terminal', { cpu: '1' }));
    await create(pod('crashed', 'rc-terminal', { cpu: '1' }));
    await create(pod('bound', 'rc-terminal', { cpu: '1', nodeName: 'node-1' }));
    await untilUsed(stack, 'rc-terminal', 'compute', { pods: '3', 'requests.cpu': '3', 'count/pods': '3' });
    for (const name of ['done', 'crashed', 'bound'])
      await untilSettled('rc-terminal', (await uidOf(stack, 'pod', name, 'rc-terminal')) ?? '', has('Committed'));
    counts.committed += 3;

    // No kubelet: the test plays it, through the status subresource.
    await plane.kubectl([
      'patch',
      'pod',
      'done',
      '-n',
      'rc-terminal',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Succeeded"}}',
    ]);
    await plane.kubectl([
      'patch',
      'pod',
      'crashed',
      '-n',
      'rc-terminal',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Failed"}}',
    ]);
    // A pod on a node is deleted gracefully: it stays, terminating, until its kubelet confirms (never, here).
    await plane.kubectl(['delete', 'pod', 'bound', '-n', 'rc-terminal', '--grace-period=1', '--wait=false']);
    expect(await uidOf(stack, 'pod', 'bound', 'rc-terminal')).toBeDefined();

    // Kubernetes counts every stored pod in count/pods, and only live ones in pods and compute.
    await untilUsed(stack, 'rc-terminal', 'compute', { pods: '0', 'requests.cpu': '0', 'count/pods': '3' });
    const terminated = (await ledgerEvents(stack, 'rc-terminal'))
      .filter((e) => e.type === 'Terminated')
      .map((e) => e.data.reason as string);
    expect(terminated.sort()).toEqual(['DeletionGracePeriodElapsed', 'Failed', 'Succeeded']);
    counts.terminated += 3;

    await plane.kubectl(['delete', 'pod', 'done', '-n', 'rc-terminal', '--wait=false']);
    await untilUsed(stack, 'rc-terminal', 'compute', { 'count/pods': '2' });
    counts.released++;
  });

  it('lists in pages of INVENTORY_PAGE_SIZE, following continue to the end (INVENTORY_CACHE=false: every kind listed per namespace)', async () => {
    await stack.stopApp('reconciler');
    await stack.startApp('reconciler', { INVENTORY_PAGE_SIZE: '2', INVENTORY_CACHE: 'false' });
    await namespaceWithQuota('rc-pages', { 'count/configmaps': '20' });
    for (let i = 0; i < 5; i++) await plane.kubectl(['create', 'configmap', `c${i}`, '-n', 'rc-pages']);
    counts.objects += 5;
    await untilUsed(stack, 'rc-pages', 'compute', { 'count/configmaps': '5' });
    await eventually('every configmap committed', async () =>
      (await ledgerEvents(stack, 'rc-pages')).filter((e) => e.type === 'Committed').length === 5 ? true : undefined,
    );
    counts.committed += 5;

    const pages = auditedRequests(plane).filter(
      (r) => r.verb === 'list' && r.requestURI.startsWith('/api/v1/namespaces/rc-pages/configmaps?'),
    );
    expect(pages.every((r) => r.requestURI.includes('limit=2') && r.code === 200)).toBe(true);
    // One listing of five: a first page and two continued ones.
    const continued = pages.filter((r) => r.requestURI.includes('continue='));
    expect(continued.length).toBeGreaterThanOrEqual(2);
    counts.pages = Math.max(counts.pages, 3);
  });

  it('restarts a list whose continue token expired (410 from the real server) and completes the listing (INVENTORY_CACHE=false)', async () => {
    await namespaceWithQuota('rc-expired', { 'count/configmaps': '20' });
    await stack.stopApp('reconciler');
    for (let i = 0; i < 5; i++) await plane.kubectl(['create', 'configmap', `e${i}`, '-n', 'rc-expired']);
    counts.objects += 5;
    await underChurn(() =>
      startSlowly('rc-expired', { INVENTORY_PAGE_SIZE: '1', INVENTORY_TIMEOUT_MS: '30000', INVENTORY_CACHE: 'false' }),
    );
    counts.committed += 5;
    const lists = auditedRequests(plane).filter(
      (r) => r.verb === 'list' && r.requestURI.startsWith('/api/v1/namespaces/rc-expired/configmaps'),
    );
    const expired = lists.findIndex((r) => r.code === 410 && r.requestURI.includes('continue='));
    expect(expired, `the reconciler's lists of rc-expired/configmaps: ${JSON.stringify(lists)}`).toBeGreaterThanOrEqual(0);
    // The list read again whole, in one answer.
    expect(lists.slice(expired + 1).some((r) => r.code === 200 && r.requestURI === '/api/v1/namespaces/rc-expired/configmaps')).toBe(true);
    counts.restartedAfter410 = lists.filter((r) => r.code === 410).length;
    await stack.stopApp('reconciler');
    await stack.startApp('reconciler');
  });

  it('reads listings from one cluster-wide list per kind, in pages of INVENTORY_PAGE_SIZE, and settles without a LIST per namespace (INVENTORY_CACHE)', async () => {
    await namespaceWithQuota('rc-cache', { 'count/configmaps': '20' });
    await stack.stopApp('reconciler');
    const from = auditedRequests(plane).length;
    for (let i = 0; i < 5; i++) await plane.kubectl(['create', 'configmap', `k${i}`, '-n', 'rc-cache']);
    counts.objects += 5;
    await stack.startApp('reconciler', { INVENTORY_PAGE_SIZE: '2' });
    await eventually('every configmap adopted or committed from the cache', async () =>
      (await ledgerEvents(stack, 'rc-cache')).filter((e) => e.type === 'Committed' || e.type === 'Adopted').length === 5 ? true : undefined,
    );
    const k0 = await uidOf(stack, 'configmap', 'k0', 'rc-cache');
    await plane.kubectl(['delete', 'configmap', 'k0', '-n', 'rc-cache']);
    await untilSettled('rc-cache', k0 ?? '', has('Released', 'deleted'));
    counts.released++;
    const lists = listsSince(from);
    expect([...lists.keys()].filter((path) => path.includes('/namespaces/'))).toEqual([]);
    // One list per kind since the start (a kind forbidden to the reconciler is asked once per discovery); the
    // definition syncs' watches (`limit=1`: where a watch starts) are theirs, not the inventory's.
    for (const [path, requests] of lists) {
      const firstPages = requests.filter(
        (r) => !r.requestURI.includes('continue=') && !r.requestURI.includes('limit=1&') && !r.requestURI.endsWith('limit=1'),
      );
      expect(firstPages.length, `${path}: ${JSON.stringify(requests)}`).toBeLessThanOrEqual(2);
    }
    const configmaps = lists.get('/api/v1/configmaps') ?? [];
    expect(configmaps.every((r) => r.requestURI.includes('limit=2') && r.code === 200)).toBe(true);
    expect(configmaps.filter((r) => r.requestURI.includes('continue=')).length).toBeGreaterThanOrEqual(2);
  });

  it('reads a cluster-wide list whose continue token expired (410) again whole, and fills its cache (INVENTORY_CACHE)', async () => {
    await namespaceWithQuota('rc-expired-cache', { 'count/configmaps': '20' });
    await stack.stopApp('reconciler');
    const from = auditedRequests(plane).length;
    for (let i = 0; i < 5; i++) await plane.kubectl(['create', 'configmap', `e${i}`, '-n', 'rc-expired-cache']);
    counts.objects += 5;
    await underChurn(() => startSlowly('rc-expired-cache', { INVENTORY_PAGE_SIZE: '1', INVENTORY_TIMEOUT_MS: '30000' }));
    const lists = listsSince(from).get('/api/v1/configmaps') ?? [];
    const expired = lists.findIndex((r) => r.code === 410 && r.requestURI.includes('continue='));
    expect(expired, `the reconciler's lists of configmaps: ${JSON.stringify(lists)}`).toBeGreaterThanOrEqual(0);
    expect(lists.slice(expired + 1).some((r) => r.code === 200 && r.requestURI === '/api/v1/configmaps')).toBe(true);
    counts.restartedAfter410 += lists.filter((r) => r.code === 410).length;
    await stack.stopApp('reconciler');
    await stack.startApp('reconciler');
  });
});
