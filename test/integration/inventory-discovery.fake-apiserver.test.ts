import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubernetesInventory, METADATA_ACCEPT } from '@quota/inventory';
import { inventoryFailure } from '../support/inventory.js';
import { sendJson, startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';

/**
 * A FAKE API server (node:http) with discovery documents written for this test: the core group
 * serves pods (with a status subresource), serviceaccounts, secrets, events, bindings (create
 * only) and namespaces (cluster-scoped); /apis names policy/v1 (poddisruptionbudgets),
 * locked.example.com/v1 (lockers: every list 403) and gone.example.com/v1 (404). Lists answer
 * a PartialObjectMetadataList when asked for one, except secrets, which answer a whole
 * SecretList with data (a server ignoring the Accept header).
 */
interface Seen {
  readonly path: string;
  readonly accept: string | undefined;
}

const seen: Seen[] = [];
let discoveryFails = false;
let fake: FakeApiServer;

const resource = (
  name: string,
  kind: string,
  namespaced = true,
  verbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
) => ({ name, kind, namespaced, verbs });
const DOCUMENTS: Record<string, object> = {
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      resource('pods', 'Pod'),
      resource('pods/status', 'Pod', true, ['get', 'patch', 'update']),
      resource('serviceaccounts', 'ServiceAccount'),
      resource('secrets', 'Secret'),
      resource('events', 'Event'),
      resource('bindings', 'Binding', true, ['create']),
      resource('namespaces', 'Namespace', false),
    ],
  },
  '/apis': {
    kind: 'APIGroupList',
    groups: [
      {
        name: 'policy',
        versions: [{ groupVersion: 'policy/v1', version: 'v1' }],
        preferredVersion: { groupVersion: 'policy/v1', version: 'v1' },
      },
      { name: 'locked.example.com', versions: [{ groupVersion: 'locked.example.com/v1', version: 'v1' }] },
      { name: 'gone.example.com', versions: [{ groupVersion: 'gone.example.com/v1', version: 'v1' }] },
    ],
  },
  '/apis/policy/v1': {
    kind: 'APIResourceList',
    groupVersion: 'policy/v1',
    resources: [resource('poddisruptionbudgets', 'PodDisruptionBudget'), resource('evictions', 'Eviction', true, ['create'])],
  },
  '/apis/locked.example.com/v1': {
    kind: 'APIResourceList',
    groupVersion: 'locked.example.com/v1',
    resources: [resource('lockers', 'Locker')],
  },
};

const metadata = (name: string) => ({ name, namespace: 'team-a', uid: `uid-${name}`, resourceVersion: '7' });

function handle(request: IncomingMessage, response: ServerResponse): void {
  const path = new URL(request.url ?? '/', 'http://fake').pathname;
  const accept = request.headers.accept;
  seen.push({ path, accept });
  const send = (status: number, body: object) => sendJson(response, status, JSON.stringify(body));
  if (discoveryFails && path === '/apis') return send(500, { kind: 'Status', code: 500, reason: 'InternalError' });
  const document = DOCUMENTS[path];
  if (document) return send(200, document);
  const match = /^\/apis?\/(?:([a-z0-9.]+)\/)?v1\/namespaces\/team-a\/([a-z]+)$/.exec(path);
  if (!match) return send(404, { kind: 'Status', code: 404, reason: 'NotFound' });
  const [, group = '', plural = ''] = match;
  if (group === 'locked.example.com') return send(403, { kind: 'Status', code: 403, reason: 'Forbidden', message: 'lockers is forbidden' });
  const metadataList = (items: object[]) => ({
    kind: 'PartialObjectMetadataList',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: '9' },
    items,
  });
  if (plural === 'serviceaccounts') return send(200, metadataList([{ metadata: metadata('default') }, { metadata: metadata('builder') }]));
  if (plural === 'poddisruptionbudgets') return send(200, metadataList([{ metadata: metadata('web-pdb') }]));
  if (plural === 'secrets')
    return send(200, {
      kind: 'SecretList',
      apiVersion: 'v1',
      metadata: {},
      items: [{ metadata: metadata('token'), data: { password: 'c2VjcmV0' }, type: 'Opaque' }],
    });
  if (plural === 'pods')
    return send(200, {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: {},
      items: [{ metadata: metadata('web'), spec: { containers: [] }, status: { phase: 'Running' } }],
    });
  return send(200, accept === METADATA_ACCEPT ? metadataList([]) : { metadata: {}, items: [] });
}

