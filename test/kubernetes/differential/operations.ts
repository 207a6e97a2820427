import {
  claimManifest,
  CLAIM_SIZES,
  amount,
  dataManifest,
  podManifest,
  scaled,
  serviceManifest,
  serviceShape,
  type Manifest,
  type ServiceType,
} from './objects.js';
import type { Random } from './random.js';
import { addableResources, hardValueFor, type QuotaDefinition, type ResourceList, type Scenario } from './scenario.js';

/**
 * The steps of a run, as data: each names its object, so a sequence replays (and shrinks) on
 * fresh namespaces. A step whose object is missing when it comes (its create was shrunk away, or
 * denied) is skipped. The world is what exists, as the Kubernetes side's answers say.
 */

export type Kind = 'Pod' | 'PersistentVolumeClaim' | 'Service' | 'ConfigMap' | 'Secret';

export type Op =
  | { op: 'create'; manifest: Manifest }
  | { op: 'label'; kind: Kind; name: string; value: string }
  | { op: 'resize'; name: string; container: string; resources: { requests?: ResourceList; limits?: ResourceList } }
  | { op: 'finish'; name: string; phase: 'Succeeded' | 'Failed' }
  | { op: 'deadline'; name: string; seconds: number }
  | { op: 'kubelet'; name: string; container: string; resources: ContainerResources; infeasible?: boolean }
  | { op: 'bind'; name: string }
  | { op: 'allocate'; name: string; storage: string }
  | { op: 'expand'; name: string; storage: string }
  | { op: 'retype'; name: string; type: ServiceType; allocateLoadBalancerNodePorts?: boolean }
  | { op: 'delete'; kind: Kind; name: string; graceSeconds?: number }
  | { op: 'hard'; quota: string; resource: string; value: string | null }
  /** The scenario's quotas and LimitRange defined now, in a namespace holding objects already (the first count). */
  | { op: 'define' };

type ContainerResources = { requests?: ResourceList; limits?: ResourceList };
export type ObjectState =
  | {
      kind: 'Pod';
      name: string;
      terminal: boolean;
      bound: boolean;
      containers: Record<string, ContainerResources>;
      /** Before the last resize: what a kubelet may still hold (and report) until it applies the resize. */
      previous?: Record<string, ContainerResources>;
      deadline?: number;
    }
  | { kind: 'ConfigMap' | 'Secret'; name: string }
  | { kind: 'PersistentVolumeClaim'; name: string; bound: boolean; className?: string; storage: string }
  | { kind: 'Service'; name: string; type: ServiceType };

export interface World {
  readonly objects: Map<string, ObjectState>;
  quotas: QuotaDefinition[];
  /** Defined at the `define` step, drawn at `defineAt` (Scenario.definedAfter); undefined once defined. */
  later?: Scenario;
  readonly defineAt: number;
  /** Whether steps may report a kubelet's status of a pod (a documented difference: README, test/kubernetes/README.md). */
  readonly kubelet: boolean;
}

export function newWorld(scenario: Scenario, kubelet = false): World {
  const late = scenario.definedAfter !== undefined;
  return {
    objects: new Map(),
    quotas: late ? [] : copyQuotas(scenario.quotas),
    ...(late ? { later: scenario } : {}),
    defineAt: scenario.definedAfter ?? 0,
    kubelet,
  };
}

const copyQuotas = (quotas: readonly QuotaDefinition[]): QuotaDefinition[] => quotas.map((q) => ({ ...q, hard: { ...q.hard } }));

const objectOf = (world: World, name: string, kind: Kind): ObjectState | undefined =>
  world.objects.get(name)?.kind === kind ? world.objects.get(name) : undefined;

/** Whether `op` can be played now (its object exists, or for a create, does not). */
export function applicable(op: Op, world: World): boolean {
  switch (op.op) {
    case 'create':
      return !world.objects.has(op.manifest.metadata.name);
    case 'label':
    case 'delete':
      return objectOf(world, op.name, op.kind) !== undefined;
    case 'resize':
    case 'kubelet': {
      const pod = objectOf(world, op.name, 'Pod');
      return pod?.kind === 'Pod' && op.container in pod.containers && (op.op === 'resize' || !pod.terminal);
    }
    case 'finish':
    case 'deadline': {
      const pod = objectOf(world, op.name, 'Pod');
      return pod?.kind === 'Pod' && !pod.terminal;
    }
    case 'bind': {
      const claim = objectOf(world, op.name, 'PersistentVolumeClaim');
      return claim?.kind === 'PersistentVolumeClaim' && !claim.bound;
    }
    case 'expand':
    case 'allocate':
      return objectOf(world, op.name, 'PersistentVolumeClaim') !== undefined;
    case 'retype':
      return objectOf(world, op.name, 'Service') !== undefined;
    case 'define':
      return world.later !== undefined;
    case 'hard': {
      const quota = world.quotas.find((q) => q.name === op.quota);
      return quota !== undefined && (op.value !== null || (op.resource in quota.hard && Object.keys(quota.hard).length > 1));
    }
  }
}

