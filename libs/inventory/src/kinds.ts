import type { GroupResource } from '@quota/domain';

/** A kind every source can list, with the apiVersion its objects carry. */
export interface KnownKind {
  readonly kind: string;
  readonly apiVersion: string;
  readonly groupResource: GroupResource;
}

/** The kinds quota charges that sources list by default (what Kubernetes' quota counts). */
export const KNOWN_KINDS: readonly KnownKind[] = [
  { kind: 'Pod', apiVersion: 'v1', groupResource: { group: '', resource: 'pods' } },
  { kind: 'PersistentVolumeClaim', apiVersion: 'v1', groupResource: { group: '', resource: 'persistentvolumeclaims' } },
  { kind: 'Service', apiVersion: 'v1', groupResource: { group: '', resource: 'services' } },
  { kind: 'ConfigMap', apiVersion: 'v1', groupResource: { group: '', resource: 'configmaps' } },
  { kind: 'Secret', apiVersion: 'v1', groupResource: { group: '', resource: 'secrets' } },
  { kind: 'ReplicationController', apiVersion: 'v1', groupResource: { group: '', resource: 'replicationcontrollers' } },
  { kind: 'Deployment', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'deployments' } },
  { kind: 'ReplicaSet', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'replicasets' } },
  { kind: 'StatefulSet', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'statefulsets' } },
  { kind: 'DaemonSet', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'daemonsets' } },
  { kind: 'Job', apiVersion: 'batch/v1', groupResource: { group: 'batch', resource: 'jobs' } },
  { kind: 'CronJob', apiVersion: 'batch/v1', groupResource: { group: 'batch', resource: 'cronjobs' } },
];

export const DEFAULT_RESOURCES: readonly GroupResource[] = KNOWN_KINDS.map((k) => k.groupResource);

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** The resource of a kind in an apiVersion, when both are well known and agree. */
export function resourceOfKind(kind: string, apiVersion: string): GroupResource | undefined {
  const known = KNOWN_KINDS.find((k) => k.kind === kind);
  return known && groupOf(apiVersion) === known.groupResource.group ? known.groupResource : undefined;
}

export function knownKindOf(groupResource: GroupResource): KnownKind | undefined {
  return KNOWN_KINDS.find((k) => k.groupResource.group === groupResource.group && k.groupResource.resource === groupResource.resource);
}

export const sameResource = (a: GroupResource, b: GroupResource): boolean => a.group === b.group && a.resource === b.resource;

/** Most objects one listing may return; beyond it the listing fails rather than run out of memory. */
export const MAX_OBJECTS = 50_000;
