import type { Container, LimitRange, Pod, ResourceRequirements } from '../kube/types.js';
import type { Quantity } from '../quantity/quantity.js';
import type { ResourceList } from '../resources/resource-list.js';
import { jsonPointer, type JsonPatchOperation } from './json-patch.js';
import { LIMIT_RANGER_ANNOTATION, LIMIT_TYPE_CONTAINER, parseLimitRange, type ParsedLimitRange } from './limit-range.js';
import { selectFields } from '../kube/field-selection.js';
import { POD_FIELDS } from '../kube/fields-read.js';

/**
 * LimitRanger's mutating half (PodMutateLimitFunc in
 * plugin/pkg/admission/limitranger/admission.go): fill the resource requests and limits a
 * container leaves out from the Container-type items of each LimitRange, and say so in the
 * `kubernetes.io/limit-ranger` annotation. Only pods are defaulted; PersistentVolumeClaims
 * never are (storage is a required part of a claim's spec).
 *
 * Requests are NOT defaulted from the container's own limits here: that rule belongs to the
 * API server's decoding of a Pod (SetDefaults_Pod), which has already run on any pod an
 * admission webhook sees.
 *
 * Like the plugin, this reads each LimitRange as given: Kubernetes hands the plugin
 * LimitRanges already defaulted by the API server (SetDefaults_LimitRangeItem), and
 * admitLimitRanger applies that defaulting on read before calling this.
 */

/** The requests and limits a LimitRange gives a container that omits them. */
export interface DefaultRequirements {
  readonly requests: ResourceList;
  readonly limits: ResourceList;
}

/**
 * defaultContainerResourceRequirements: `defaultRequest` and `default` of every
 * Container-type item, a later item overriding an earlier one for the same resource. Like
 * Kubernetes' function, it reads the items as given (no API defaulting).
 */
export function defaultContainerResourceRequirements(limitRange: ParsedLimitRange): DefaultRequirements {
  let requests: ResourceList = {};
  let limits: ResourceList = {};
  for (const item of limitRange.items) {
    if (item.type !== LIMIT_TYPE_CONTAINER) continue;
    requests = { ...requests, ...item.defaultRequest };
    limits = { ...limits, ...item.default };
  }
  return { requests: Object.freeze(requests), limits: Object.freeze(limits) };
}

/** What LimitRanger added to one container. */
export interface ContainerDefaulting {
  readonly init: boolean;
  /** Index in `spec.containers` or `spec.initContainers`. */
  readonly index: number;
  readonly name: string;
  /** The request keys added, with the quantity text written. */
  readonly requests: Readonly<Record<string, string>>;
  readonly limits: Readonly<Record<string, string>>;
}

export interface PodDefaulting {
  /** The pod after defaulting (a new object; the input is untouched). */
  readonly pod: Pod;
  /** RFC 6902 operations that turn the ORIGINAL pod into `pod`; empty when nothing changed. */
  readonly patch: readonly JsonPatchOperation[];
  /** The `kubernetes.io/limit-ranger` annotation value written, if any. */
  readonly annotation: string | undefined;
  /** The containers that received defaults, containers before init containers. */
  readonly containers: readonly ContainerDefaulting[];
}

type JsonObject = Readonly<Record<string, unknown>>;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasKey = (map: unknown, key: string): boolean => isObject(map) && Object.prototype.hasOwnProperty.call(map, key);
const containersOf = (list: unknown): readonly Container[] => (Array.isArray(list) ? (list as readonly Container[]) : []);

interface Slot {
  readonly init: boolean;
  readonly index: number;
  readonly container: Container;
  readonly requests: Map<string, string>;
  readonly limits: Map<string, string>;
}

/** Adds each default the container neither has nor got earlier; returns the keys set, sorted. */
function fill(own: unknown, added: Map<string, string>, defaults: ResourceList): string[] {
  const set: string[] = [];
  for (const key of Object.keys(defaults).sort()) {
    if (hasKey(own, key) || added.has(key)) continue;
    added.set(key, (defaults[key] as Quantity).toString());
    set.push(key);
  }
  return set;
}

/**
 * Applies every LimitRange in turn, as the plugin does: each one fills only what is still
 * missing, and each one that sets anything rewrites the whole annotation, so the annotation
 * describes the last LimitRange that defaulted something.
 */
export function computePodDefaults(whole: Pod, limitRanges: readonly LimitRange[]): PodDefaulting {
  // Read from what admission reads of a pod (kube/fields-read.ts); the defaults are set in, and the
  // patch addresses, the same places of the pod as given.
  const pod = selectFields(whole, POD_FIELDS) as Pod;
  const slots: Slot[] = [
    ...containersOf(pod.spec?.containers).map((container, index) => ({
      init: false,
      index,
      container,
      requests: new Map(),
      limits: new Map(),
    })),
    ...containersOf(pod.spec?.initContainers).map((container, index) => ({
      init: true,
      index,
      container,
      requests: new Map(),
      limits: new Map(),
    })),
  ];
  let annotation: string | undefined;
  for (const limitRange of limitRanges) {
    const defaults = defaultContainerResourceRequirements(parseLimitRange(limitRange));
    const parts: string[] = [];
    for (const slot of slots) {
      const resources = slot.container.resources;
      const setLimits = fill(resources?.limits, slot.limits, defaults.limits);
      const setRequests = fill(resources?.requests, slot.requests, defaults.requests);
      const what = `${slot.init ? 'init container' : 'container'} ${slot.container.name}`;
      if (setRequests.length > 0) parts.push(`${setRequests.join(', ')} request for ${what}`);
      if (setLimits.length > 0) parts.push(`${setLimits.join(', ')} limit for ${what}`);
    }
    if (parts.length > 0) annotation = `LimitRanger plugin set: ${parts.join('; ')}`;
  }

  const changed = slots.filter((s) => s.requests.size > 0 || s.limits.size > 0);
  return {
    pod: mutatedPod(whole, changed, annotation),
    patch: buildPatch(pod, changed, annotation),
    annotation,
    containers: changed.map((s) => ({
      init: s.init,
      index: s.index,
      name: s.container.name,
      requests: Object.fromEntries(s.requests),
      limits: Object.fromEntries(s.limits),
    })),
  };
}

