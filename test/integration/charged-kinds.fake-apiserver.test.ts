import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARGED_KINDS, type KubeObject } from '@quota/domain';
import { createKubernetesInventory, KNOWN_KINDS } from '@quota/inventory';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import {
  customResourceRbac,
  EVERY_KIND_CREATE,
  validateRules,
  VALIDATE_RULES,
  type RuleWithOperations,
} from '../../apps/quotactl/src/webhook-config.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { startFakeCluster, type FakeCluster } from '../support/fake-apiserver.js';
import { Ledger } from '../support/ledger.js';
import type { DataSource } from 'typeorm';

/**
 * Every kind the webhook is sent is a kind the reconciler lists: a ResourceClaim the
 * webhook reserved is committed when the cluster shows it and released when it is gone, so
 * its charge cannot grow Used forever. The cluster is a FAKE API server (we cannot run
 * kube-apiserver here); the reconciler, its kubernetes inventory source, the ledger and
 * BullMQ's Redis are real.
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const CLAIMS = { group: 'resource.k8s.io', resource: 'resourceclaims' };
/** A custom resource, as CUSTOM_RESOURCES=widgets.example.com/v1=Widget configures it. */
const WIDGET = { kind: 'Widget', apiVersion: 'example.com/v1', groupResource: { group: 'example.com', resource: 'widgets' } };

let db: TestDatabase & { dataSource: DataSource };
let fake: FakeCluster;
let ledger: Ledger;
let reconciler: Reconciler;
/** The same cluster, reconciled by a reconciler configured with the custom resource. */
let customReconciler: Reconciler;

