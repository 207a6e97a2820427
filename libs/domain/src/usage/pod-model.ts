import type { KubeObject } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { field, FieldReader } from './fields.js';
import { selectFields } from '../kube/field-selection.js';
import { POD_FIELDS } from '../kube/fields-read.js';

/**
 * A pod as the quota logic reads it: every quantity parsed, every field Kubernetes' pod
 * evaluator looks at, and nothing else. Reading validates the whole pod at once, so an
 * invalid quantity anywhere is reported even if the current question would not need it.
 */
export interface ContainerResources {
  readonly requests: ResourceList;
  readonly limits: ResourceList;
}

export interface PodContainer extends ContainerResources {
  readonly name: string;
  /** An init container with `restartPolicy: Always` is a restartable sidecar. */
  readonly restartable: boolean;
}

export interface PodContainerStatus {
  readonly name: string;
  /** `status.containerStatuses[].resources`: what the kubelet applied (absent: nil). */
  readonly resources: ContainerResources | undefined;
  /** `allocatedResources`, empty when absent (see `allocated` for the distinction). */
  readonly allocatedResources: ResourceList;
  /**
   * The same three lists with Go's nil kept apart from empty: Kubernetes reads a status list
   * whenever it is set, even when it is set to `{}`, and falls back only when it is nil.
   */
  readonly appliedRequests: ResourceList | undefined;
  readonly appliedLimits: ResourceList | undefined;
  readonly allocated: ResourceList | undefined;
}

export interface PodModel {
  readonly containers: readonly PodContainer[];
  readonly initContainers: readonly PodContainer[];
  readonly overhead: ResourceList;
  /** `spec.resources` (pod-level resources); undefined when the field is absent. */
  readonly podResources: ContainerResources | undefined;
  readonly containerStatuses: readonly PodContainerStatus[];
  readonly initContainerStatuses: readonly PodContainerStatus[];
  readonly conditions: readonly { readonly type: string; readonly reason: string }[];
  readonly phase: string;
  /** `status.qosClass`, '' when unset. */
  readonly qosClass: string;
  readonly activeDeadlineSeconds: number | undefined;
  readonly priorityClassName: string;
  readonly usesCrossNamespacePodAffinity: boolean;
  /** `metadata.deletionTimestamp` in epoch milliseconds. */
  readonly deletionTimestamp: number | undefined;
  readonly deletionGracePeriodSeconds: number | undefined;
}

/**
 * Reads a pod, or throws a DomainError listing every invalid field (FieldReader); `stored`: as the
 * API server stored it (UsageOptions). Remembered per object (objects are never changed once
 * read): a reconcile asks a listed pod's usage, scope facts and end of life, and reading the pod
 * is most of what each costs.
 */
export function readPod(object: KubeObject, stored = false): PodModel {
  const known = (stored ? STORED : STRICT).get(object);
  if (known) return known;
  const model = readPodOnce(object, stored);
  (stored ? STORED : STRICT).set(object, model);
  return model;
}

const STRICT = new WeakMap<KubeObject, PodModel>();
const STORED = new WeakMap<KubeObject, PodModel>();

