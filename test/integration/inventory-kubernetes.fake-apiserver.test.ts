import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInventorySource, createKubernetesInventory, KNOWN_KINDS, type KubernetesInventoryOptions } from '@quota/inventory';
import { inventoryFailure } from '../support/inventory.js';
import { sendJson, startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';

/**
 * The per-namespace listing (INVENTORY_CACHE=false; the caches are tested on the real plane,
 * test/kubernetes/reconciler-e2e.test.ts). We cannot run a Kubernetes API server here. This is a FAKE API server (node:http) that
 * replays RECORDED list responses (test/fixtures/kubernetes/), reached through a kubeconfig
 * the way a real cluster is. Each namespace plays one scenario:
 *
 * - team-a: the recorded lists (pods over two pages, an empty PVC list, one deployment);
 * - forbidden: pods answer 403 (RBAC); broken: deployments answer 500;
 * - expired: the second page of pods answers 410 (continue token expired), the unpaged list
 *   answers both pages' pods; expired-broken: the unpaged list answers 500;
 * - hanging: pods never answer; no-uid: a pod without metadata.uid.
 *
 * `/api/v1/namespaces` lists `clusterNamespaces` two to a page (what the reconciler records).
 */
const fixture = async (name: string): Promise<string> => readFile(new URL(`../fixtures/kubernetes/${name}`, import.meta.url), 'utf8');

let clusterNamespaces: unknown[] = [];
const namespaceItem = (name: string, labels?: Record<string, string>) => ({
  metadata: { name, uid: `uid-${name}`, resourceVersion: '48211', ...(labels ? { labels } : {}) },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active' },
});

const CONTINUE_TOKEN = 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDgyMTEsInN0YXJ0Ijoid2ViLTVkOGY5Yzc0Yjctazh3cTJcdTAwMDAifQ';

interface Seen {
  readonly path: string;
  readonly query: Record<string, string>;
  readonly authorization: string | undefined;
}

let fake: FakeApiServer;
let kubeconfig: string;
const seen: Seen[] = [];
/** Called when a hanging request arrives, with a promise of the moment the client lets go of it. */
let onHang: ((hung: { closed: Promise<void> }) => void) | undefined;

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://fake');
  seen.push({ path: url.pathname, query: Object.fromEntries(url.searchParams), authorization: request.headers.authorization });
  const send = (status: number, body: string) => sendJson(response, status, body);
  if (url.pathname === '/api/v1/namespaces') {
    const offset = Number(url.searchParams.get('continue') ?? 0);
    const limit = Number(url.searchParams.get('limit'));
    const next = offset + limit < clusterNamespaces.length ? String(offset + limit) : undefined;
    return send(
      200,
      JSON.stringify({
        kind: 'NamespaceList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '48211', ...(next ? { continue: next } : {}) },
        items: clusterNamespaces.slice(offset, offset + limit),
      }),
    );
  }
  const match = /^\/apis?\/(?:[a-z0-9.]+\/)?v1\/namespaces\/([^/]+)\/([a-z]+)$/.exec(url.pathname);
  if (!match) return send(404, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
  const [, namespace, resource] = match;
  const continued = url.searchParams.has('continue');
  if (resource === 'pods') {
    if (namespace === 'forbidden') return send(403, await fixture('status-403-forbidden.json'));
    if (namespace === 'hanging') {
      onHang?.({ closed: new Promise((resolve) => request.socket.once('close', () => resolve())) });
      return; // never answers
    }
    if (namespace?.startsWith('expired') && continued) return send(410, await fixture('status-410-expired.json'));
    if (namespace?.startsWith('expired') && !url.searchParams.has('limit')) {
      if (namespace === 'expired-broken') return send(500, await fixture('status-500.json'));
      const [first, second] = [JSON.parse(await fixture('pods-page-1.json')), JSON.parse(await fixture('pods-page-2.json'))] as {
        metadata: object;
        items: { metadata: object }[];
      }[];
      const items = [...(first?.items ?? []), ...(second?.items ?? [])].map((item) => ({
        ...item,
        metadata: { ...item.metadata, namespace },
      }));
      return send(200, JSON.stringify({ ...second, items }));
    }
    if (namespace === 'no-uid') {
      const list = JSON.parse(await fixture('pods-page-2.json')) as { items: { metadata: { uid?: string } }[] };
      delete list.items[0]?.metadata.uid;
      return send(200, JSON.stringify(list));
    }
    if (continued) {
      if (url.searchParams.get('continue') !== CONTINUE_TOKEN) return send(400, '{"kind":"Status","code":400}');
      return send(200, await fixture('pods-page-2.json'));
    }
    return send(200, await fixture('pods-page-1.json'));
  }
  if (resource === 'deployments' && namespace === 'broken') return send(500, await fixture('status-500.json'));
  // A cluster before Kubernetes 1.34 serves no resource.k8s.io/v1.
  if (resource === 'resourceclaims' && namespace === 'old-cluster')
    return send(
      404,
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'the server could not find the requested resource',
        reason: 'NotFound',
        code: 404,
      }),
    );
  if (resource === 'persistentvolumeclaims') return send(200, await fixture('persistentvolumeclaims.json'));
  if (resource === 'deployments') return send(200, await fixture('deployments.json'));
  const known = KNOWN_KINDS.find((k) => k.groupResource.resource === resource);
  return send(
    200,
    JSON.stringify({ kind: `${known?.kind}List`, apiVersion: known?.apiVersion, metadata: { resourceVersion: '48211' }, items: [] }),
  );
}

