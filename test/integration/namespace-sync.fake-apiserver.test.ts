import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedQuotaKey, type Pod } from '@quota/domain';
import { createKubernetesInventory, KNOWN_KINDS } from '@quota/inventory';
import { ClusterQueries, ClusterWriter } from '@quota/ledger';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { sendJson, startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';
import { Ledger } from '../support/ledger.js';
import { disagreements } from '../support/shared-quotas.js';
import { poolOf } from '../support/api.js';
import type { DataSource } from 'typeorm';

/**
 * The reconciler keeps the ledger's Namespace objects as the cluster has them, so that the
 * labels a ClusterResourceQuota selects on need no import. The cluster is a FAKE
 * API server (we cannot run kube-apiserver here) whose namespaces the test edits; the
 * reconciler, its kubernetes inventory source, the ledger and BullMQ's Redis are real.
 */
const ACME = sharedQuotaKey({ kind: 'ClusterResourceQuota', name: 'acme' });
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

let clusterNamespaces: { name: string; labels?: Record<string, string>; resourceVersion?: string }[] = [];
/** The NamespaceList's own resourceVersion (what the listing is as of); unset: none is sent. */
let listVersion: string | undefined;
let db: TestDatabase & { dataSource: DataSource };
let fake: FakeApiServer;
let ledger: Ledger;
let writer: ClusterWriter;
let queries: ClusterQueries;
let reconciler: Reconciler;

beforeAll(async () => {
  fake = await startFakeApiServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const namespaceOf = (n: (typeof clusterNamespaces)[number]) => ({
      metadata: {
        name: n.name,
        uid: `uid-${n.name}`,
        labels: { 'kubernetes.io/metadata.name': n.name, ...n.labels },
        ...(n.resourceVersion ? { resourceVersion: n.resourceVersion } : {}),
      },
      status: { phase: 'Active' },
    });
    if (url.pathname === '/api/v1/namespaces') {
      const items = clusterNamespaces.map(namespaceOf);
      return sendJson(
        response,
        200,
        JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: listVersion ? { resourceVersion: listVersion } : {}, items }),
      );
    }
    const one = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(url.pathname);
    if (one) {
      const found = clusterNamespaces.find((n) => n.name === one[1]);
      return found
        ? sendJson(response, 200, JSON.stringify({ kind: 'Namespace', apiVersion: 'v1', ...namespaceOf(found) }))
        : sendJson(response, 404, JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound' }));
    }
    const known = KNOWN_KINDS.find((k) => url.pathname.endsWith(`/${k.groupResource.resource}`));
    return sendJson(response, 200, JSON.stringify({ kind: `${known?.kind}List`, apiVersion: known?.apiVersion, metadata: {}, items: [] }));
  });
  db = await createMigratedDatabase('qlnssync');
  ledger = new Ledger(db.dataSource);
  writer = new ClusterWriter(db.dataSource);
  queries = new ClusterQueries(db.dataSource);
  const recorder = {
    now: ledger.now,
    reconcile: ledger.reconcile,
    namespaces: ledger.definitions.namespaces.bind(ledger.definitions),
    putNamespace: writer.putNamespace.bind(writer),
    deleteNamespace: writer.deleteNamespace.bind(writer),
    namespaceObjects: queries.namespaceObjects.bind(queries),
  };
  const backend = { kind: 'redis' as const, url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` };
  reconciler = new Reconciler(recorder, createKubernetesInventory({ kubeconfigPath: fake.kubeconfig }), backend, {
    intervalMs: 60_000,
    graceMs: 0,
    concurrency: 1,
  });
});
afterAll(async () => {
  await reconciler?.queue.obliterate({ force: true }).catch(() => undefined);
  await reconciler?.stop();
  await writer?.close();
  await ledger?.close();
  await db?.drop();
  await fake?.close();
});

const pod = (namespace: string, name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx' }] },
});
const admit = (namespace: string, name: string) =>
  ledger.admit({
    namespace,
    source: 'webhook',
    request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name, object: pod(namespace, name) },
    dryRun: false,
    requester: 'test',
  });
const eventCount = async () => Number((await db.dataSource.query(`SELECT count(*)::int AS n FROM ledger_events`))[0].n);

describe('the reconciler records the Namespaces of a cluster (FAKE API server)', () => {
  it("records their labels, so a cluster quota covers them; moves a relabelled namespace's usage out; removes a deleted one; and writes nothing when nothing changed", async () => {
    await writer.putSharedQuota(
      {
        ref: { kind: 'ClusterResourceQuota', name: 'acme' },
        spec: { hard: { pods: '2' } },
        selector: { labels: { matchLabels: { tenant: 'acme' } } },
      },
      { actor: 'admin' },
    );
    clusterNamespaces = [{ name: 'team-a', labels: { tenant: 'acme' } }, { name: 'team-b', labels: { tenant: 'acme' } }, { name: 'other' }];
    expect(await reconciler.syncNamespaces()).toEqual({ recorded: 3, removed: 0 });
    expect((await queries.getNamespace('team-a'))?.definition.metadata?.labels).toEqual({
      'kubernetes.io/metadata.name': 'team-a',
      tenant: 'acme',
    });
    expect((await queries.coveringNamespace('team-b')).map((q) => q.key)).toEqual([ACME]);
    // The fan-out reconciles the namespaces a quota covers; `other` holds only its Namespace object.
    expect(await ledger.definitions.namespaces({ limit: 10 })).toEqual(['team-a', 'team-b']);

    expect((await admit('team-a', 'a1')).result.allowed).toBe(true);
    expect((await admit('team-b', 'b1')).result.allowed).toBe(true);
    const denied = (await admit('team-a', 'a2')).result;
    expect(denied.allowed).toBe(false);
    expect(denied.message).toContain('exceeded cluster quota: acme');

    // The cluster relabels team-b: its pod's charge leaves the cluster quota, and team-a may admit again.
    clusterNamespaces = [
      { name: 'team-a', labels: { tenant: 'acme' } },
      { name: 'team-b', labels: { tenant: 'other' } },
    ];
    expect(await reconciler.syncNamespaces()).toEqual({ recorded: 1, removed: 1 });
    expect(await queries.coveringNamespace('team-b')).toEqual([]);
    expect((await queries.getSharedQuota(ACME))?.used).toEqual({ pods: '1' });
    expect(await queries.getNamespace('other')).toBeUndefined();
    expect((await admit('team-a', 'a3')).result.allowed).toBe(true);

    const before = await eventCount();
    expect(await reconciler.syncNamespaces()).toEqual({ recorded: 0, removed: 0 });
    expect(await eventCount()).toBe(before);
    expect(reconciler.stats).toMatchObject({ namespacesRecorded: 4, namespacesRemoved: 1 });
    expect(await disagreements(poolOf(db.dataSource))).toEqual([]);
  });
});

describe('labels from the stored object, by resourceVersion, never from an older moment (FAKE API server)', () => {
  it('never lets an older listing undo a newer relabel, nor remove a namespace recorded newer than it', async () => {
    const labelsOf = async (name: string) => (await queries.getNamespace(name))?.definition.metadata?.labels?.['tenant'];
    clusterNamespaces = [{ name: 'team-c', labels: { tenant: 'acme' }, resourceVersion: '10' }];
    listVersion = '10';
    await reconciler.syncNamespaces();
    expect(await labelsOf('team-c')).toBe('acme');

    // Relabelled in the cluster at 12 and read back on its own (what the API queues after the review).
    clusterNamespaces = [{ name: 'team-c', labels: { tenant: 'other' }, resourceVersion: '12' }];
    expect(await reconciler.syncNamespace('team-c')).toBe(true);
    expect(await labelsOf('team-c')).toBe('other');
    expect((await queries.coveringNamespace('team-c')).map((q) => q.key)).toEqual([]);

    // Another replica's listing, taken at 11, arrives late: it changes nothing.
    clusterNamespaces = [{ name: 'team-c', labels: { tenant: 'acme' }, resourceVersion: '10' }];
    listVersion = '11';
    await reconciler.syncNamespaces();
    expect(await labelsOf('team-c')).toBe('other');
    clusterNamespaces = [];
    await reconciler.syncNamespaces();
    expect(await labelsOf('team-c')).toBe('other');

    // A listing newer than the record that misses the namespace removes it.
    listVersion = '13';
    await reconciler.syncNamespaces();
    expect(await queries.getNamespace('team-c')).toBeUndefined();
    listVersion = undefined;
  });
});
