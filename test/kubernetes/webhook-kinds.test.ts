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
    await ok(
      ['apply', '-f', '-'],
      json({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
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
      }),
    );
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
});
