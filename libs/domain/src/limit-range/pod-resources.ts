import type { Container, Pod } from '../kube/types.js';
import { add, EMPTY, max, parseResourceList, type ResourceList } from '../resources/resource-list.js';

export interface LimitRangerPodOptions {
  /**
   * The PodLevelResources feature gate (beta and on by default since Kubernetes 1.34):
   * pod-level `spec.resources` override the summed container values for cpu and memory.
   */
  readonly podLevelResources?: boolean;
}

/** The resources pod-level `spec.resources` may set (isSupportedPodLevelResource). */
const POD_LEVEL_RESOURCES: ReadonlySet<string> = new Set(['cpu', 'memory']);

/** A container's parsed requests and limits; an invalid quantity is the request's fault. */
export interface LimitRangerContainer {
  readonly name: string;
  readonly init: boolean;
  readonly index: number;
  /** Sidecar: an init container with `restartPolicy: Always`. */
  readonly restartable: boolean;
  readonly requests: ResourceList;
  readonly limits: ResourceList;
}

export interface LimitRangerPodResources {
  readonly containers: readonly LimitRangerContainer[];
  readonly initContainers: readonly LimitRangerContainer[];
  readonly podLevelRequests: ResourceList | undefined;
  readonly podLevelLimits: ResourceList | undefined;
}

const listOf = (value: unknown): readonly Container[] => (Array.isArray(value) ? (value as readonly Container[]) : []);

function parseContainer(container: Container, init: boolean, index: number): LimitRangerContainer {
  const path = `spec.${init ? 'initContainers' : 'containers'}[${index}].resources`;
  return {
    name: container.name,
    init,
    index,
    restartable: init && container.restartPolicy === 'Always',
    requests: parseResourceList(container.resources?.requests, `${path}.requests`),
    limits: parseResourceList(container.resources?.limits, `${path}.limits`),
  };
}

/** Parses every quantity LimitRanger reads from a pod. Throws DomainError('QuantityInvalid') for a quantity that does not parse. */
export function parseLimitRangerPod(pod: Pod): LimitRangerPodResources {
  const podLevel = pod.spec?.resources;
  return {
    containers: listOf(pod.spec?.containers).map((c, i) => parseContainer(c, false, i)),
    initContainers: listOf(pod.spec?.initContainers).map((c, i) => parseContainer(c, true, i)),
    podLevelRequests: podLevel ? parseResourceList(podLevel.requests, 'spec.resources.requests') : undefined,
    podLevelLimits: podLevel ? parseResourceList(podLevel.limits, 'spec.resources.limits') : undefined,
  };
}

/**
 * The pod's effective total, LimitRanger's way (its own copy of PodRequests/PodLimits, spec
 * only, never status): the sum over containers and sidecars, raised to what the largest
 * one-shot init container needs while the sidecars started before it run alongside; then,
 * with pod-level resources, cpu and memory set at pod level replace the computed value.
 */
function podTotal(
  pod: LimitRangerPodResources,
  pick: (c: LimitRangerContainer) => ResourceList,
  podLevel: ResourceList | undefined,
  options: LimitRangerPodOptions,
): ResourceList {
  let total: ResourceList = EMPTY;
  for (const container of pod.containers) total = add(total, pick(container));
  let sidecars: ResourceList = EMPTY;
  let initPeak: ResourceList = EMPTY;
  for (const container of pod.initContainers) {
    let during: ResourceList;
    if (container.restartable) {
      total = add(total, pick(container));
      sidecars = add(sidecars, pick(container));
      during = sidecars;
    } else {
      during = add(pick(container), sidecars);
    }
    initPeak = max(initPeak, during);
  }
  total = max(total, initPeak);
  if ((options.podLevelResources ?? true) && podLevel) {
    const override = Object.entries(podLevel).filter(([name]) => POD_LEVEL_RESOURCES.has(name));
    if (override.length > 0) total = Object.freeze({ ...total, ...Object.fromEntries(override) });
  }
  return total;
}

/** The pod-wide requests Pod-type items are checked against. */
export function limitRangerPodRequests(pod: LimitRangerPodResources, options: LimitRangerPodOptions = {}): ResourceList {
  return podTotal(pod, (c) => c.requests, pod.podLevelRequests, options);
}

/** The pod-wide limits Pod-type items are checked against. */
export function limitRangerPodLimits(pod: LimitRangerPodResources, options: LimitRangerPodOptions = {}): ResourceList {
  return podTotal(pod, (c) => c.limits, pod.podLevelLimits, options);
}
