import type { Quantity } from '../quantity/quantity.js';
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

function aggregate(pod: PodModel, options: PodResourcesOptions, side: Side): MutableList {
  const total: MutableList = new Map();
  const statuses = options.useStatusResources ? statusesByName(pod) : undefined;
  const effective = (container: PodContainer): ResourceList => {
    const status = statuses?.get(container.name);
    if (status?.resources === undefined) return container[side];
    return side === 'requests' ? determineRequests(pod, container, status) : determineLimits(pod, container, status);
  };

  for (const container of pod.containers) addInto(total, effective(container));

  const sidecars: MutableList = new Map();
  const initPeak: MutableList = new Map();
  for (const container of pod.initContainers) {
    // Only sidecars can be resized, so only they read the status.
    const own = container.restartable ? effective(container) : container[side];
    let whileRunning: MutableList;
    if (container.restartable) {
      // A sidecar keeps running beside the regular containers.
      addInto(total, own);
      addInto(sidecars, own);
      whileRunning = sidecars;
    } else {
      // A plain init container runs beside the sidecars started before it.
      whileRunning = new Map();
      addInto(whileRunning, own);
      addInto(whileRunning, sidecars);
    }
    maxInto(initPeak, whileRunning);
  }
  maxInto(total, initPeak);
  return total;
}

function statusesByName(pod: PodModel): Map<string, PodContainerStatus> {
  const byName = new Map<string, PodContainerStatus>();
  for (const status of [...pod.containerStatuses, ...pod.initContainerStatuses]) byName.set(status.name, status);
  return byName;
}

/** The `PodResizePending` condition says the resize cannot be done on this node. */
export function isPodResizeInfeasible(pod: PodModel): boolean {
  const pending = pod.conditions.find((condition) => condition.type === 'PodResizePending');
  return pending !== undefined && pending.reason === 'Infeasible';
}

function determineRequests(pod: PodModel, container: PodContainer, status: PodContainerStatus): ResourceList {
  const applied = status.resources?.requests ?? Resources.EMPTY;
  if (isPodResizeInfeasible(pod)) return Resources.max(applied, status.allocatedResources);
  return Resources.max(Resources.max(container.requests, applied), status.allocatedResources);
}

function determineLimits(pod: PodModel, container: PodContainer, status: PodContainerStatus): ResourceList {
  const applied = status.resources?.limits ?? Resources.EMPTY;
  if (isPodResizeInfeasible(pod)) return applied;
  return Resources.max(container.limits, applied);
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

const QOS_RESOURCES = new Set(['cpu', 'memory']);

/** The pod's QoS class: `status.qosClass` when set, else computed (qos.GetPodQOS). */
export function podQOS(pod: PodModel): string {
  return pod.qosClass !== '' ? pod.qosClass : computePodQOS(pod);
}

/**
 * Kubernetes' ComputePodQOS with PodLevelResources on: only positive cpu and memory count;
 * BestEffort when none is set, Guaranteed when every container (or the pod level) limits
 * both and every request equals its limit, Burstable otherwise.
 */
export function computePodQOS(pod: PodModel): PodQOSClass {
  const requests: MutableList = new Map();
  const limits: MutableList = new Map();
  let guaranteed = true;
  const sources = pod.podResources !== undefined ? [pod.podResources] : [...pod.containers, ...pod.initContainers];
  for (const source of sources) {
    addQoSResources(requests, source.requests);
    addQoSResources(limits, source.limits);
    const limited = Object.entries(source.limits).filter(([name, q]) => QOS_RESOURCES.has(name) && q.sign() > 0);
    const limitedNames = new Set(limited.map(([name]) => name));
    // Pod-level resources without limits do not make the pod Burstable by themselves.
    const checksLimits = pod.podResources === undefined || Object.keys(source.limits).length > 0;
    if (checksLimits && !(limitedNames.has('cpu') && limitedNames.has('memory'))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, request] of requests) {
      const limit = limits.get(name);
      if (limit === undefined || !limit.equals(request)) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

function addQoSResources(list: MutableList, add: ResourceList): void {
  for (const [name, quantity] of Object.entries(add)) {
    if (!QOS_RESOURCES.has(name) || quantity.sign() <= 0) continue;
    const current = list.get(name);
    list.set(name, current === undefined ? quantity : quantity.add(current));
  }
}
