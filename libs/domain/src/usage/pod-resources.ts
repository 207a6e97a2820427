import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { HUGEPAGES_PREFIX } from './names.js';
import type { ContainerResources, PodContainer, PodContainerStatus, PodModel } from './pod-model.js';

/**
 * A pod's total requests and limits, as k8s.io/component-helpers/resource computes them
 * (PodRequests, PodLimits): regular containers and restartable sidecars summed, each plain
 * init container needing its own requests plus the sidecars started before it, the pod
 * needing the largest of those moments; pod-level resources replacing the container sum
 * for the resources they set; overhead added last.
 */
export interface PodResourcesOptions {
  /** Read what the kubelet applied or allocated (InPlacePodVerticalScaling). */
  readonly useStatusResources?: boolean;
  readonly excludeOverhead?: boolean;
  readonly skipPodLevelResources?: boolean;
  /** Never below the spec: a resize found Infeasible still counts (UsageOptions.specFloor). */
  readonly specFloor?: boolean;
}

/** The options the quota evaluator uses: InPlacePodVerticalScaling and PodLevelResources on. */
export const QUOTA_OPTIONS: PodResourcesOptions = { useStatusResources: true, skipPodLevelResources: false };

type MutableList = Map<string, Quantity>;

const SUPPORTED_POD_LEVEL = new Set(['cpu', 'memory']);

export function isSupportedPodLevelResource(name: string): boolean {
  return SUPPORTED_POD_LEVEL.has(name) || name.startsWith(HUGEPAGES_PREFIX);
}

/** Pod-level requests or limits set for at least one supported resource. */
export function isPodLevelResourcesSet(pod: PodModel): boolean {
  return isPodLevelRequestsSet(pod) || isPodLevelLimitsSet(pod);
}

export function isPodLevelRequestsSet(pod: PodModel): boolean {
  return pod.podResources !== undefined && Object.keys(pod.podResources.requests).some(isSupportedPodLevelResource);
}

export function isPodLevelLimitsSet(pod: PodModel): boolean {
  return pod.podResources !== undefined && Object.keys(pod.podResources.limits).some(isSupportedPodLevelResource);
}

export function podRequests(pod: PodModel, options: PodResourcesOptions = {}): ResourceList {
  const requests = aggregate(pod, options, 'requests');
  if (!options.skipPodLevelResources && isPodLevelRequestsSet(pod) && pod.podResources) {
    for (const [name, quantity] of Object.entries(pod.podResources.requests)) {
      if (isSupportedPodLevelResource(name)) requests.set(name, quantity);
    }
  }
  if (!options.excludeOverhead) addInto(requests, pod.overhead);
  return Resources.fromEntries(requests);
}

export function podLimits(pod: PodModel, options: PodResourcesOptions = {}): ResourceList {
  const limits = aggregate(pod, options, 'limits');
  if (!options.skipPodLevelResources && isPodLevelResourcesSet(pod) && pod.podResources) {
    for (const [name, quantity] of Object.entries(pod.podResources.limits)) {
      if (isSupportedPodLevelResource(name)) limits.set(name, quantity);
    }
  }
  // Overhead only raises a limit that is set: an unlimited resource stays unlimited.
  if (!options.excludeOverhead) {
    for (const [name, quantity] of Object.entries(pod.overhead)) {
      const limit = limits.get(name);
      if (limit !== undefined && !limit.isZero()) limits.set(name, limit.add(quantity));
    }
  }
  return Resources.fromEntries(limits);
}

/** The containers' requests alone (AggregateContainerRequests). */
export function aggregateContainerRequests(pod: PodModel, options: PodResourcesOptions = {}): ResourceList {
  return Resources.fromEntries(aggregate(pod, options, 'requests'));
}

/** The containers' limits alone (AggregateContainerLimits). */
export function aggregateContainerLimits(pod: PodModel, options: PodResourcesOptions = {}): ResourceList {
  return Resources.fromEntries(aggregate(pod, options, 'limits'));
}

type Side = keyof ContainerResources;

/**
 * What one container contributes to an aggregate, from its spec and its status (absent when
 * the status is not read or has no entry for it). Undefined contributes nothing.
 */
type Contribution = (container: PodContainer, status: PodContainerStatus | undefined, infeasible: boolean) => ResourceList | undefined;

const specRequests: Contribution = (container) => container.requests;
const specLimits: Contribution = (container) => container.limits;

/** What the kubelet has admitted the container to (its allocation), else the spec. */
const allocatedRequests: Contribution = (container, status, infeasible) => {
  if (status?.allocated !== undefined) return status.allocated;
  return infeasible ? undefined : container.requests;
};

/** What the kubelet has actually applied, else what it allocated, else the spec. */
const actuatedRequests: Contribution = (container, status, infeasible) => {
  if (status?.appliedRequests !== undefined) return status.appliedRequests;
  if (status?.allocated !== undefined) return status.allocated;
  return infeasible ? undefined : container.requests;
};

const actuatedLimits: Contribution = (container, status, infeasible) => {
  if (status?.appliedLimits !== undefined) return status.appliedLimits;
  return infeasible ? undefined : container.limits;
};

/**
 * The container totals. Reading the status, Kubernetes sums the spec, the allocation and
 * what is applied each on its own and charges the largest of the sums (not the sum of the
 * per-container largest); an infeasible resize leaves the spec out.
 */
