import type { LimitRange, PersistentVolumeClaim, Pod, RawQuantities, ResourceRequirements } from '../kube/types.js';

/**
 * Builders for the specs, mirroring the helpers of Kubernetes' admission_test.go
 * (getComputeResourceList, createLimitRange, validPod, validPodInit, ...). Empty lists are
 * left out, as the API server's JSON leaves them out.
 */

export const cpuMem = (cpu = '', memory = ''): RawQuantities => ({ ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) });
export const storage = (value = ''): RawQuantities => (value ? { storage: value } : {});
export const ephemeral = (value = ''): RawQuantities => (value ? { 'ephemeral-storage': value } : {});

const nonEmpty = (list: RawQuantities | undefined): list is RawQuantities => list !== undefined && Object.keys(list).length > 0;

export function requirements(requests?: RawQuantities, limits?: RawQuantities): ResourceRequirements {
  return { ...(nonEmpty(limits) ? { limits } : {}), ...(nonEmpty(requests) ? { requests } : {}) };
}

export interface ItemSpec {
  readonly min?: RawQuantities;
  readonly max?: RawQuantities;
  readonly default?: RawQuantities;
  readonly defaultRequest?: RawQuantities;
  readonly maxLimitRequestRatio?: RawQuantities;
}

export function limitRange(type: string, spec: ItemSpec, name = 'abc'): LimitRange {
  const item = Object.fromEntries(Object.entries(spec).filter(([, v]) => nonEmpty(v as RawQuantities | undefined)));
  return { apiVersion: 'v1', kind: 'LimitRange', metadata: { name, namespace: 'test' }, spec: { limits: [{ type, ...item }] } };
}

export function validLimitRange(): LimitRange {
  return {
    metadata: { name: 'abc', namespace: 'test' },
    spec: {
      limits: [
        { type: 'Pod', max: cpuMem('200m', '4Gi'), min: cpuMem('50m', '2Mi') },
        {
          type: 'Container',
          max: cpuMem('100m', '2Gi'),
          min: cpuMem('25m', '1Mi'),
          default: cpuMem('75m', '10Mi'),
          defaultRequest: cpuMem('50m', '5Mi'),
        },
      ],
    },
  };
}

export function validLimitRangeNoDefaults(): LimitRange {
  return {
    metadata: { name: 'abc', namespace: 'test' },
    spec: {
      limits: [
        { type: 'Pod', max: cpuMem('200m', '4Gi'), min: cpuMem('50m', '2Mi') },
        { type: 'Container', max: cpuMem('100m', '2Gi'), min: cpuMem('25m', '1Mi') },
      ],
    },
  };
}

export function validPod(name: string, containers: number, resources: ResourceRequirements): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'test' },
    spec: { containers: Array.from({ length: containers }, (_, i) => ({ name: `foo-${i}`, image: `foo:V${i}`, resources })) },
  };
}

export function withInit(pod: Pod, ...resources: ResourceRequirements[]): Pod {
  const existing = pod.spec?.initContainers ?? [];
  return {
    ...pod,
    spec: {
      ...pod.spec,
      initContainers: [...existing, ...resources.map((r, i) => ({ name: `foo-${i}`, image: `foo:V${i}`, resources: r }))],
    },
  };
}

/** Appends a sidecar: an init container with `restartPolicy: Always`. */
export function withSidecar(pod: Pod, resources: ResourceRequirements): Pod {
  const existing = pod.spec?.initContainers ?? [];
  const n = existing.length;
  return {
    ...pod,
    spec: { ...pod.spec, initContainers: [...existing, { name: `foo-${n}`, image: `foo:V${n}`, restartPolicy: 'Always', resources }] },
  };
}

export function validPvc(name: string, requests?: RawQuantities): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'test' },
    spec: { resources: requirements(requests) },
  };
}

/** Freezes a JSON value all the way down, so any write to an input throws. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
