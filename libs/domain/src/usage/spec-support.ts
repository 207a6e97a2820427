import type { KubeObject } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import type { ResourceList } from '../resources/resource-list.js';

/** Builders for the usage specs: pods written as compact data, lists compared by value. */

export type Amounts = Readonly<Record<string, string>>;

export interface ContainerSpec {
  readonly name?: string;
  readonly requests?: Amounts;
  readonly limits?: Amounts;
  /** A restartable init container (`restartPolicy: Always`). */
  readonly sidecar?: boolean;
}

export interface StatusSpec {
  readonly name?: string;
  readonly requests?: Amounts;
  readonly limits?: Amounts;
  /** Whether `resources` is present at all. */
  readonly applied?: boolean;
  readonly allocated?: Amounts;
}

export interface PodSpecData {
  readonly containers?: readonly ContainerSpec[];
  readonly initContainers?: readonly ContainerSpec[];
  readonly overhead?: Amounts;
  readonly podResources?: { readonly requests?: Amounts; readonly limits?: Amounts };
  readonly containerStatuses?: readonly StatusSpec[];
  readonly initContainerStatuses?: readonly StatusSpec[];
  /** The resize is marked infeasible (`PodResizePending`, reason `Infeasible`). */
  readonly resizeInfeasible?: boolean;
  readonly phase?: string;
  readonly spec?: Readonly<Record<string, unknown>>;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

const container = (c: ContainerSpec): Record<string, unknown> => ({
  name: c.name ?? '',
  resources: { ...(c.requests ? { requests: c.requests } : {}), ...(c.limits ? { limits: c.limits } : {}) },
  ...(c.sidecar ? { restartPolicy: 'Always' } : {}),
});

const status = (s: StatusSpec): Record<string, unknown> => ({
  name: s.name ?? '',
  ...(s.applied === false
    ? {}
    : { resources: { ...(s.requests ? { requests: s.requests } : {}), ...(s.limits ? { limits: s.limits } : {}) } }),
  ...(s.allocated ? { allocatedResources: s.allocated } : {}),
});

export function pod(data: PodSpecData = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', ...(data.metadata ?? {}) },
    spec: {
      containers: (data.containers ?? []).map(container),
      ...(data.initContainers ? { initContainers: data.initContainers.map(container) } : {}),
      ...(data.overhead ? { overhead: data.overhead } : {}),
      ...(data.podResources ? { resources: data.podResources } : {}),
      ...(data.spec ?? {}),
    },
    status: {
      ...(data.phase ? { phase: data.phase } : {}),
      ...(data.containerStatuses ? { containerStatuses: data.containerStatuses.map(status) } : {}),
      ...(data.initContainerStatuses ? { initContainerStatuses: data.initContainerStatuses.map(status) } : {}),
      ...(data.resizeInfeasible ? { conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }] } : {}),
    },
  };
}

/** A list as name → exact value in nano-units, sorted, for comparing by value not by text. */
export function values(list: ResourceList | Amounts): Record<string, bigint> {
  return Object.fromEntries(
    Object.entries(list)
      .map(([name, q]): [string, bigint] => [name, (typeof q === 'string' ? Quantity.parse(q) : q).nanos])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}