beforeAll(async () => {
  fake = await startFakeApiServer(handle);
  kubeconfig = fake.kubeconfig;
});
afterAll(async () => {
  await fake?.close();
});

const PODS = [{ group: '', resource: 'pods' }];
const source = (options: Omit<KubernetesInventoryOptions, 'kubeconfigPath'> = {}) =>
  createKubernetesInventory({ cache: false, kubeconfigPath: kubeconfig, pageSize: 2, ...options });
const failure = inventoryFailure;

describe('kubernetes inventory source, against a fake API server replaying recorded responses', () => {
  it('lists every covered resource of the namespace, following the continue token, and fills in apiVersion and kind', async () => {
    seen.length = 0;
    const inventory = await createInventorySource({ source: 'kubernetes', cache: false, kubeconfigPath: kubeconfig, pageSize: 2 }).list(
      'team-a',
    );
    expect(inventory.namespace).toBe('team-a');
    expect(inventory.covers).toHaveLength(15);
    expect(inventory.objects.map((o) => [`${o.groupResource.resource}.${o.groupResource.group}`, o.name, o.uid])).toEqual([
      ['pods.', 'web-5d8f9c74b7-2xkqz', '0b8f3c5e-6f1d-4a7e-9d52-1f0c4a3b7e11'],
      ['pods.', 'web-5d8f9c74b7-k8wq2', '7c2e9a10-2b4f-4c8d-8e3a-5d6f7a8b9c22'],
      ['pods.', 'batch-import-7x2lp', 'e4d3c2b1-9a8f-4e7d-b6c5-a4b3c2d1e033'],
      ['deployments.apps', 'web', '5f4e3d2c-1b0a-4987-8654-3210fedcba55'],
    ]);
    const [first, , third, deployment] = inventory.objects;
    expect(first?.object).toMatchObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'team-a', uid: '0b8f3c5e-6f1d-4a7e-9d52-1f0c4a3b7e11' },
    });
    // A Deployment is charged one per object: read metadata-only, and cut down to it even when the server sends more.
    expect(deployment?.object).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } });
    expect(Object.keys(deployment?.object ?? {})).toEqual(['apiVersion', 'kind', 'metadata']);
    // The object as the API server stored it: timestamps as written, pod-level resources kept.
    const recorded = (JSON.parse(await fixture('pods-page-2.json')) as { items: object[] }).items[0];
    expect(third?.object).toEqual({ apiVersion: 'v1', kind: 'Pod', ...recorded });
    expect(third?.object).toMatchObject({
      metadata: { creationTimestamp: '2026-11-21T02:00:00Z' },
      spec: { resources: { requests: { cpu: '1' } } },
    });
  });

  it('asks for the namespace in the path, pages by limit and continue, and sends the kubeconfig token', async () => {
    seen.length = 0;
    await source().list('team-a');
    const pods = seen.filter((s) => s.path === '/api/v1/namespaces/team-a/pods');
    expect(pods.map((s) => s.query)).toEqual([{ limit: '2' }, { limit: '2', continue: CONTINUE_TOKEN }]);
    expect(seen.map((s) => s.path)).toEqual(
      expect.arrayContaining([
        '/api/v1/namespaces/team-a/persistentvolumeclaims',
        '/api/v1/namespaces/team-a/resourcequotas',
        '/apis/apps/v1/namespaces/team-a/deployments',
        '/apis/batch/v1/namespaces/team-a/cronjobs',
      ]),
    );
    // Discovery (/api/v1 and /apis: this fake serves neither, so nothing is added), 15 resources, pods in two pages.
    expect(seen.slice(0, 2).map((s) => s.path)).toEqual(['/api/v1', '/apis']);
    expect(seen).toHaveLength(18);
    expect(new Set(seen.map((s) => s.authorization))).toEqual(new Set(['Bearer test-token']));
  });

  it('lists a resource the cluster does not serve (404 on its list, as resource.k8s.io/v1 before Kubernetes 1.34) as having no objects', async () => {
    seen.length = 0;
    const claims = { group: 'resource.k8s.io', resource: 'resourceclaims' };
    const inventory = await source({ resources: [claims, { group: '', resource: 'configmaps' }] }).list('old-cluster');
    expect(seen.map((s) => s.path).sort()).toEqual([
      '/api/v1/namespaces/old-cluster/configmaps',
      '/apis/resource.k8s.io/v1/namespaces/old-cluster/resourceclaims',
    ]);
    expect(inventory.covers).toContainEqual(claims);
    expect(inventory.objects).toEqual([]);
  });

  it('lists only the resources it is configured to cover', async () => {
    seen.length = 0;
    const inventory = await source({ resources: [{ group: 'apps', resource: 'deployments' }] }).list('team-a');
    expect(inventory.covers).toEqual([{ group: 'apps', resource: 'deployments' }]);
    expect(inventory.objects.map((o) => o.name)).toEqual(['web']);
    expect(seen.map((s) => s.path)).toEqual(['/apis/apps/v1/namespaces/team-a/deployments']);
  });

  it.each([
    [
      'a 403 (the service account may not list pods)',
      'forbidden',
      /namespace forbidden: GET \/api\/v1\/namespaces\/forbidden\/pods: HTTP 403 Forbidden: pods is forbidden/,
    ],
    [
      'a 500 on one resource while the others answer',
      'broken',
      /GET \/apis\/apps\/v1\/namespaces\/broken\/deployments: HTTP 500 InternalError: Internal error occurred: etcdserver/,
    ],
    [
      'a 410 on the continue token, then a failure of the unpaged list that replaces it',
      'expired-broken',
      /GET \/api\/v1\/namespaces\/expired-broken\/pods: HTTP 500/,
    ],
    ['a pod without metadata.uid, naming it', 'no-uid', /namespace no-uid: Pod team-a\/batch-import-7x2lp has no metadata.uid/],
  ])('refuses the whole listing on %s: a partial list would release live reservations', async (_case, namespace, message) => {
    const error = await failure(source().list(namespace));
    expect(error.source).toBe('kubernetes');
    expect(error.message).toMatch(message);
  });

  it('lists again, unpaged, a resource whose continue token expired (410), as client-go pages: the listing is complete', async () => {
    seen.length = 0;
    const inventory = await source({ resources: PODS }).list('expired');
    expect(seen.map((s) => s.query)).toEqual([{ limit: '2' }, { limit: '2', continue: CONTINUE_TOKEN }, {}]);
    expect(inventory.objects.map((o) => o.name)).toEqual(['web-5d8f9c74b7-2xkqz', 'web-5d8f9c74b7-k8wq2', 'batch-import-7x2lp']);
  });

  it('refuses a listing over its object limit', async () => {
    const error = await failure(source({ maxObjects: 2, resources: PODS }).list('team-a'));
    expect(error.message).toMatch(/more than the 2 objects a listing may hold/);
  });

  it('refuses a page larger than its byte limit', async () => {
    const error = await failure(source({ maxBytes: 1000, resources: PODS }).list('team-a'));
    expect(error.message).toMatch(/over the 1000-byte limit/);
  });

  it('gives up on a server that does not answer within timeoutMs, and lets go of the connection', async () => {
    let hung: { closed: Promise<void> } | undefined;
    onHang = (h) => (hung = h);
    const error = await failure(source({ timeoutMs: 200, resources: PODS }).list('hanging'));
    expect(error.message).toBe('kubernetes: namespace hanging: GET /api/v1/namespaces/hanging/pods: no answer within 200 ms');
    await hung?.closed;
  });

  it("stops when the caller's signal aborts", async () => {
    const arrived = new Promise<{ closed: Promise<void> }>((resolve) => (onHang = resolve));
    const controller = new AbortController();
    const listing = failure(source({ resources: PODS }).list('hanging', controller.signal));
    const hung = await arrived;
    controller.abort();
    expect((await listing).message).toBe('kubernetes: namespace hanging: GET /api/v1/namespaces/hanging/pods: aborted by the caller');
    await hung.closed;
  });

  it('refuses at creation a kubeconfig that does not exist, and a resource it cannot list', () => {
    expect(() => createKubernetesInventory({ cache: false, kubeconfigPath: `${kubeconfig}-missing` })).toThrow(
      /kubernetes inventory: cannot load the kubeconfig .*missing/,
    );
    expect(() => source({ resources: [{ group: 'example.com', resource: 'widgets' }] })).toThrow(/cannot cover widgets\.example\.com/);
  });
});