function containersOf(pod: {
  spec?: { containers?: { name: string; resources?: ContainerResources }[] };
}): Record<string, ContainerResources> {
  return Object.fromEntries((pod.spec?.containers ?? []).map((c) => [c.name, { ...c.resources }]));
}

/** The state of a stored object, as the API server answered it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Kubernetes object
function stateOf(stored: any): ObjectState {
  const name = String(stored.metadata.name);
  if (stored.kind === 'Pod') {
    const deadline = stored.spec.activeDeadlineSeconds as number | undefined;
    return {
      kind: 'Pod',
      name,
      terminal: false,
      bound: Boolean(stored.spec.nodeName),
      containers: containersOf(stored),
      ...(deadline === undefined ? {} : { deadline }),
    };
  }
  if (stored.kind === 'Service') return { kind: 'Service', name, type: stored.spec.type };
  if (stored.kind === 'ConfigMap' || stored.kind === 'Secret') return { kind: stored.kind, name };
  return {
    kind: 'PersistentVolumeClaim',
    name,
    bound: false,
    className: stored.spec.storageClassName,
    storage: stored.spec.resources.requests.storage,
  };
}

/** The world after `op` was allowed, given the object the Kubernetes side answered (if any). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Kubernetes object
export function evolve(world: World, op: Op, stored: any): void {
  const current = 'name' in op ? world.objects.get(op.name) : undefined;
  if (op.op === 'define') {
    world.quotas = copyQuotas(world.later?.quotas ?? []);
    delete world.later;
  } else if (op.op === 'create') world.objects.set(op.manifest.metadata.name, stateOf(stored));
  else if (op.op === 'delete') world.objects.delete(op.name);
  else if (op.op === 'resize' && current?.kind === 'Pod') {
    current.previous = current.containers;
    current.containers = containersOf(stored);
  } else if (op.op === 'finish' && current?.kind === 'Pod') current.terminal = true;
  else if (op.op === 'deadline' && current?.kind === 'Pod') current.deadline = op.seconds;
  else if (op.op === 'bind' && current?.kind === 'PersistentVolumeClaim') current.bound = true;
  else if (op.op === 'expand' && current?.kind === 'PersistentVolumeClaim') current.storage = op.storage;
  else if (op.op === 'retype' && current?.kind === 'Service') current.type = op.type;
  else if (op.op === 'hard') {
    const quota = world.quotas.find((q) => q.name === op.quota);
    if (!quota) return;
    const hard = { ...quota.hard };
    if (op.value === null) delete hard[op.resource];
    else hard[op.resource] = op.value;
    world.quotas = world.quotas.map((q) => (q === quota ? { ...q, hard } : q));
  }
}

const WEIGHTS = {
  pod: 28,
  claim: 8,
  service: 7,
  data: 4,
  label: 5,
  resize: 10,
  finish: 7,
  deadline: 3,
  kubelet: 5,
  bind: 4,
  expand: 5,
  allocate: 3,
  retype: 5,
  delete: 14,
  hard: 4,
} as const;
type Choice = keyof typeof WEIGHTS;

/** The next step drawn for `world`; `serial` names new objects. */
export function nextOp(random: Random, world: World, serial: number): Op {
  if (world.later && serial >= world.defineAt) return { op: 'define' };
  const all = [...world.objects.values()];
  const pods = all.filter((o) => o.kind === 'Pod');
  const claims = all.filter((o) => o.kind === 'PersistentVolumeClaim');
  const services = all.filter((o) => o.kind === 'Service');
  const possible: Record<Choice, boolean> = {
    pod: true,
    claim: true,
    service: true,
    data: true,
    label: all.length > 0,
    resize: pods.length > 0,
    finish: pods.some((p) => !p.terminal),
    deadline: pods.some((p) => !p.terminal),
    kubelet: world.kubelet && pods.some((p) => !p.terminal),
    bind: claims.some((c) => !c.bound),
    expand: claims.length > 0,
    allocate: claims.length > 0,
    retype: services.length > 0,
    delete: all.length > 0,
    hard: world.quotas.length > 0,
  };
  const choice = random.weighted(
    Object.fromEntries(Object.entries(WEIGHTS).filter(([k]) => possible[k as Choice])) as Record<Choice, number>,
  );
  switch (choice) {
    case 'pod':
      return {
        op: 'create',
        manifest: podManifest(
          random,
          `pod-${serial}`,
          claims.map((c) => c.name),
        ),
      };
    case 'claim':
      return { op: 'create', manifest: claimManifest(random, `claim-${serial}`) };
    case 'service':
      return { op: 'create', manifest: serviceManifest(random, `svc-${serial}`) };
    case 'data':
      return { op: 'create', manifest: dataManifest(random, `data-${serial}`) };
    case 'label': {
      const target = random.pick(all);
      return { op: 'label', kind: target.kind, name: target.name, value: `v${serial}` };
    }
    case 'resize':
      return resizeOp(random, random.chance(0.9) && pods.some((p) => !p.terminal) ? pods.filter((p) => !p.terminal) : pods);
    case 'finish':
      return {
        op: 'finish',
        name: random.pick(pods.filter((p) => !p.terminal)).name,
        phase: random.pick(['Succeeded', 'Failed'] as const),
      };
    case 'deadline':
      return deadlineOp(
        random,
        pods.filter((p) => !p.terminal),
      );
    case 'kubelet':
      return kubeletOp(
        random,
        pods.filter((p) => !p.terminal),
      );
    case 'bind':
      return { op: 'bind', name: random.pick(claims.filter((c) => !c.bound)).name };
    case 'expand':
      return expandOp(random, claims);
    case 'allocate':
      return { op: 'allocate', name: random.pick(claims).name, storage: random.pick(CLAIM_SIZES) };
    case 'retype':
      return { op: 'retype', name: random.pick(services).name, ...serviceShape(random) };
    case 'delete': {
      const target = random.pick(all);
      // A pod on a node is deleted gracefully: it stays, charged, until its grace period has run out.
      const graceful = target.kind === 'Pod' && target.bound && !target.terminal;
      return { op: 'delete', kind: target.kind, name: target.name, ...(graceful ? { graceSeconds: 1 } : {}) };
    }
    case 'hard':
      return hardOp(random, world);
  }
}

