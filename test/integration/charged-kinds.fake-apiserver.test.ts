import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARGED_KINDS, type KubeObject } from '@quota/domain';
import { createKubernetesInventory, KNOWN_KINDS } from '@quota/inventory';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { VALIDATE_RULES } from '../../apps/quotactl/src/webhook-config.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { sendJson, startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';
import { Ledger } from '../support/ledger.js';
import type { DataSource } from 'typeorm';

/**
 * Every kind the webhook is sent is a kind the reconciler lists (issue 19): a ResourceClaim the
 * webhook reserved is committed when the cluster shows it and released when it is gone, so
 * its charge cannot grow Used forever. The cluster is a FAKE API server (we cannot run
 * kube-apiserver here); the reconciler, its kubernetes inventory source, the ledger and
 * BullMQ's Redis are real.
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const CLAIMS = { group: 'resource.k8s.io', resource: 'resourceclaims' };

/** namespace → the ResourceClaims the fake cluster holds. */
const claims = new Map<string, KubeObject[]>();
let db: TestDatabase & { dataSource: DataSource };
let fake: FakeApiServer;
let ledger: Ledger;
let reconciler: Reconciler;

beforeAll(async () => {
  fake = await startFakeApiServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const match = /^\/apis?\/(?:[a-z0-9.]+\/)?v1\/namespaces\/([^/]+)\/([a-z]+)$/.exec(url.pathname);
    const known = KNOWN_KINDS.find((k) => k.groupResource.resource === match?.[2]);
    if (!match || !known) return sendJson(response, 404, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
    const items = known.groupResource.resource === 'resourceclaims' ? (claims.get(match[1] ?? '') ?? []) : [];
    return sendJson(response, 200, JSON.stringify({ kind: `${known.kind}List`, apiVersion: known.apiVersion, metadata: {}, items }));
  });
  db = await createMigratedDatabase('qlkinds');
  ledger = new Ledger(db.dataSource);
  const backend = { kind: 'redis' as const, url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` };
  const recorder = { now: ledger.now, reconcile: ledger.reconcile, namespaces: ledger.definitions.namespaces.bind(ledger.definitions) };
  reconciler = new Reconciler(recorder, createKubernetesInventory({ kubeconfigPath: fake.kubeconfig }), backend, {
    intervalMs: 60_000,
    graceMs: 0,
    concurrency: 1,
  });
});
afterAll(async () => {
  await reconciler?.queue.obliterate({ force: true }).catch(() => undefined);
  await reconciler?.stop();
  await ledger?.close();
  await db?.drop();
  await fake?.close();
});

const claim = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaim',
  metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
  spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com', count: 1 } }] } },
});
const used = async (namespace: string) => (await ledger.usage(namespace))?.quotas.find((q) => q.name === 'claims')?.used;

describe('the one list of kinds', () => {
  it('sends the webhook no kind the kubernetes inventory does not list', () => {
    const sent = VALIDATE_RULES.filter((r) => r.scope === 'Namespaced').flatMap((r) => r.apiGroups.flatMap((g) => r.resources.filter((res) => !res.includes('/')).map((res) => `${res}.${g}`)));
    const listed = new Set(createKubernetesInventory({ kubeconfigPath: fake.kubeconfig }).covers.map((gr) => `${gr.resource}.${gr.group}`));
    expect(sent.filter((gr) => !listed.has(gr))).toEqual([]);
    expect(sent.sort()).toEqual(CHARGED_KINDS.filter((k) => k.webhook).map((k) => `${k.groupResource.resource}.${k.groupResource.group}`).sort());
  });

  it('commits a ResourceClaim the webhook reserved once the cluster shows it, and releases it once it is deleted', async () => {
    const namespace = 'dra';
    await ledger.putQuota(namespace, { name: 'claims', spec: { hard: { 'count/resourceclaims.resource.k8s.io': '2' } } }, { actor: 'admin' });
    const object = claim(namespace, 'gpu-1');
    const admitted = await ledger.admit({ namespace, source: 'webhook', request: { operation: 'CREATE', groupResource: CLAIMS, namespace, name: 'gpu-1', object }, dryRun: false, requester: 'test' });
    expect(admitted.result.allowed).toBe(true);
    expect(await used(namespace)).toMatchObject({ 'count/resourceclaims.resource.k8s.io': '1' });

    claims.set(namespace, [object]);
    expect((await reconciler.reconcileNamespace(namespace)).actions).toEqual([{ kind: 'commit', reservationId: admitted.result.reservationId, uid: 'uid-dra-gpu-1' }]);
    claims.set(namespace, []);
    const gone = await reconciler.reconcileNamespace(namespace);
    expect(gone.actions).toEqual([expect.objectContaining({ kind: 'release', reservationId: admitted.result.reservationId, reason: 'deleted' })]);
    expect(await used(namespace)).toMatchObject({ 'count/resourceclaims.resource.k8s.io': '0' });
  });
});
