import type { TerminationReason } from '../events/events.js';
import type { GroupResource, KubeObject, Operation } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { UsageOptions } from './evaluator.js';
import {
  compareStrings,
  HUGEPAGES_PREFIX,
  intersection,
  isDRAExtendedResourceName,
  isExtendedResourceNameForQuota,
  objectCountName,
  REQUESTS_HUGEPAGES_PREFIX,
  REQUESTS_PREFIX,
  unique,
} from './names.js';
import { type PodModel, readPod } from './pod-model.js';
import { isPodLevelResourcesSet, podLimits, podQOS, podRequests, QUOTA_OPTIONS } from './pod-resources.js';
import type { ScopeFacts } from '../scopes/facts.js';
import { EvaluatorBase } from './evaluator-base.js';

/** How pods are charged (pkg/quota/v1/evaluator/core/pods.go). */

const PODS: GroupResource = { group: '', resource: 'pods' };
export const POD_OBJECT_COUNT_NAME = objectCountName(PODS);

/** The fixed quota names a pod can be charged for; hugepages and extended resources come by pattern. */
export const POD_RESOURCE_NAMES: readonly string[] = [
  POD_OBJECT_COUNT_NAME,
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
];

const POD_RESOURCE_PREFIXES = [HUGEPAGES_PREFIX, REQUESTS_HUGEPAGES_PREFIX];

/**
 * Quotas on these force every container to state them (the must-specify rule). Kubernetes
 * keeps the rule for cpu and memory for compatibility and will not extend it.
 */
const MUST_SPECIFY: ReadonlySet<string> = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

export const POD_SCOPES = {
  Terminating: 'Terminating',
  NotTerminating: 'NotTerminating',
  BestEffort: 'BestEffort',
  NotBestEffort: 'NotBestEffort',
  PriorityClass: 'PriorityClass',
  CrossNamespacePodAffinity: 'CrossNamespacePodAffinity',
} as const;

export class PodEvaluator extends EvaluatorBase {
  readonly groupResource = PODS;

  /**
   * CREATE; UPDATE of the `resize` subresource; and a plain UPDATE only when it moves the
   * pod between Terminating and NotTerminating (which needs both objects).
   */
  handles(operation: Operation, subresource?: string, object?: KubeObject, oldObject?: KubeObject): boolean {
    switch (subresource ?? '') {
      case '':
        if (operation === 'UPDATE') {
          if (object === undefined || oldObject === undefined) return false;
          return isTerminating(readPod(object)) !== isTerminating(readPod(oldObject));
        }
        return operation === 'CREATE';
      case 'resize':
        return operation === 'UPDATE';
      default:
        return false;
    }
  }

  matchingResources(input: readonly string[]): string[] {
    const result = intersection(input, POD_RESOURCE_NAMES);
    for (const name of input) {
      if (POD_RESOURCE_PREFIXES.some((prefix) => name.startsWith(prefix)) || isExtendedResourceNameForQuota(name)) result.push(name);
    }
    return unique(result);
  }

  scopeFacts(object: KubeObject, options: UsageOptions = {}): ScopeFacts {
    return podScopeFacts(readPod(object, options.stored));
  }

  constraints(required: readonly string[], object: KubeObject): string[] {
    return [...missingByResource(readPod(object), required).keys()].sort(compareStrings);
  }

  /** Kubernetes' error text for the must-specify rule, or undefined when satisfied. */
  constraintError(required: readonly string[], object: KubeObject): string | undefined {
    const missing = missingByResource(readPod(object), required);
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()]
      .sort(compareStrings)
      .map((resource) => `${resource} for: ${[...(missing.get(resource) ?? [])].sort(compareStrings).join(',')}`);
    return `must specify ${parts.join('; ')}`;
  }

  usage(object: KubeObject, options: UsageOptions = {}): ResourceList {
    return podUsage(readPod(object, options.stored), options);
  }

  endOfLife(object: KubeObject, options: UsageOptions = {}): TerminationReason | undefined {
    return podEndOfLife(readPod(object, options.stored), options.now);
  }
}

