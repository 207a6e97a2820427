import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defineQuota,
  eventsOfObject,
  eventually,
  ledgerEvents,
  uidOf,
  untilCounted,
  untilSettled,
  untilUsed,
} from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// The other kinds quota charges, through kube-apiserver and our webhooks: PersistentVolumeClaims
// (bound by the PV controller, expanded, their allocated size set through the status
// subresource), Services, a custom resource of ours (a CRD, with CUSTOM_RESOURCES and
// `webhook-config --custom-resource` as the README says) and DRA ResourceClaims
// (resource.k8s.io/v1, which v1.37 serves). Each is created, updated and deleted with kubectl,
// committed and released by the reconciler.

const WIDGETS = 'widgets.example.com/v1=Widget';
const counts = { kubectl: 0, denied: 0, committed: 0, released: 0 };
let stack: LedgerStack;

beforeAll(async () => {
  // The PV binder binds claims, pvc-protection lets a deleted claim go.
  stack = await startLedgerCluster(
    { controllers: ['namespace', 'persistentvolume-binder', 'pvc-protection'] },
    { customResources: [WIDGETS] },
  );
});

afterAll(async () => {
  const count = stack ? await countWebhookCalls() : undefined;
  if (count)
    console.log(
      `count webhook over the file: ${count.calls} calls, ${count.excluded} requests its rules matched left out by its matchCondition, evaluations timed ${count.timed} (${(count.timedSeconds * 1e6).toFixed(0)} µs)`,
    );
  await stack?.stop();
  await stack?.plane.stop();
  console.log(
    `webhook kinds e2e: ${counts.kubectl} kubectl writes, ${counts.denied} denied with our message, ${counts.committed} objects committed, ${counts.released} released`,
  );
});

async function kubectl(args: string[], input?: string) {
  counts.kubectl++;
  return stack.plane.tryKubectl(args, input);
}

async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** Refused by one of our validating webhooks: `validate-count` for what quota only counts (custom resources). */
async function denied(args: string[], input?: string, webhook = 'validate.quota-ledger.io'): Promise<string> {
  const result = await kubectl(args, input);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain(`admission webhook "${webhook}" denied the request: `);
  counts.denied++;
  return result.stderr;
}

async function managedNamespace(namespace: string, hard: Record<string, string>): Promise<void> {
  await stack.plane.createNamespace(namespace);
  await defineQuota(stack, namespace, 'compute', hard);
  await untilCounted(stack, namespace);
}

/** Waits until the reconciler settled the object's reservations with an event of `type` (and reason). */
async function untilObject(namespace: string, uid: string, type: 'Committed' | 'Released', reason?: string): Promise<void> {
  await eventually(`${type} ${reason ?? ''} for ${uid}`, async () =>
    eventsOfObject(await ledgerEvents(stack, namespace), uid).some(
      (e) => e.type === type && (reason === undefined || e.data.reason === reason),
    )
      ? true
      : undefined,
  );
  if (type === 'Committed') counts.committed++;
  else counts.released++;
}

const json = (value: unknown): string => JSON.stringify(value);