beforeAll(async () => {
  fake = await startFakeApiServer(handle);
});
afterAll(async () => {
  await fake?.close();
});

const spelled = (covers: readonly { group: string; resource: string }[]) =>
  covers.map((c) => (c.group === '' ? c.resource : `${c.resource}.${c.group}`));

describe('kubernetes inventory: the kinds come from discovery, read metadata-only unless charged from the spec', () => {
  it('covers every namespaced resource the server serves and can list and watch, beside its fixed kinds', async () => {
    const inventory = await createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig }).list('team-a');
    const covers = spelled(inventory.covers);
    expect(covers).toEqual(
      expect.arrayContaining(['pods', 'secrets', 'deployments.apps', 'serviceaccounts', 'poddisruptionbudgets.policy']),
    );
    // Not served as listable namespaced resources, never charged (events), or forbidden to this source (reported as uncovered).
    for (const absent of ['pods/status', 'events', 'bindings', 'namespaces', 'evictions.policy', 'lockers.locked.example.com'])
      expect(covers).not.toContain(absent);
    expect(inventory.objects.map((o) => `${spelled([o.groupResource])[0]}/${o.name}`).sort()).toEqual([
      'poddisruptionbudgets.policy/web-pdb',
      'pods/web',
      'secrets/token',
      'serviceaccounts/builder',
      'serviceaccounts/default',
    ]);
  });

  it('lists kinds charged one per object metadata-only, and keeps nothing but metadata even when the server sends more', async () => {
    seen.length = 0;
    const inventory = await createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig }).list('team-a');
    const acceptOf = (path: string) => seen.find((s) => s.path === path)?.accept;
    expect(acceptOf('/api/v1/namespaces/team-a/pods')).toBe('application/json');
    expect(acceptOf('/api/v1/namespaces/team-a/services')).toBe('application/json');
    expect(acceptOf('/api/v1/namespaces/team-a/secrets')).toBe(METADATA_ACCEPT);
    expect(acceptOf('/api/v1/namespaces/team-a/serviceaccounts')).toBe(METADATA_ACCEPT);
    expect(acceptOf('/apis/apps/v1/namespaces/team-a/deployments')).toBe(METADATA_ACCEPT);
    const secret = inventory.objects.find((o) => o.groupResource.resource === 'secrets');
    expect(secret?.object).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: metadata('token') });
    expect(JSON.stringify(inventory.objects)).not.toContain('c2VjcmV0');
    const pod = inventory.objects.find((o) => o.groupResource.resource === 'pods');
    expect(pod?.object).toMatchObject({ apiVersion: 'v1', kind: 'Pod', status: { phase: 'Running' } });
    expect(inventory.objects.find((o) => o.name === 'builder')?.object).toEqual({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: metadata('builder'),
    });
  });

  it('does not ask again, for a discovery TTL, for a discovered kind it was forbidden to list', async () => {
    const source = createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig });
    seen.length = 0;
    await source.list('team-a');
    const again = await source.list('team-a');
    expect(seen.filter((s) => s.path === '/apis/locked.example.com/v1/namespaces/team-a/lockers')).toHaveLength(1);
    expect(spelled(again.covers)).not.toContain('lockers.locked.example.com');
  });

  it('discovers once per TTL, and a failed discovery fails the listing rather than cover less', async () => {
    const source = createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig, discoveryTtlMs: 60_000 });
    seen.length = 0;
    await source.list('team-a');
    await source.list('team-a');
    expect(seen.filter((s) => s.path === '/apis')).toHaveLength(1);
    discoveryFails = true;
    try {
      const error = await inventoryFailure(createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig }).list('team-a'));
      expect(error.message).toContain('discovery: GET /apis: HTTP 500');
    } finally {
      discoveryFails = false;
    }
  });

  it('with resources configured, lists exactly those (no discovery)', async () => {
    seen.length = 0;
    const inventory = await createKubernetesInventory({
      cache: false,
      kubeconfigPath: fake.kubeconfig,
      resources: [{ group: '', resource: 'secrets' }],
    }).list('team-a');
    expect(spelled(inventory.covers)).toEqual(['secrets']);
    expect(seen.map((s) => s.path)).toEqual(['/api/v1/namespaces/team-a/secrets']);
    expect(seen[0]?.accept).toBe(METADATA_ACCEPT);
  });
});