function aggregate(pod: PodModel, options: PodResourcesOptions, side: Side): MutableList {
  if (!options.useStatusResources) return aggregateBy(pod, options, side === 'requests' ? specRequests : specLimits);
  const infeasible = !options.specFloor && isPodResizeInfeasible(pod);
  if (side === 'requests') {
    const spec = aggregateBy(pod, options, specRequests);
    const allocated = aggregateBy(pod, options, allocatedRequests);
    const actuated = aggregateBy(pod, options, actuatedRequests);
    return infeasible ? maxOf(actuated, allocated) : maxOf(spec, actuated, allocated);
  }
  const spec = aggregateBy(pod, options, specLimits);
  const actuated = aggregateBy(pod, options, actuatedLimits);
  return infeasible ? actuated : maxOf(spec, actuated);
}

/** Regular containers and sidecars summed; each plain init container with the sidecars before it; the peak wins. */
function aggregateBy(pod: PodModel, options: PodResourcesOptions, contribution: Contribution): MutableList {
  const infeasible = options.useStatusResources === true && !options.specFloor && isPodResizeInfeasible(pod);
  const own = (container: PodContainer): ResourceList =>
    contribution(container, options.useStatusResources ? findContainerStatus(pod, container.name) : undefined, infeasible) ??
    Resources.EMPTY;

  const total: MutableList = new Map();
  for (const container of pod.containers) addInto(total, own(container));

  const sidecars: MutableList = new Map();
  const initPeak: MutableList = new Map();
  for (const container of pod.initContainers) {
    let whileRunning: MutableList;
    if (container.restartable) {
      // A sidecar keeps running beside the regular containers.
      addInto(total, own(container));
      addInto(sidecars, own(container));
      whileRunning = sidecars;
    } else {
      // A plain init container runs beside the sidecars started before it.
      whileRunning = new Map();
      addInto(whileRunning, own(container));
      addInto(whileRunning, sidecars);
    }
    maxInto(initPeak, whileRunning);
  }
  maxInto(total, initPeak);
  return total;
}

/** The first status with the container's name, regular containers' first (findContainerStatus). */
function findContainerStatus(pod: PodModel, name: string): PodContainerStatus | undefined {
  return pod.containerStatuses.find((status) => status.name === name) ?? pod.initContainerStatuses.find((status) => status.name === name);
}

function maxOf(...lists: MutableList[]): MutableList {
  const result: MutableList = new Map();
  for (const list of lists) maxInto(result, list);
  return result;
}

/** The `PodResizePending` condition says the resize cannot be done on this node. */
export function isPodResizeInfeasible(pod: PodModel): boolean {
  const pending = pod.conditions.find((condition) => condition.type === 'PodResizePending');
  return pending !== undefined && pending.reason === 'Infeasible';
}

function addInto(list: MutableList, add: ResourceList | MutableList): void {
  for (const [name, quantity] of entries(add)) {
    const current = list.get(name);
    list.set(name, current === undefined ? quantity : current.add(quantity));
  }
}

function maxInto(list: MutableList, other: ResourceList | MutableList): void {
  for (const [name, quantity] of entries(other)) {
    const current = list.get(name);
    if (current === undefined || quantity.cmp(current) > 0) list.set(name, quantity);
  }
}

function entries(list: ResourceList | MutableList): [string, Quantity][] {
  return list instanceof Map ? [...list] : Object.entries(list);
}

export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'] as const;

/** The pod's QoS class: `status.qosClass` when set, else computed (qos.GetPodQOS). */
export function podQOS(pod: PodModel): string {
  return pod.qosClass !== '' ? pod.qosClass : computePodQOS(pod);
}

/**
 * Kubernetes' ComputePodQOS with PodLevelResources on: pod-level resources, when the field is
 * present at all, decide alone; otherwise every container is classed on its own and the pod
 * is that class when all agree, Burstable when they do not.
 */
export function computePodQOS(pod: PodModel): PodQOSClass {
  if (pod.podResources !== undefined) return resourcesQOS(pod.podResources);
  let podClass: PodQOSClass | undefined;
  for (const container of [...pod.initContainers, ...pod.containers]) {
    const qos = resourcesQOS(container);
    if (qos === 'Burstable') return qos;
    if (podClass === undefined) podClass = qos;
    else if (podClass !== qos) return 'Burstable';
  }
  return podClass ?? 'BestEffort';
}

/**
 * One set of requirements: BestEffort when nothing is stated; otherwise cpu and memory decide,
 * a missing value reading as zero. A request unequal to its limit is Burstable; all zero is
 * BestEffort; all set and equal is Guaranteed; a mix is Burstable.
 */
function resourcesQOS(resources: ContainerResources): PodQOSClass {
  if (Object.keys(resources.requests).length === 0 && Object.keys(resources.limits).length === 0) return 'BestEffort';
  let qos: PodQOSClass | undefined;
  for (const name of QOS_RESOURCES) {
    const request = Resources.get(resources.requests, name) ?? Quantity.ZERO;
    const limit = Resources.get(resources.limits, name) ?? Quantity.ZERO;
    if (!request.equals(limit)) return 'Burstable';
    const bestEffort = request.isZero() && limit.isZero();
    if (qos === undefined) qos = bestEffort ? 'BestEffort' : 'Guaranteed';
    else if (bestEffort !== (qos === 'BestEffort')) return 'Burstable';
  }
  return qos ?? 'BestEffort';
}
