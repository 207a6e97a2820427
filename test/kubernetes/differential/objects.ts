import type { Random } from './random.js';
import { EXPANDABLE_CLASS, FIXED_CLASS, HIGH_PRIORITY, LOW_PRIORITY, OVERHEAD_RUNTIME, type ResourceList } from './scenario.js';

/**
 * The objects a run creates, drawn at random: pods (containers with or without requests and
 * limits, init containers and sidecars, pod-level resources, a deadline, a priority class, a
 * runtime class with overhead, a claim), PersistentVolumeClaims and Services. Manifests are
 * plain JSON without a namespace: each side posts the same one to its own namespace.
 */

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
};

const CPU = ['50m', '100m', '250m', '500m', '1', '1500m'];
const MEMORY = ['32Mi', '64Mi', '128Mi', '256Mi', '512Mi'];
export const CLAIM_SIZES = ['256Mi', '512Mi', '1Gi', '2Gi', '3Gi'];
const IMAGE = 'registry.invalid/differential:1';
export const GPU = 'example.com/gpu';

/** Requests and limits of one container: none, requests only, limits only, or both (limits >= requests). */
function containerResources(random: Random): { requests?: ResourceList; limits?: ResourceList } {
  const shape = random.weighted({ none: 2, requests: 3, limits: 2, both: 4 });
  if (shape === 'none') return {};
  const requests: ResourceList = {};
  const limits: ResourceList = {};
  for (const [resource, values] of [
    ['cpu', CPU],
    ['memory', MEMORY],
  ] as const) {
    if (!random.chance(0.75)) continue;
    const low = random.int(0, values.length - 2);
    const high = random.int(low, values.length - 1);
    if (shape !== 'limits') requests[resource] = values[low]!;
    if (shape !== 'requests') limits[resource] = values[high]!;
  }
  if (random.chance(0.25)) {
    const size = random.pick(['256Mi', '1Gi']);
    if (shape !== 'limits') requests['ephemeral-storage'] = size;
    if (shape !== 'requests') limits['ephemeral-storage'] = size === '256Mi' ? '512Mi' : '2Gi';
  }
  // An extended resource: whole units, never overcommitted (requests = limits).
  if (random.chance(0.08)) {
    limits[GPU] = '1';
    if (shape !== 'limits') requests[GPU] = '1';
  }
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}

function container(random: Random, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const resources = containerResources(random);
  return { name, image: IMAGE, ...(Object.keys(resources).length ? { resources } : {}), ...extra };
}

export function podManifest(random: Random, name: string, claims: readonly string[]): Manifest {
  const containers = [container(random, 'app'), ...(random.chance(0.3) ? [container(random, 'helper')] : [])];
  const initContainers = [
    ...(random.chance(0.2) ? [container(random, 'init')] : []),
    ...(random.chance(0.15) ? [container(random, 'sidecar', { restartPolicy: 'Always' })] : []),
  ];
  const spec: Record<string, unknown> = { containers, restartPolicy: random.pick(['Always', 'Never', 'OnFailure']) };
  if (initContainers.length) spec.initContainers = initContainers;
  if (random.chance(0.1))
    spec.resources = { requests: { cpu: random.pick(CPU.slice(1)), memory: random.pick(MEMORY.slice(1)) }, limits: { cpu: '2' } };
  if (random.chance(0.25)) spec.activeDeadlineSeconds = 600;
  if (random.chance(0.25)) spec.priorityClassName = random.pick([HIGH_PRIORITY, LOW_PRIORITY]);
  if (random.chance(0.1)) spec.runtimeClassName = OVERHEAD_RUNTIME;
  // Scheduled to a node that never runs it (no kubelet): its deletion is graceful.
  if (random.chance(0.1)) spec.nodeName = 'node-without-kubelet';
  // Affinity to pods of other namespaces (the CrossNamespacePodAffinity scope).
  if (random.chance(0.08)) {
    spec.affinity = {
      podAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { app: 'other' } }, topologyKey: 'kubernetes.io/hostname', namespaces: ['elsewhere'] },
        ],
      },
    };
  }
  if (claims.length && random.chance(0.15)) {
    spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: random.pick(claims) } }];
    (containers[0] as { volumeMounts?: unknown }).volumeMounts = [{ name: 'data', mountPath: '/data' }];
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'differential' } }, spec };
}

export function claimManifest(random: Random, name: string): Manifest {
  const className = random.weighted({ none: 2, [EXPANDABLE_CLASS]: 3, [FIXED_CLASS]: 1 });
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: random.pick(CLAIM_SIZES.slice(0, 4)) } },
      ...(className === 'none' ? {} : { storageClassName: className }),
    },
  };
}

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer';

/** A ConfigMap or a Secret: counted objects, nothing more. */
export function dataManifest(random: Random, name: string): Manifest {
  return random.chance(0.5)
    ? ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { key: 'value' } } as unknown as Manifest)
    : ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', stringData: { key: 'value' } } as unknown as Manifest);
}

/** A service's type and, for a LoadBalancer, whether node ports are allocated. */
export function serviceShape(random: Random): { type: ServiceType; allocateLoadBalancerNodePorts?: boolean } {
  const type = random.weighted({ ClusterIP: 3, NodePort: 3, LoadBalancer: 2 }) as ServiceType;
  return type === 'LoadBalancer' && random.chance(0.3) ? { type, allocateLoadBalancerNodePorts: false } : { type };
}

export function serviceManifest(random: Random, name: string): Manifest {
  const ports = Array.from({ length: random.int(1, 2) }, (_, i) => ({ name: `p${i}`, port: 80 + i }));
  if (random.chance(0.1))
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { type: 'ExternalName', externalName: 'elsewhere.example.com', ports },
    };
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { ...serviceShape(random), ports, selector: { app: 'differential' } },
  };
}

/** The API path of a kind's collection in `namespace`. */
export function collectionPath(kind: string, namespace: string): string {
  const plural = {
    Pod: 'pods',
    PersistentVolumeClaim: 'persistentvolumeclaims',
    Service: 'services',
    ConfigMap: 'configmaps',
    Secret: 'secrets',
  }[kind];
  if (!plural) throw new Error(`no path for kind ${kind}`);
  return `/api/v1/namespaces/${namespace}/${plural}`;
}

/** Millicores or bytes of a simple quantity (`250m`, `1.5`, `64Mi`, `1G`), for scaling values; not an oracle. */
export function amount(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(m|k|M|G|Ki|Mi|Gi)?$/.exec(quantity);
  if (!match) throw new Error(`unexpected quantity ${quantity}`);
  const factor = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * factor;
}

/** `value` times `factor`, in millicores (cpu) or Mi (memory, storage), never below 1m / 1Mi. */
export function scaled(resource: string, value: string, factor: number): string {
  if (resource === 'cpu') return `${Math.max(1, Math.round(amount(value) * 1000 * factor))}m`;
  return `${Math.max(1, Math.round((amount(value) / 1024 ** 2) * factor))}Mi`;
}
