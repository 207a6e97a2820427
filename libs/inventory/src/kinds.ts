import type { GroupResource } from '@quota/domain';

/** A kind every source can list: the apiVersion its objects carry and the resource it is. */
export interface KnownKind {
  readonly kind: string;
  /** The version the Kubernetes source asks for and fills into listed items. */
  readonly apiVersion: string;
  readonly groupResource: GroupResource;
}

/**
 * The namespaced kinds Kubernetes' ResourceQuota counts, one row each. Every source maps
 * kind ↔ resource through this table and nothing else, so the three cannot disagree.
 */
export const KNOWN_KINDS: readonly KnownKind[] = [
  { kind: 'Pod', apiVersion: 'v1', groupResource: { group: '', resource: 'pods' } },
  { kind: 'PersistentVolumeClaim', apiVersion: 'v1', groupResource: { group: '', resource: 'persistentvolumeclaims' } },
  { kind: 'Service', apiVersion: 'v1', groupResource: { group: '', resource: 'services' } },
  { kind: 'ConfigMap', apiVersion: 'v1', groupResource: { group: '', resource: 'configmaps' } },
  { kind: 'Secret', apiVersion: 'v1', groupResource: { group: '', resource: 'secrets' } },
  { kind: 'ReplicationController', apiVersion: 'v1', groupResource: { group: '', resource: 'replicationcontrollers' } },
  { kind: 'ResourceQuota', apiVersion: 'v1', groupResource: { group: '', resource: 'resourcequotas' } },
  { kind: 'Job', apiVersion: 'batch/v1', groupResource: { group: 'batch', resource: 'jobs' } },
  { kind: 'CronJob', apiVersion: 'batch/v1', groupResource: { group: 'batch', resource: 'cronjobs' } },
  { kind: 'Deployment', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'deployments' } },
  { kind: 'ReplicaSet', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'replicasets' } },
  { kind: 'StatefulSet', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'statefulsets' } },
  { kind: 'DaemonSet', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'daemonsets' } },
];

/** What a source covers unless told otherwise: every known kind. */
export const DEFAULT_RESOURCES: readonly GroupResource[] = KNOWN_KINDS.map((k) => k.groupResource);

/** `apps/v1` → `apps`; the core group (`v1`) is the empty string. */
export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export const sameResource = (a: GroupResource, b: GroupResource): boolean => a.group === b.group && a.resource === b.resource;

/** Kubernetes' own spelling: `pods`, `deployments.apps`. */
export const formatResource = (groupResource: GroupResource): string =>
  groupResource.group === '' ? groupResource.resource : `${groupResource.resource}.${groupResource.group}`;

/**
 * The resource an object of this kind and apiVersion is, when the kind is known *in that
 * group*: a `Job` of `example.com/v1` is some custom resource, not `jobs.batch`.
 */
export function resourceOfKind(kind: string, apiVersion: string): GroupResource | undefined {
  const group = groupOfApiVersion(apiVersion);
  return KNOWN_KINDS.find((k) => k.kind === kind && k.groupResource.group === group)?.groupResource;
}

export function knownKindOf(groupResource: GroupResource): KnownKind | undefined {
  return KNOWN_KINDS.find((k) => sameResource(k.groupResource, groupResource));
}

/**
 * The kinds of the resources a source is asked to cover, checked once at creation: a resource no source
 * can map would be "covered" yet never listed, and every reservation for it released.
 */
export function checkResources(source: string, resources: readonly GroupResource[]): readonly KnownKind[] {
  const checked: KnownKind[] = [];
  for (const resource of resources) {
    const known = knownKindOf(resource);
    if (!known) throw new Error(`${source} inventory: cannot cover ${formatResource(resource)}: not one of ${DEFAULT_RESOURCES.map(formatResource).join(', ')}`);
    if (checked.includes(known)) throw new Error(`${source} inventory: ${formatResource(resource)} is listed twice in resources`);
    checked.push(known);
  }
  return checked;
}
