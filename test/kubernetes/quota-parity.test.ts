import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineQuota, eventually, untilCounted, untilSettled, usedOf } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// Kubernetes' own quota as the oracle: the same hard limits as a ResourceQuota in kube-apiserver
// (counted by kube-controller-manager's resourcequota controller) and as ours in the ledger;
// objects of every shape quota measures are created, made terminal and deleted with kubectl, and
// once both have settled, our used equals Kubernetes' status.used resource for resource.

const NAMESPACE = 'parity';
const HARD: Record<string, string> = {
  pods: '100',
  'count/pods': '100',
  'requests.cpu': '100',
  'requests.memory': '100Gi',
  'limits.cpu': '100',
  'limits.memory': '100Gi',
  'requests.ephemeral-storage': '100Gi',
  'requests.nvidia.com/gpu': '100',
  services: '100',
  'services.nodeports': '100',
  'services.loadbalancers': '100',
  persistentvolumeclaims: '100',
  'requests.storage': '100Gi',
  'count/configmaps': '100',
  'count/secrets': '100',
  'count/deployments.apps': '100',
  'count/jobs.batch': '100',
  'count/replicationcontrollers': '100',
};

const resources = (requests: Record<string, string>, limits: Record<string, string> = requests) => ({ resources: { requests, limits } });
const container = (name: string, requests: Record<string, string>, limits?: Record<string, string>) => ({
  name,
  image: 'registry.invalid/x:1',
  ...resources(requests, limits),
});
const small = { cpu: '100m', memory: '64Mi' };

/** Every shape quota measures differently. */
const OBJECTS: unknown[] = [
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'plain' },
    spec: {
      containers: [
        container(
          'a',
          { ...small, 'ephemeral-storage': '1Gi', 'nvidia.com/gpu': '1' },
          { cpu: '200m', memory: '128Mi', 'nvidia.com/gpu': '1' },
        ),
      ],
    },
  },
  // Pod-level resources (spec.resources), beside a container that sets its own.
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'pod-level' },
    spec: {
      resources: resources({ cpu: '1', memory: '1Gi' }, { cpu: '2', memory: '2Gi' }).resources,
      containers: [{ name: 'a', image: 'x' }, container('b', small)],
    },
  },
  // RuntimeClass overhead, added by kube-apiserver's admission.
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'overhead' },
    spec: { runtimeClassName: 'kata', containers: [container('a', small)] },
  },
  // Init containers, one a sidecar (restartPolicy Always) that runs beside the others.
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'sidecar' },
    spec: {
      initContainers: [
        container('init', { cpu: '2', memory: '1Gi' }),
        { ...container('side', { cpu: '300m', memory: '100Mi' }), restartPolicy: 'Always' },
        container('init2', { cpu: '1', memory: '64Mi' }),
      ],
      containers: [container('a', { cpu: '500m', memory: '200Mi' })],
    },
  },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'done' }, spec: { containers: [container('a', small)] } },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'lb' },
    spec: {
      type: 'LoadBalancer',
      ports: [
        { name: 'a', port: 80 },
        { name: 'b', port: 81 },
      ],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'lb-no-node-ports' },
    spec: { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80 }] },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'np' },
    spec: {
      type: 'NodePort',
      ports: [
        { name: 'a', port: 80 },
        { name: 'b', port: 81 },
      ],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '3Gi' } } },
  },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'd' } },
      template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'a', image: 'x' }] } },
    },
  },
  {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'x' }] } } },
  },
  {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name: 'rc' },
    spec: {
      replicas: 0,
      selector: { app: 'rc' },
      template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'a', image: 'x' }] } },
    },
  },
];

let stack: LedgerStack;
const summary = { objects: 0, resources: Object.keys(HARD).length, comparisons: 0 };

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace', 'resourcequota'] });
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
  console.log(
    `quota parity e2e: ${summary.objects} objects, ${summary.resources} resources, ${summary.comparisons} comparisons of our used with kube-controller-manager's`,
  );
});

/** Waits until Kubernetes' status.used and ours agree on every resource (both settle on their own schedule); returns the last of each. */
async function untilEqual(): Promise<{ kube: Record<string, string>; ours: Record<string, string> }> {
  let last: { kube: Record<string, string>; ours: Record<string, string> } = { kube: {}, ours: {} };
  try {
    return await eventually("our used to equal the resourcequota controller's", async () => {
      await untilSettled(stack, NAMESPACE);
      const kube =
        JSON.parse(await stack.plane.kubectl(['get', 'resourcequota', 'kube', '-n', NAMESPACE, '-o', 'json'])).status?.used ?? {};
      const ours = (await usedOf(stack, NAMESPACE))['compute'] ?? {};
      last = { kube, ours };
      return Object.keys(HARD).every((resource) => kube[resource] === ours[resource]) ? last : undefined;
    });
  } catch (error) {
    // Show where they differ.
    expect(last.ours).toEqual(last.kube);
    throw error;
  }
}

describe("our used against Kubernetes' own quota controller", () => {
  it('equals it for every shape quota measures, after creates, a terminal pod and deletes', async () => {
    await stack.plane.createNamespace(NAMESPACE);
    await defineQuota(stack, NAMESPACE, 'compute', HARD);
    await untilCounted(stack, NAMESPACE);
    await stack.plane.apply(
      JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'kube', namespace: NAMESPACE }, spec: { hard: HARD } }),
    );
    await stack.plane.apply(
      JSON.stringify({
        apiVersion: 'node.k8s.io/v1',
        kind: 'RuntimeClass',
        metadata: { name: 'kata' },
        handler: 'kata',
        overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      }),
    );
    // kube-apiserver's quota admission waits for the controller's first count of its quota.
    await eventually('the resourcequota controller to count', async () =>
      JSON.parse(await stack.plane.kubectl(['get', 'resourcequota', 'kube', '-n', NAMESPACE, '-o', 'json'])).status?.used
        ? true
        : undefined,
    );

    for (const object of OBJECTS) await stack.plane.kubectl(['create', '-n', NAMESPACE, '-f', '-'], JSON.stringify(object));
    summary.objects = OBJECTS.length;
    const created = await untilEqual();
    summary.comparisons++;
    expect(created.ours).toMatchObject({ pods: '5', services: '3', 'services.loadbalancers': '2', 'services.nodeports': '4' });

    await stack.plane.kubectl([
      'patch',
      'pod',
      'done',
      '-n',
      NAMESPACE,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { phase: 'Succeeded' } }),
    ]);
    const terminal = await untilEqual();
    summary.comparisons++;
    expect(terminal.ours).toMatchObject({ pods: '4', 'count/pods': '5' });

    await stack.plane.kubectl([
      'delete',
      '-n',
      NAMESPACE,
      'pod/sidecar',
      'pod/overhead',
      'service/lb',
      'configmap/cm',
      'deployment/d',
      '--wait=false',
    ]);
    const deleted = await untilEqual();
    summary.comparisons++;
    expect(deleted.ours).toMatchObject({ pods: '2', 'count/pods': '3', services: '2', 'count/configmaps': '0' });
  });
});