/**
 * What a pod consumes. `count/pods` always (it counts stored objects); the rest only while
 * the pod is not terminal and not stuck past its deletion grace period.
 */
export function podUsage(pod: PodModel, options: UsageOptions = {}): ResourceList {
  const count = Resources.fromEntries([[POD_OBJECT_COUNT_NAME, Quantity.fromInt(1n)]]);
  if (!options.asLive && podEndOfLife(pod, options.now) !== undefined) return count;
  const resources = options.specFloor ? { ...QUOTA_OPTIONS, specFloor: true } : QUOTA_OPTIONS;
  const requests = podRequests(pod, resources);
  const limits = podLimits(pod, resources);
  return Resources.add(count, computeUsage(requests, limits));
}

/**
 * Why a pod no longer charges compute resources, or undefined while it does: Kubernetes'
 * QuotaV1Pod, negated. Without a clock the deletion grace period cannot have run out.
 */
function podEndOfLife(pod: PodModel, now: number | undefined): TerminationReason | undefined {
  if (pod.phase === 'Failed' || pod.phase === 'Succeeded') return pod.phase;
  if (now !== undefined && pod.deletionTimestamp !== undefined && pod.deletionGracePeriodSeconds !== undefined) {
    if (now > pod.deletionTimestamp + pod.deletionGracePeriodSeconds * 1000) return 'DeletionGracePeriodElapsed';
  }
  return undefined;
}

/** The quota names a set of requests and limits charges (podComputeUsageHelper). */
export function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const result = new Map<string, Quantity>([['pods', Quantity.fromInt(1n)]]);
  for (const name of ['cpu', 'memory', 'ephemeral-storage']) {
    const request = Resources.get(requests, name);
    if (request !== undefined) {
      result.set(name, request);
      result.set(`requests.${name}`, request);
    }
    const limit = Resources.get(limits, name);
    if (limit !== undefined) result.set(`limits.${name}`, limit);
  }
  for (const [name, request] of Object.entries(requests)) {
    if (name.startsWith(HUGEPAGES_PREFIX)) {
      result.set(name, request);
      result.set(`${REQUESTS_PREFIX}${name}`, request);
    }
    // Extended resources cannot be overcommitted, so only their requests are charged.
    if (isDRAExtendedResourceName(name)) result.set(`${REQUESTS_PREFIX}${name}`, request);
  }
  return Resources.fromEntries(result);
}

/** For each must-specify resource some container omits, the containers omitting it. */
function missingByResource(pod: PodModel, required: readonly string[]): Map<string, Set<string>> {
  const missing = new Map<string, Set<string>>();
  // Pod-level resources make container-level ones optional.
  if (isPodLevelResourcesSet(pod)) return missing;
  const requiredSet = required.filter((name) => MUST_SPECIFY.has(name));
  for (const container of [...pod.containers, ...pod.initContainers]) {
    const stated = computeUsage(container.requests, container.limits);
    for (const name of requiredSet) {
      if (Resources.has(stated, name)) continue;
      const containers = missing.get(name) ?? new Set<string>();
      containers.add(container.name);
      missing.set(name, containers);
    }
  }
  return missing;
}

export function isTerminating(pod: PodModel): boolean {
  return pod.activeDeadlineSeconds !== undefined && pod.activeDeadlineSeconds >= 0;
}

export function isBestEffort(pod: PodModel): boolean {
  return podQOS(pod) === 'BestEffort';
}

/** Every pod scope, evaluated for one pod (pods.go's podMatchesScopeFunc, as data). */
export function podScopeFacts(pod: PodModel): ScopeFacts {
  const terminating = isTerminating(pod);
  const bestEffort = isBestEffort(pod);
  return {
    [POD_SCOPES.Terminating]: terminating,
    [POD_SCOPES.NotTerminating]: !terminating,
    [POD_SCOPES.BestEffort]: bestEffort,
    [POD_SCOPES.NotBestEffort]: !bestEffort,
    [POD_SCOPES.PriorityClass]: pod.priorityClassName === '' ? [] : [pod.priorityClassName],
    [POD_SCOPES.CrossNamespacePodAffinity]: pod.usesCrossNamespacePodAffinity,
  };
}