function readPodOnce(object: KubeObject, stored: boolean): PodModel {
  const read = new FieldReader('pod', stored);
  // What admission reads of a pod, and only that (kube/fields-read.ts): a field read here and not selected there is never seen.
  const root = read.object(selectFields(object, POD_FIELDS), '') ?? {};
  const metadata = read.object(field(root, 'metadata'), 'metadata');
  const spec = read.object(field(root, 'spec'), 'spec');
  const status = read.object(field(root, 'status'), 'status');

  const containers = (key: 'containers' | 'initContainers'): PodContainer[] =>
    read.array(field(spec, key), `spec.${key}`).map((raw, i) => {
      const path = `spec.${key}[${i}]`;
      const container = read.object(raw, path);
      return {
        name: read.string(field(container, 'name'), `${path}.name`),
        ...requirements(read, field(container, 'resources'), `${path}.resources`),
        restartable: read.string(field(container, 'restartPolicy'), `${path}.restartPolicy`) === 'Always',
      };
    });

  const statuses = (key: 'containerStatuses' | 'initContainerStatuses'): PodContainerStatus[] =>
    read.array(field(status, key), `status.${key}`).map((raw, i) => {
      const path = `status.${key}[${i}]`;
      const containerStatus = read.object(raw, path);
      const resources = read.object(field(containerStatus, 'resources'), `${path}.resources`);
      const appliedRequests = optionalResources(read, field(resources, 'requests'), `${path}.resources.requests`);
      const appliedLimits = optionalResources(read, field(resources, 'limits'), `${path}.resources.limits`);
      const allocated = optionalResources(read, field(containerStatus, 'allocatedResources'), `${path}.allocatedResources`);
      return {
        name: read.string(field(containerStatus, 'name'), `${path}.name`),
        resources:
          resources === undefined ? undefined : { requests: appliedRequests ?? Resources.EMPTY, limits: appliedLimits ?? Resources.EMPTY },
        allocatedResources: allocated ?? Resources.EMPTY,
        appliedRequests,
        appliedLimits,
        allocated,
      };
    });

  const conditions = read.array(field(status, 'conditions'), 'status.conditions').map((raw, i) => {
    const condition = read.object(raw, `status.conditions[${i}]`);
    return {
      type: read.string(field(condition, 'type'), `status.conditions[${i}].type`),
      reason: read.string(field(condition, 'reason'), `status.conditions[${i}].reason`),
    };
  });

  const podResourcesRaw = field(spec, 'resources');
  const deletionTimestampText = read.optionalString(field(metadata, 'deletionTimestamp'), 'metadata.deletionTimestamp');

  const model: PodModel = {
    containers: containers('containers'),
    initContainers: containers('initContainers'),
    overhead: read.resources(field(spec, 'overhead'), 'spec.overhead'),
    podResources:
      podResourcesRaw === undefined || podResourcesRaw === null ? undefined : requirements(read, podResourcesRaw, 'spec.resources'),
    containerStatuses: statuses('containerStatuses'),
    initContainerStatuses: statuses('initContainerStatuses'),
    conditions,
    phase: read.string(field(status, 'phase'), 'status.phase'),
    qosClass: read.string(field(status, 'qosClass'), 'status.qosClass'),
    activeDeadlineSeconds: read.optionalInteger(field(spec, 'activeDeadlineSeconds'), 'spec.activeDeadlineSeconds'),
    priorityClassName: read.string(field(spec, 'priorityClassName'), 'spec.priorityClassName'),
    usesCrossNamespacePodAffinity: readCrossNamespaceAffinity(read, field(spec, 'affinity')),
    deletionTimestamp: readTimestamp(read, deletionTimestampText, 'metadata.deletionTimestamp'),
    deletionGracePeriodSeconds: read.optionalInteger(field(metadata, 'deletionGracePeriodSeconds'), 'metadata.deletionGracePeriodSeconds'),
  };
  read.done();
  return model;
}

/** A resource list, or undefined when the field is absent or null (Go's nil map). */
function optionalResources(read: FieldReader, raw: unknown, path: string): ResourceList | undefined {
  return raw === undefined || raw === null ? undefined : read.resources(raw, path);
}

function requirements(read: FieldReader, raw: unknown, path: string): ContainerResources {
  const resources = read.object(raw, path);
  return {
    requests: read.resources(field(resources, 'requests'), `${path}.requests`),
    limits: read.resources(field(resources, 'limits'), `${path}.limits`),
  };
}

/** RFC 3339 as Go's time.Parse(time.RFC3339) accepts it (fractional seconds allowed). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function readTimestamp(read: FieldReader, text: string | undefined, path: string): number | undefined {
  if (text === undefined) return undefined;
  const millis = RFC3339.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(millis)) {
    read.invalid(path, text, 'must be an RFC 3339 timestamp');
    return undefined;
  }
  return millis;
}

/** Any pod (anti-)affinity term that names namespaces or selects them (pods.go usesCrossNamespacePodAffinity). */
function readCrossNamespaceAffinity(read: FieldReader, raw: unknown): boolean {
  const affinity = read.object(raw, 'spec.affinity');
  let crossNamespace = false;
  for (const kind of ['podAffinity', 'podAntiAffinity'] as const) {
    const path = `spec.affinity.${kind}`;
    const group = read.object(field(affinity, kind), path);
    const requiredPath = `${path}.requiredDuringSchedulingIgnoredDuringExecution`;
    const preferredPath = `${path}.preferredDuringSchedulingIgnoredDuringExecution`;
    const terms = [
      ...read
        .array(field(group, 'requiredDuringSchedulingIgnoredDuringExecution'), requiredPath)
        .map((term, i) => [term, `${requiredPath}[${i}]`] as const),
      ...read
        .array(field(group, 'preferredDuringSchedulingIgnoredDuringExecution'), preferredPath)
        .map(
          (weighted, i) =>
            [field(read.object(weighted, `${preferredPath}[${i}]`), 'podAffinityTerm'), `${preferredPath}[${i}].podAffinityTerm`] as const,
        ),
    ];
    for (const [rawTerm, termPath] of terms) {
      const term = read.object(rawTerm, termPath);
      const namespaces = read.array(field(term, 'namespaces'), `${termPath}.namespaces`);
      const selector = field(term, 'namespaceSelector');
      if (namespaces.length > 0 || (selector !== undefined && selector !== null)) crossNamespace = true;
    }
  }
  return crossNamespace;
}