/** One container's requests and limits scaled by one factor (so its QoS class stays). */
function scaledResources(random: Random, current: ContainerResources, factors: readonly number[]): ContainerResources {
  const factor = random.pick(factors);
  const resources: ContainerResources = {};
  for (const side of ['requests', 'limits'] as const) {
    for (const resource of ['cpu', 'memory']) {
      const value = current[side]?.[resource];
      if (value === undefined || (resource === 'memory' && random.chance(0.5))) continue;
      (resources[side] ??= {})[resource] = scaled(resource, value, factor);
    }
  }
  return resources;
}

function resizeOp(random: Random, pods: readonly ObjectState[]): Op {
  const pod = random.pick(pods) as Extract<ObjectState, { kind: 'Pod' }>;
  const container = random.pick(Object.keys(pod.containers));
  const resources = scaledResources(random, pod.containers[container] ?? {}, [0.5, 2, 3]);
  if (!resources.requests && !resources.limits) resources.requests = { cpu: '100m' };
  return { op: 'resize', name: pod.name, container, resources };
}

/**
 * What a kubelet reports of one container: the resources its spec asks for (applied), or after a
 * resize those it still holds from before (not applied yet, or found Infeasible on the node).
 */
function kubeletOp(random: Random, pods: readonly ObjectState[]): Op {
  const pod = random.pick(pods) as Extract<ObjectState, { kind: 'Pod' }>;
  const container = random.pick(Object.keys(pod.containers));
  const before = pod.previous?.[container];
  if (before && random.chance(0.6))
    return { op: 'kubelet', name: pod.name, container, resources: before, ...(random.chance(0.5) ? { infeasible: true } : {}) };
  return { op: 'kubelet', name: pod.name, container, resources: pod.containers[container] ?? {} };
}