/** The pod with LimitRange defaults applied (pure: the input is not modified). */
export function applyDefaults(pod: Pod, limitRanges: readonly LimitRange[]): Pod {
  return computePodDefaults(pod, limitRanges).pod;
}

function withAdded(own: unknown, added: Map<string, string>): unknown {
  if (added.size === 0) return own;
  return { ...(isObject(own) ? own : {}), ...Object.fromEntries(added) };
}

function mutatedPod(pod: Pod, changed: readonly Slot[], annotation: string | undefined): Pod {
  if (changed.length === 0 && annotation === undefined) return pod;
  const patchList = (list: unknown, init: boolean): unknown => {
    const mine = changed.filter((s) => s.init === init);
    if (mine.length === 0) return list;
    return containersOf(list).map((container, index) => {
      const slot = mine.find((s) => s.index === index);
      if (!slot) return container;
      const resources: JsonObject = isObject(container.resources) ? container.resources : {};
      const next: Record<string, unknown> = { ...resources };
      if (slot.limits.size > 0) next['limits'] = withAdded(resources['limits'], slot.limits);
      if (slot.requests.size > 0) next['requests'] = withAdded(resources['requests'], slot.requests);
      return { ...container, resources: next as ResourceRequirements };
    });
  };
  const spec =
    pod.spec === undefined
      ? undefined
      : { ...pod.spec, containers: patchList(pod.spec.containers, false), initContainers: patchList(pod.spec.initContainers, true) };
  // Keep absent lists absent rather than writing `undefined` keys.
  if (spec && pod.spec?.containers === undefined) delete (spec as Record<string, unknown>)['containers'];
  if (spec && pod.spec?.initContainers === undefined) delete (spec as Record<string, unknown>)['initContainers'];
  const result: Record<string, unknown> = { ...pod };
  if (spec) result['spec'] = spec;
  if (annotation !== undefined) {
    const metadata: JsonObject = isObject(pod.metadata) ? pod.metadata : {};
    const annotations: JsonObject = isObject(metadata['annotations']) ? metadata['annotations'] : {};
    result['metadata'] = { ...metadata, annotations: { ...annotations, [LIMIT_RANGER_ANNOTATION]: annotation } };
  }
  return result as Pod;
}

/**
 * The patch against the original object. An intermediate object (`resources`, `limits`,
 * `requests`, `metadata`, `annotations`) is created, whole, only where it is missing, so
 * that no operation depends on an earlier one.
 */
function buildPatch(pod: Pod, changed: readonly Slot[], annotation: string | undefined): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  for (const slot of changed) {
    const base = ['spec', slot.init ? 'initContainers' : 'containers', slot.index] as const;
    const resources = slot.container.resources;
    if (!isObject(resources)) {
      const value: Record<string, unknown> = {};
      if (slot.limits.size > 0) value['limits'] = Object.fromEntries(slot.limits);
      if (slot.requests.size > 0) value['requests'] = Object.fromEntries(slot.requests);
      ops.push({ op: 'add', path: jsonPointer(...base, 'resources'), value });
      continue;
    }
    for (const [part, added] of [
      ['limits', slot.limits],
      ['requests', slot.requests],
    ] as const) {
      if (added.size === 0) continue;
      if (!isObject(resources[part])) {
        ops.push({ op: 'add', path: jsonPointer(...base, 'resources', part), value: Object.fromEntries(added) });
        continue;
      }
      for (const [key, value] of added) ops.push({ op: 'add', path: jsonPointer(...base, 'resources', part, key), value });
    }
  }
  if (annotation !== undefined) {
    const metadata = pod.metadata;
    if (!isObject(metadata)) {
      ops.push({ op: 'add', path: '/metadata', value: { annotations: { [LIMIT_RANGER_ANNOTATION]: annotation } } });
    } else if (!isObject(metadata['annotations'])) {
      ops.push({ op: 'add', path: '/metadata/annotations', value: { [LIMIT_RANGER_ANNOTATION]: annotation } });
    } else {
      const exists = hasKey(metadata['annotations'], LIMIT_RANGER_ANNOTATION);
      ops.push({
        op: exists ? 'replace' : 'add',
        path: jsonPointer('metadata', 'annotations', LIMIT_RANGER_ANNOTATION),
        value: annotation,
      });
    }
  }
  return ops;
}