describe('kubernetes inventory source: the namespaces of the cluster, from a FAKE API server', () => {
  it('lists every Namespace with its labels and annotations, following the continue token', async () => {
    clusterNamespaces = [
      namespaceItem('team-a', { tenant: 'acme' }),
      namespaceItem('team-b'),
      { ...namespaceItem('team-c'), metadata: { name: 'team-c', annotations: { owner: 'x' } } },
    ];
    seen.length = 0;
    const listed = await source().namespaces?.();
    expect(listed?.items).toEqual([
      { name: 'team-a', labels: { tenant: 'acme' }, resourceVersion: '48211' },
      { name: 'team-b', resourceVersion: '48211' },
      { name: 'team-c', annotations: { owner: 'x' } },
    ]);
    expect(seen.map((s) => [s.path, s.query['limit'], s.query['continue']])).toEqual([
      ['/api/v1/namespaces', '2', undefined],
      ['/api/v1/namespaces', '2', '2'],
    ]);
  });

  it('refuses a listing it cannot read whole: a namespace without a name, labels that are not strings, more namespaces than its limit', async () => {
    clusterNamespaces = [namespaceItem('team-a'), { metadata: {} }];
    await expect(source().namespaces?.()).rejects.toThrow('kubernetes: namespaces: a Namespace without metadata.name');
    clusterNamespaces = [{ metadata: { name: 'team-a', labels: { tenant: 7 } } }];
    await expect(source().namespaces?.()).rejects.toThrow('Namespace team-a: metadata.labels is not a map of strings');
    clusterNamespaces = [namespaceItem('a'), namespaceItem('b'), namespaceItem('c')];
    await expect(source({ maxObjects: 2 }).namespaces?.()).rejects.toThrow(
      'kubernetes: namespaces: more than the 2 objects a listing may hold',
    );
  });
});