/** An active deadline set (a NotTerminating pod becomes Terminating) or shortened; now and then lengthened, which is refused. */
function deadlineOp(random: Random, pods: readonly ObjectState[]): Op {
  const pod = random.pick(pods) as Extract<ObjectState, { kind: 'Pod' }>;
  if (pod.deadline === undefined) return { op: 'deadline', name: pod.name, seconds: random.pick([60, 300]) };
  return { op: 'deadline', name: pod.name, seconds: random.chance(0.8) ? Math.max(1, Math.floor(pod.deadline / 2)) : pod.deadline + 60 };
}

function expandOp(random: Random, claims: readonly ObjectState[]): Op {
  const claim = random.pick(claims) as Extract<ObjectState, { kind: 'PersistentVolumeClaim' }>;
  const larger = CLAIM_SIZES.filter((size) => amount(size) > amount(claim.storage));
  return { op: 'expand', name: claim.name, storage: larger.length ? random.pick(larger) : '4Gi' };
}

function hardOp(random: Random, world: World): Op {
  const quota = random.pick(world.quotas);
  const present = Object.keys(quota.hard);
  const absent = addableResources(quota).filter((r) => !(r in quota.hard));
  const how = random.weighted({ change: 6, add: absent.length ? 2 : 0, remove: present.length > 1 ? 1 : 0 });
  if (how === 'remove') return { op: 'hard', quota: quota.name, resource: random.pick(present), value: null };
  const resource = how === 'add' ? random.pick(absent) : random.pick(present);
  return { op: 'hard', quota: quota.name, resource, value: hardValueFor(random, resource) };
}

const RESOURCE = { Pod: 'pod', PersistentVolumeClaim: 'pvc', Service: 'service', ConfigMap: 'configmap', Secret: 'secret' } as const;

/** The step as the kubectl command that does the same (for the Kubernetes side's namespace). */
export function describeOp(op: Op): string {
  switch (op.op) {
    case 'create':
      return `kubectl create -f - <<< '${JSON.stringify(op.manifest)}'`;
    case 'label':
      return `kubectl label ${RESOURCE[op.kind]} ${op.name} tier=${op.value} --overwrite`;
    case 'resize':
      return `kubectl patch pod ${op.name} --subresource=resize -p '${JSON.stringify({ spec: { containers: [{ name: op.container, resources: op.resources }] } })}'`;
    case 'finish':
      return `kubectl patch pod ${op.name} --subresource=status --type=merge -p '{"status":{"phase":"${op.phase}"}}'`;
    case 'deadline':
      return `kubectl patch pod ${op.name} --type=merge -p '{"spec":{"activeDeadlineSeconds":${op.seconds}}}'`;
    case 'kubelet':
      return `kubectl patch pod ${op.name} --subresource=status --type=merge -p '${JSON.stringify(kubeletStatus(op))}'`;
    case 'bind':
      return `kubectl patch pvc ${op.name} --subresource=status --type=merge -p '{"status":{"phase":"Bound","capacity":{"storage":"<its request>"}}}'`;
    case 'allocate':
      return `kubectl patch pvc ${op.name} --subresource=status --type=merge -p '{"status":{"allocatedResources":{"storage":"${op.storage}"}}}'`;
    case 'expand':
      return `kubectl patch pvc ${op.name} -p '{"spec":{"resources":{"requests":{"storage":"${op.storage}"}}}}'`;
    case 'retype':
      return `kubectl patch service ${op.name} --type=merge -p '${JSON.stringify({ spec: { type: op.type, allocateLoadBalancerNodePorts: op.allocateLoadBalancerNodePorts ?? null } })}'`;
    case 'delete':
      return `kubectl delete ${RESOURCE[op.kind]} ${op.name}${op.graceSeconds === undefined ? '' : ` --grace-period=${op.graceSeconds}`}`;
    case 'hard':
      return `(both quotas) ${op.quota}.spec.hard[${op.resource}] = ${op.value ?? '(removed)'}`;
    case 'define':
      return "(both namespaces) the scenario's quotas and LimitRange defined now";
  }
}

/** A kubelet's status of a running pod with one container's allocation and applied resources. */
export function kubeletStatus(op: Extract<Op, { op: 'kubelet' }>): { status: Record<string, unknown> } {
  const container = {
    name: op.container,
    image: 'registry.invalid/differential:1',
    imageID: '',
    ready: true,
    restartCount: 0,
    state: { running: {} },
  };
  return {
    status: {
      phase: 'Running',
      containerStatuses: [
        { ...container, ...(op.resources.requests ? { allocatedResources: op.resources.requests } : {}), resources: op.resources },
      ],
      ...(op.infeasible ? { conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }] } : {}),
    },
  };
}