/** A namespaced CRD served at v1, any fields kept. */
function crd(group: string, kind: string, plural: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** What kube-apiserver's metrics say of the count webhook so far: its calls, the requests its matchCondition left out, and the evaluations timed. */
async function countWebhookCalls(): Promise<{ calls: number; excluded: number; timed: number; timedSeconds: number }> {
  const lines = (await stack.plane.kubectl(['get', '--raw', '/metrics']))
    .split('\n')
    .filter((l) => l.includes('name="validate-count.quota-ledger.io"'));
  const sum = (prefix: string) =>
    lines.filter((l) => l.startsWith(`${prefix}{`)).reduce((total, l) => total + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return {
    calls: sum('apiserver_admission_webhook_admission_duration_seconds_count'),
    excluded: sum('apiserver_admission_match_condition_exclusions_total'),
    timed: sum('apiserver_admission_match_condition_evaluation_seconds_count'),
    timedSeconds: sum('apiserver_admission_match_condition_evaluation_seconds_sum'),
  };
}

describe('the kinds quota charges, through kube-apiserver and our webhooks', () => {
  it('PersistentVolumeClaims: created, expanded, allocated (status), refused past the class quota, deleted', async () => {
    await managedNamespace('wk-storage', {
      persistentvolumeclaims: '2',
      'requests.storage': '4Gi',
      'expandable.storageclass.storage.k8s.io/requests.storage': '3Gi',
    });
    await ok(
      ['apply', '-f', '-'],
      json({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'expandable' },
        provisioner: 'kubernetes.io/no-provisioner',
        allowVolumeExpansion: true,
      }),
    );
    await ok(
      ['apply', '-f', '-'],
      json({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv-data' },
        spec: {
          storageClassName: 'expandable',
          capacity: { storage: '5Gi' },
          accessModes: ['ReadWriteOnce'],
          hostPath: { path: '/tmp/pv-data' },
          claimRef: { namespace: 'wk-storage', name: 'data' },
        },
      }),
    );
    await ok(
      ['create', '-f', '-'],
      json({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data', namespace: 'wk-storage' },
        spec: { storageClassName: 'expandable', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      }),
    );
    await untilUsed(stack, 'wk-storage', 'compute', {
      persistentvolumeclaims: '1',
      'requests.storage': '1Gi',
      'expandable.storageclass.storage.k8s.io/requests.storage': '1Gi',
    });
    // Only a bound claim may grow.
    await eventually('the claim bound', async () =>
      (await ok(['get', 'pvc', 'data', '-n', 'wk-storage', '-o', 'jsonpath={.status.phase}'])) === 'Bound' ? true : undefined,
    );
    const uid = (await uidOf(stack, 'pvc', 'data', 'wk-storage')) ?? '';

    await ok(['patch', 'pvc', 'data', '-n', 'wk-storage', '-p', json({ spec: { resources: { requests: { storage: '2Gi' } } } })]);
    await untilUsed(stack, 'wk-storage', 'compute', {
      'requests.storage': '2Gi',
      'expandable.storageclass.storage.k8s.io/requests.storage': '2Gi',
    });
    // Confirmed stored, the next change is charged over it (pending, over the state before both).
    await untilSettled(stack, 'wk-storage');
    const tooBig = await denied([
      'patch',
      'pvc',
      'data',
      '-n',
      'wk-storage',
      '-p',
      json({ spec: { resources: { requests: { storage: '4Gi' } } } }),
    ]);
    expect(tooBig).toContain(
      'persistentvolumeclaims "data" is forbidden: exceeded quota: compute, requested: expandable.storageclass.storage.k8s.io/requests.storage=2Gi, used: expandable.storageclass.storage.k8s.io/requests.storage=2Gi, limited: expandable.storageclass.storage.k8s.io/requests.storage=3Gi',
    );

    // What the volume resizer records; quota counts the larger of the request and the allocation.
    await ok([
      'patch',
      'pvc',
      'data',
      '-n',
      'wk-storage',
      '--subresource=status',
      '-p',
      json({ status: { allocatedResources: { storage: '3Gi' } } }),
    ]);
    await untilUsed(stack, 'wk-storage', 'compute', {
      'requests.storage': '3Gi',
      'expandable.storageclass.storage.k8s.io/requests.storage': '3Gi',
    });
    await untilObject('wk-storage', uid, 'Committed');

    await ok(['delete', 'pvc', 'data', '-n', 'wk-storage', '--timeout=60s']);
    await untilObject('wk-storage', uid, 'Released', 'deleted');
    await untilUsed(stack, 'wk-storage', 'compute', { persistentvolumeclaims: '0', 'requests.storage': '0' });
  });

  it('Services: node ports and the service count, on create and on a type change, released on delete', async () => {
    await managedNamespace('wk-services', { services: '2', 'services.nodeports': '1' });
    await ok(['create', 'service', 'clusterip', 'api', '-n', 'wk-services', '--tcp=80:8080']);
    await ok(['create', 'service', 'nodeport', 'web', '-n', 'wk-services', '--tcp=80:8080']);
    await untilUsed(stack, 'wk-services', 'compute', { services: '2', 'services.nodeports': '1' });
    expect(await denied(['create', 'service', 'clusterip', 'third', '-n', 'wk-services', '--tcp=80:8080'])).toContain(
      'services "third" is forbidden: exceeded quota: compute, requested: services=1, used: services=2, limited: services=2',
    );
    expect(await denied(['patch', 'service', 'api', '-n', 'wk-services', '-p', json({ spec: { type: 'NodePort' } })])).toContain(
      'services "api" is forbidden: exceeded quota: compute, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1',
    );
    const web = (await uidOf(stack, 'service', 'web', 'wk-services')) ?? '';
    await untilObject('wk-services', web, 'Committed');
    await ok(['delete', 'service', 'web', '-n', 'wk-services']);
    await untilObject('wk-services', web, 'Released', 'deleted');
    await untilUsed(stack, 'wk-services', 'compute', { services: '1', 'services.nodeports': '0' });
    await ok(['patch', 'service', 'api', '-n', 'wk-services', '-p', json({ spec: { type: 'NodePort' } })]);
    await untilUsed(stack, 'wk-services', 'compute', { services: '1', 'services.nodeports': '1' });
  });

  it('ServiceAccounts: count/serviceaccounts refuses the one past it at admission, as Kubernetes does, and is released on delete', async () => {
    // The plane runs no serviceaccount controller: the namespace holds none until these.
    await managedNamespace('wk-accounts', { 'count/serviceaccounts': '2' });
    await ok(['create', 'serviceaccount', 'builder', '-n', 'wk-accounts']);
    await ok(['create', 'serviceaccount', 'deployer', '-n', 'wk-accounts']);
    expect(await denied(['create', 'serviceaccount', 'third', '-n', 'wk-accounts'], undefined, 'validate-count.quota-ledger.io')).toContain(
      'serviceaccounts "third" is forbidden: exceeded quota: compute, requested: count/serviceaccounts=1, used: count/serviceaccounts=2, limited: count/serviceaccounts=2',
    );
    const builder = (await uidOf(stack, 'serviceaccount', 'builder', 'wk-accounts')) ?? '';
    await untilObject('wk-accounts', builder, 'Committed');
    await ok(['delete', 'serviceaccount', 'builder', '-n', 'wk-accounts']);
    await untilObject('wk-accounts', builder, 'Released', 'deleted');
    await ok(['create', 'serviceaccount', 'third', '-n', 'wk-accounts']);
    await untilUsed(stack, 'wk-accounts', 'compute', { 'count/serviceaccounts': '2' });
  });

  it('a custom resource of ours (widgets.example.com): counted, listed by the reconciler with the RBAC webhook-config printed', async () => {
    await ok(['apply', '-f', '-'], json(crd('example.com', 'Widget', 'widgets')));
    await ok(['wait', '--for=condition=established', 'crd/widgets.example.com', '--timeout=60s']);
    await managedNamespace('wk-widgets', { 'count/widgets.example.com': '1' });
    const widget = (name: string, size: number) =>
      json({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'wk-widgets' }, spec: { size } });
    // The CRD's resource may take a moment to be served everywhere in the apiserver.
    await eventually('the first widget created', async () =>
      (await kubectl(['create', '-f', '-'], widget('w1', 1))).code === 0 ? true : undefined,
    );
    expect(await denied(['create', '-f', '-'], widget('w2', 1), 'validate-count.quota-ledger.io')).toContain(
      'widgets.example.com "w2" is forbidden: exceeded quota: compute, requested: count/widgets.example.com=1, used: count/widgets.example.com=1, limited: count/widgets.example.com=1',
    );
    const uid = (await uidOf(stack, 'widget', 'w1', 'wk-widgets')) ?? '';
    await untilObject('wk-widgets', uid, 'Committed');
    const reserved = (await ledgerEvents(stack, 'wk-widgets')).filter((e) => e.type === 'Reserved').length;
    await ok(['patch', 'widget', 'w1', '-n', 'wk-widgets', '--type=merge', '-p', json({ spec: { size: 2 } })]);
    expect((await ledgerEvents(stack, 'wk-widgets')).filter((e) => e.type === 'Reserved')).toHaveLength(reserved);
    await ok(['delete', 'widget', 'w1', '-n', 'wk-widgets']);
    await untilObject('wk-widgets', uid, 'Released', 'deleted');
    await ok(['create', '-f', '-'], widget('w2', 1));
    await untilUsed(stack, 'wk-widgets', 'compute', { 'count/widgets.example.com': '1' });
  });

  it('every other kind: count/poddisruptionbudgets.policy and a CRD no flag names refuse the one past them at admission; a Role no quota counts is not reserved', async () => {
    await ok(['apply', '-f', '-'], json(crd('example.org', 'Gadget', 'gadgets')));
    await ok(['wait', '--for=condition=established', 'crd/gadgets.example.org', '--timeout=60s']);
    await managedNamespace('wk-every', { 'count/poddisruptionbudgets.policy': '1', 'count/gadgets.example.org': '1' });
    const before = await countWebhookCalls();
    const budget = (name: string) => ['create', 'poddisruptionbudget', name, '-n', 'wk-every', '--selector=app=web', '--min-available=1'];
    await ok(budget('web'));
    expect(await denied(budget('web-2'), undefined, 'validate-count.quota-ledger.io')).toContain(
      'poddisruptionbudgets.policy "web-2" is forbidden: exceeded quota: compute, requested: count/poddisruptionbudgets.policy=1, used: count/poddisruptionbudgets.policy=1, limited: count/poddisruptionbudgets.policy=1',
    );
    const gadget = (name: string) => json({ apiVersion: 'example.org/v1', kind: 'Gadget', metadata: { name, namespace: 'wk-every' } });
    await eventually('the first gadget created', async () =>
      (await kubectl(['create', '-f', '-'], gadget('g1'))).code === 0 ? true : undefined,
    );
    expect(await denied(['create', '-f', '-'], gadget('g2'), 'validate-count.quota-ledger.io')).toContain(
      'gadgets.example.org "g2" is forbidden: exceeded quota: compute, requested: count/gadgets.example.org=1, used: count/gadgets.example.org=1, limited: count/gadgets.example.org=1',
    );
    // Sent too (its CREATE), but no quota counts Roles: answered without a reservation.
    await ok(['create', 'role', 'reader', '-n', 'wk-every', '--verb=get', '--resource=pods']);
    const reserved = (await ledgerEvents(stack, 'wk-every')).filter((e) => e.type === 'Reserved').map((e) => e.data.object.resource);
    expect(reserved.sort()).toEqual(['gadgets', 'poddisruptionbudgets']);
    // A deleted budget (its DELETE is not sent) is released when the reconciler's watch sees it gone.
    const uid = (await uidOf(stack, 'poddisruptionbudget', 'web', 'wk-every')) ?? '';
    await ok(['delete', 'poddisruptionbudget', 'web', '-n', 'wk-every']);
    await untilObject('wk-every', uid, 'Released', 'deleted');
    await ok(budget('web-2'));
    const after = await countWebhookCalls();
    console.log(
      `every kind e2e: validate-count.quota-ledger.io called ${after.calls - before.calls} times for 7 writes, ${after.excluded - before.excluded} left out by its matchCondition`,
    );
    // Five creates and two refusals; the Role's too; neither the namespace's quota nor the deletion.
    expect(after.calls - before.calls).toBe(6);
  });

  it('ResourceClaims (resource.k8s.io/v1): the claim count and the devices per class', async () => {
    await managedNamespace('wk-claims', {
      'count/resourceclaims.resource.k8s.io': '2',
      'gpu.example.com.deviceclass.resource.k8s.io/devices': '2',
    });
    const claim = (name: string, count: number) =>
      json({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaim',
        metadata: { name, namespace: 'wk-claims' },
        spec: {
          devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com', allocationMode: 'ExactCount', count } }] },
        },
      });
    await ok(['create', '-f', '-'], claim('one', 1));
    await untilUsed(stack, 'wk-claims', 'compute', {
      'count/resourceclaims.resource.k8s.io': '1',
      'gpu.example.com.deviceclass.resource.k8s.io/devices': '1',
    });
    expect(await denied(['create', '-f', '-'], claim('two', 2))).toContain(
      'resourceclaims.resource.k8s.io "two" is forbidden: exceeded quota: compute, requested: gpu.example.com.deviceclass.resource.k8s.io/devices=2, used: gpu.example.com.deviceclass.resource.k8s.io/devices=1, limited: gpu.example.com.deviceclass.resource.k8s.io/devices=2',
    );
    const uid = (await uidOf(stack, 'resourceclaim', 'one', 'wk-claims')) ?? '';
    await untilObject('wk-claims', uid, 'Committed');
    await ok(['label', 'resourceclaim', 'one', '-n', 'wk-claims', 'team=ml']);
    await ok(['delete', 'resourceclaim', 'one', '-n', 'wk-claims']);
    await untilObject('wk-claims', uid, 'Released', 'deleted');
    await ok(['create', '-f', '-'], claim('two', 2));
    await untilUsed(stack, 'wk-claims', 'compute', {
      'count/resourceclaims.resource.k8s.io': '1',
      'gpu.example.com.deviceclass.resource.k8s.io/devices': '2',
    });
  });

  it("a registration older than the one quotactl prints: the reconciler reports the quotas' counts it does not send, until it is applied again", async () => {
    await managedNamespace('wk-routes', { 'count/poddisruptionbudgets.policy': '5', 'count/resourcequotas': '1', 'count/configmaps': '9' });
    // Every kind's CREATE is sent but ResourceQuota objects': only count/resourcequotas is reported (of every quota of this file).
    const onlyQuotaObjects = (series: Record<string, number>) => json(series) === json({ 'count/resourcequotas': 1 });
    await untilUnrouted('only count/resourcequotas', onlyQuotaObjects);
    const registered = JSON.parse(await ok(['get', 'validatingwebhookconfiguration', 'quota-ledger', '-o', 'json'])) as {
      webhooks: { name: string }[];
    };
    // What an older release registered: the count webhook sent a fixed list of kinds (and had no condition).
    const at = registered.webhooks.findIndex((w) => w.name === 'validate-count.quota-ledger.io');
    const oldRules = [
      { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps', 'secrets'], scope: 'Namespaced' },
    ];
    await ok([
      'patch',
      'validatingwebhookconfiguration',
      'quota-ledger',
      '--type=json',
      '-p',
      json([
        { op: 'replace', path: `/webhooks/${at}/rules`, value: oldRules },
        { op: 'remove', path: `/webhooks/${at}/matchConditions` },
      ]),
    ]);
    try {
      // wk-routes' budget count (and wk-every's, when that test ran); configmaps are still sent.
      const series = await untilUnrouted('count/poddisruptionbudgets.policy', (s) => (s['count/poddisruptionbudgets.policy'] ?? 0) >= 1);
      expect(series).toMatchObject({ 'count/resourcequotas': 1 });
      expect(series['count/configmaps']).toBeUndefined();
      const readiness = JSON.parse(await (await fetch(stack.metricsUrl('reconciler').replace(/\/metrics$/, '/readyz'))).text());
      expect(readiness.webhookRoutes).toEqual({ configuration: 'quota-ledger', unroutedCounts: series });
    } finally {
      await stack.registerWebhooks();
    }
    await untilUnrouted('only count/resourcequotas again', onlyQuotaObjects);
  });
});

/** The reconciler's quota_ledger_reconciler_unrouted_counts series (resource → quotas), once `done` says they are as awaited. */
async function untilUnrouted(what: string, done: (series: Record<string, number>) => boolean): Promise<Record<string, number>> {
  return eventually(`unrouted counts: ${what}`, async () => {
    const text = await (await fetch(stack.metricsUrl('reconciler'))).text();
    const series = Object.fromEntries(
      [...text.matchAll(/^quota_ledger_reconciler_unrouted_counts\{resource="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
    );
    return done(series) ? series : undefined;
  });
}