beforeAll(async () => {
  fake = await startFakeCluster([...KNOWN_KINDS, WIDGET]);
  db = await createMigratedDatabase('qlkinds');
  ledger = new Ledger(db.dataSource);
  const backend = { kind: 'redis' as const, url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` };
  const recorder = { now: ledger.now, reconcile: ledger.reconcile, namespaces: ledger.definitions.namespaces.bind(ledger.definitions) };
  reconciler = new Reconciler(recorder, createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig }), backend, {
    intervalMs: 60_000,
    graceMs: 0,
    concurrency: 1,
  });
  customReconciler = new Reconciler(
    recorder,
    createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig, customKinds: [WIDGET] }),
    { ...backend, prefix: `${backend.prefix}-custom` },
    {
      intervalMs: 60_000,
      graceMs: 0,
      concurrency: 1,
    },
  );
});
afterAll(async () => {
  await reconciler?.queue.obliterate({ force: true }).catch(() => undefined);
  await reconciler?.stop();
  await customReconciler?.queue.obliterate({ force: true }).catch(() => undefined);
  await customReconciler?.stop();
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
  // Every kind's CREATE goes to the count webhook by one `*` rule (a kind outside CHARGED_KINDS is
  // reserved only where a quota counts it); every kind a rule names is one the inventory lists.
  it('names in the webhook rules no kind the kubernetes inventory does not list, and sends the rest by CREATE alone', () => {
    expect(VALIDATE_RULES.filter((r) => r.resources.includes('*'))).toEqual([EVERY_KIND_CREATE]);
    const sent = namedKinds(VALIDATE_RULES);
    const listed = new Set(
      createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig }).covers.map((gr) => `${gr.resource}.${gr.group}`),
    );
    expect(sent.filter((gr) => !listed.has(gr))).toEqual([]);
    expect(sent.sort()).toEqual(
      CHARGED_KINDS.filter((k) => k.webhook)
        .map((k) => `${k.groupResource.resource}.${k.groupResource.group}`)
        .sort(),
    );
  });

  it('with custom resources, names in the webhook rules what the configured inventory lists and grants the reconciler its list', () => {
    const sent = namedKinds(validateRules([WIDGET]));
    const listed = createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig, customKinds: [WIDGET] }).covers.map(
      (gr) => `${gr.resource}.${gr.group}`,
    );
    expect(sent.sort()).toEqual(listed.filter((gr) => gr !== 'resourcequotas.').sort());
    const [role] = customResourceRbac([WIDGET], { namespace: 'quota-ledger' }) as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    }[];
    expect(role?.rules).toEqual([{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }]);
  });

  it('commits a ResourceClaim the webhook reserved once the cluster shows it, and releases it once it is deleted', async () => {
    const namespace = 'dra';
    await ledger.putQuota(
      namespace,
      { name: 'claims', spec: { hard: { 'count/resourceclaims.resource.k8s.io': '2' } } },
      { actor: 'admin' },
    );
    const object = claim(namespace, 'gpu-1');
    const admitted = await ledger.admit({
      namespace,
      source: 'webhook',
      request: { operation: 'CREATE', groupResource: CLAIMS, namespace, name: 'gpu-1', object },
      dryRun: false,
      requester: 'test',
    });
    expect(admitted.result.allowed).toBe(true);
    expect(await used(namespace)).toMatchObject({ 'count/resourceclaims.resource.k8s.io': '1' });

    fake.set(CLAIMS, namespace, [object]);
    expect((await reconciler.reconcileNamespace(namespace)).actions).toEqual([
      { kind: 'commit', reservationId: admitted.result.reservationId, uid: 'uid-dra-gpu-1' },
    ]);
    fake.set(CLAIMS, namespace, []);
    const gone = await reconciler.reconcileNamespace(namespace);
    expect(gone.actions).toEqual([
      expect.objectContaining({ kind: 'release', reservationId: admitted.result.reservationId, reason: 'deleted' }),
    ]);
    expect(await used(namespace)).toMatchObject({ 'count/resourceclaims.resource.k8s.io': '0' });
  });
});

describe('terminal pods: compute released once the listing shows them finished, count/pods kept', () => {
  const PODS = { group: '', resource: 'pods' };
  const job = (namespace: string, name: string, phase: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
    spec: {
      restartPolicy: 'Never',
      containers: [{ name: 'work', image: 'busybox', resources: { requests: { cpu: '500m' }, limits: { cpu: '500m' } } }],
    },
    status: { phase },
  });
  const admit = (namespace: string, name: string) =>
    ledger.admit({
      namespace,
      source: 'webhook',
      request: { operation: 'CREATE', groupResource: PODS, namespace, name, object: job(namespace, name, 'Pending') },
      dryRun: false,
      requester: 'test',
    });
  const usedAt = async (namespace: string, at?: number) =>
    (at === undefined ? await ledger.usage(namespace) : await ledger.usageAt(namespace, new Date(at).toISOString()))?.quotas.find(
      (q) => q.name === 'compute',
    )?.used;

  it('a committed pod the cluster lists as Succeeded gives back requests.cpu and pods, keeps count/pods, and as-of sees both sides', async () => {
    const namespace = 'batch';
    await ledger.putQuota(
      namespace,
      { name: 'compute', spec: { hard: { pods: '1', 'requests.cpu': '1', 'count/pods': '5' } } },
      { actor: 'admin' },
    );
    const first = await admit(namespace, 'job-1');
    expect(first.result.allowed).toBe(true);
    fake.set(PODS, namespace, [job(namespace, 'job-1', 'Running')]);
    expect((await reconciler.reconcileNamespace(namespace)).actions.map((a) => a.kind)).toEqual(['commit']);
    // Running, it fills `pods: 1`: a second pod is refused.
    expect((await admit(namespace, 'job-2')).result.allowed).toBe(false);

    fake.set(PODS, namespace, [job(namespace, 'job-1', 'Succeeded')]);
    const done = await reconciler.reconcileNamespace(namespace);
    expect(done.actions).toEqual([
      { kind: 'terminate', reservationId: first.result.reservationId, reason: 'Succeeded', uid: 'uid-batch-job-1' },
    ]);
    expect(await usedAt(namespace)).toEqual({ pods: '0', 'requests.cpu': '0', 'count/pods': '1' });
    // Listed again, nothing more happens; the reservation says it is terminated.
    expect((await reconciler.reconcileNamespace(namespace)).actions).toEqual([]);
    expect(await ledger.getReservation(namespace, first.result.reservationId ?? '')).toMatchObject({
      state: 'committed',
      charged: { 'count/pods': '1' },
      terminatedAt: expect.any(String),
    });

    const [terminated] = await db.dataSource.query(
      `SELECT (extract(epoch from recorded_at) * 1000)::float8 AS at FROM ledger_events WHERE namespace = $1 AND type = 'Terminated'`,
      [namespace],
    );
    const at = Math.floor(Number(terminated.at));
    expect(await usedAt(namespace, at - 1)).toEqual({ pods: '1', 'requests.cpu': '500m', 'count/pods': '1' });
    expect(await usedAt(namespace, at)).toEqual({ pods: '0', 'requests.cpu': '0', 'count/pods': '1' });

    // The completed job no longer holds the namespace's room: Kubernetes would admit the next pod.
    const second = await admit(namespace, 'job-3');
    expect(second.result.allowed).toBe(true);
    expect(await usedAt(namespace)).toEqual({ pods: '1', 'requests.cpu': '500m', 'count/pods': '2' });

    // Deleted, the terminated pod gives back its object count too.
    fake.set(PODS, namespace, [job(namespace, 'job-3', 'Running')]);
    const gone = await reconciler.reconcileNamespace(namespace);
    expect(gone.actions.map((a) => (a.kind === 'release' ? `release:${a.reason}` : a.kind)).sort()).toEqual(['commit', 'release:deleted']);
    expect(await usedAt(namespace)).toEqual({ pods: '1', 'requests.cpu': '500m', 'count/pods': '1' });
  });
});

describe('custom resources (count/<resource>.<group> end to end)', () => {
  const WIDGETS = WIDGET.groupResource;
  const widget = (namespace: string, name: string): KubeObject => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
    spec: {},
  });
  const admit = (namespace: string, name: string) =>
    ledger.admit({
      namespace,
      source: 'webhook',
      request: { operation: 'CREATE', groupResource: WIDGETS, namespace, name, object: widget(namespace, name) },
      dryRun: false,
      requester: 'test',
    });
  const widgetsUsed = async (namespace: string) => (await ledger.usage(namespace))?.quotas.find((q) => q.name === 'widgets')?.used;

  it('a configured custom resource the webhook reserved is committed once the cluster lists it and released once it is deleted', async () => {
    const namespace = 'crd';
    await ledger.putQuota(namespace, { name: 'widgets', spec: { hard: { 'count/widgets.example.com': '2' } } }, { actor: 'admin' });
    const admitted = await admit(namespace, 'w-1');
    expect(await widgetsUsed(namespace)).toEqual({ 'count/widgets.example.com': '1' });
    fake.set(WIDGETS, namespace, [widget(namespace, 'w-1')]);
    expect((await customReconciler.reconcileNamespace(namespace)).actions).toEqual([
      { kind: 'commit', reservationId: admitted.result.reservationId, uid: 'uid-crd-w-1' },
    ]);
    fake.set(WIDGETS, namespace, []);
    expect((await customReconciler.reconcileNamespace(namespace)).actions).toEqual([
      expect.objectContaining({ kind: 'release', reason: 'deleted' }),
    ]);
    expect(await widgetsUsed(namespace)).toEqual({ 'count/widgets.example.com': '0' });
    expect(customReconciler.uncovered.size).toBe(0);
  });

  it('a reservation of a kind the inventory does not list is reported while young, then released "uncovered" after the grace period', async () => {
    const namespace = 'crd-unlisted';
    await ledger.putQuota(namespace, { name: 'widgets', spec: { hard: { 'count/widgets.example.com': '2' } } }, { actor: 'admin' });
    const admitted = await admit(namespace, 'w-1');
    fake.set(WIDGETS, namespace, [widget(namespace, 'w-1')]);
    // Within the grace period: nothing is released, the reservation is reported.
    const inventory = createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig });
    const young = await ledger.reconcile(
      namespace,
      { ...(await inventory.list(namespace)), listedAt: await ledger.now() },
      { actor: 'test', graceMs: 60_000 },
    );
    expect(young).toMatchObject({ actions: [], uncovered: [{ resource: 'widgets.example.com', count: 1 }] });
    await inventory.close();
    // The reconciler without the custom resource (grace 0) can never see the widget: released, not counted forever.
    const judged = await reconciler.reconcileNamespace(namespace);
    expect(judged.actions).toEqual([
      { kind: 'release', reservationId: admitted.result.reservationId, reason: 'uncovered', uid: 'uid-crd-unlisted-w-1' },
    ]);
    expect(await widgetsUsed(namespace)).toEqual({ 'count/widgets.example.com': '0' });
  });
});

/** The namespaced kinds the rules name (`resource.group`), less subresources and the `*` rule of every kind's CREATE. */
function namedKinds(rules: readonly RuleWithOperations[]): string[] {
  return rules
    .filter((r) => r.scope === 'Namespaced' && r !== EVERY_KIND_CREATE)
    .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.filter((res) => !res.includes('/')).map((res) => `${res}.${g}`)));
}
