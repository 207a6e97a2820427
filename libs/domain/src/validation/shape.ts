import { metadataNameProblem } from './object-names.js';
import type { GroupResource } from '../kube/types.js';
import { selectObject } from '../kube/fields-read.js';

/**
 * The shape of the fields quota and LimitRanger read from an object, checked before anything
 * reads them: a request that never went through an API server (REST) or a broken webhook
 * caller can send anything, and a wrong type deep in a pod must be a 400 naming the field,
 * not a TypeError. Only what we read is checked, and the names the ledger stores (object-names.ts);
 * the API server validates the rest.
 */
export interface ShapeProblem {
  readonly field: string;
  readonly message: string;
}

/** Containers of one pod, all lists together: more is refused (each is decided one by one). */
export const POD_CONTAINERS_MAX = 256;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function optionalString(parent: Json, key: string, path: string): ShapeProblem | undefined {
  const value = parent[key];
  return value === undefined || value === null || typeof value === 'string'
    ? undefined
    : { field: `${path}.${key}`, message: `must be a string, got ${kindOf(value)}` };
}

function optionalObject(parent: Json, key: string, path: string): ShapeProblem | undefined {
  const value = parent[key];
  return value === undefined || value === null || isObject(value)
    ? undefined
    : { field: `${path}.${key}`, message: `must be an object, got ${kindOf(value)}` };
}

const kindOf = (v: unknown): string => (Array.isArray(v) ? 'an array' : v === null ? 'null' : `a ${typeof v}`);

/** A resource list: names to quantity strings. */
function resourceList(parent: Json, key: string, path: string): ShapeProblem | undefined {
  const problem = optionalObject(parent, key, path);
  if (problem) return problem;
  const list = parent[key];
  if (!isObject(list)) return undefined;
  for (const [name, value] of Object.entries(list)) {
    if (typeof value !== 'string' && typeof value !== 'number')
      return { field: `${path}.${key}.${name}`, message: `must be a quantity such as "500m" or "1Gi", got ${kindOf(value)}` };
  }
  return undefined;
}

function containerList(spec: Json, key: string, path: string): ShapeProblem | undefined {
  const value = spec[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return { field: `${path}.${key}`, message: `must be a list of containers, got ${kindOf(value)}` };
  for (let i = 0; i < value.length; i++) {
    const container: unknown = value[i];
    const at = `${path}.${key}[${i}]`;
    if (!isObject(container)) return { field: at, message: `must be a container object, got ${kindOf(container)}` };
    const problem = optionalString(container, 'name', at) ?? optionalObject(container, 'resources', at);
    if (problem) return problem;
    const resources = container['resources'];
    if (isObject(resources)) {
      const inner = resourceList(resources, 'requests', `${at}.resources`) ?? resourceList(resources, 'limits', `${at}.resources`);
      if (inner) return inner;
    }
  }
  return undefined;
}

export function objectShapeProblem(groupResource: GroupResource, whole: unknown, path = 'object'): ShapeProblem | undefined {
  // Only what admission reads of the kind (kube/fields-read.ts): what it does not read has no shape to keep.
  const object = isObject(whole) ? selectObject(groupResource, whole) : whole;
  if (!isObject(object)) return { field: path, message: `must be an object, got ${kindOf(object)}` };
  const metaProblem = optionalObject(object, 'metadata', path);
  if (metaProblem) return metaProblem;
  const metadata = object['metadata'];
  if (isObject(metadata)) {
    for (const key of ['name', 'namespace', 'uid', 'generateName']) {
      const problem = optionalString(metadata, key, `${path}.metadata`);
      if (problem) return problem;
    }
    // The names are stored with every decision and reservation: held to Kubernetes' rules first.
    const nameProblem = metadataNameProblem(groupResource, metadata, `${path}.metadata`);
    if (nameProblem) return nameProblem;
  }
  const specProblem = optionalObject(object, 'spec', path);
  if (specProblem) return specProblem;
  const spec = object['spec'];
  if (groupResource.group !== '' || !isObject(spec)) return undefined;
  if (groupResource.resource === 'pods') {
    let containers = 0;
    for (const key of ['containers', 'initContainers', 'ephemeralContainers']) {
      const problem = containerList(spec, key, `${path}.spec`);
      if (problem) return problem;
      const list = spec[key];
      if (Array.isArray(list)) containers += list.length;
    }
    if (containers > POD_CONTAINERS_MAX)
      return {
        field: `${path}.spec.containers`,
        message: `Too many: ${containers}: must have at most ${POD_CONTAINERS_MAX} containers, init containers and ephemeral containers in all`,
      };
    return resourceList(spec, 'overhead', `${path}.spec`) ?? optionalString(spec, 'priorityClassName', `${path}.spec`);
  }
  if (groupResource.resource === 'persistentvolumeclaims') {
    const resources = spec['resources'];
    const problem = optionalObject(spec, 'resources', `${path}.spec`) ?? optionalString(spec, 'storageClassName', `${path}.spec`);
    if (problem) return problem;
    if (isObject(resources))
      return resourceList(resources, 'requests', `${path}.spec.resources`) ?? resourceList(resources, 'limits', `${path}.spec.resources`);
  }
  if (groupResource.resource === 'services') {
    const ports = spec['ports'];
    if (ports !== undefined && ports !== null) {
      if (!Array.isArray(ports)) return { field: `${path}.spec.ports`, message: `must be a list of ports, got ${kindOf(ports)}` };
      const bad = ports.findIndex((port: unknown) => !isObject(port));
      if (bad >= 0) return { field: `${path}.spec.ports[${bad}]`, message: `must be a port object, got ${kindOf(ports[bad])}` };
    }
    return optionalString(spec, 'type', `${path}.spec`);
  }
  return undefined;
}
