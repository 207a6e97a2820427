import type { GroupResource } from './types.js';

/**
 * A namespaced kind Kubernetes' ResourceQuota counts, as every part of the service sees it.
 */
export interface ChargedKind {
  readonly kind: string;
  /** The version the Kubernetes inventory asks for and fills into listed items. */
  readonly apiVersion: string;
  readonly groupResource: GroupResource;
  /**
   * Whether the validating webhook is sent its writes. ResourceQuota objects are not: quotas
   * live in the ledger's admin API, which counts `count/resourcequotas` itself.
   */
  readonly webhook: boolean;
  /** Subresource writes quota admission charges (pod in-place resize, claim allocated storage). */
  readonly subresources?: readonly string[];
  /**
   * Quota charges nothing for it but its object count (`count/<resource>`, or the kind's own
   * count name such as `configmaps`): no compute, storage, load balancer, node port or device.
   * The webhook configuration sends these kinds to a webhook of their own, whose failurePolicy is
   * `Ignore` by default, so that cluster tooling (a `helm install` writes a Secret) is not refused
   * while the ledger is down; the reconciler adopts what was admitted meanwhile.
   */
  readonly countOnly?: true;
}

/**
 * The one list of kinds. The webhook rules quotactl generates, the kinds every
 * inventory source lists (so the reconciler can commit and release what the webhook reserved),
 * the RBAC the reconciler's ClusterRole must grant (a test reads deploy/kubernetes/base/rbac.yaml
 * against it) and the kinds a REST caller may name all come from here. A kind sent to the
 * webhook but never listed would be reserved and never released: that cannot be written.
 */
export const CHARGED_KINDS: readonly ChargedKind[] = [
  { kind: 'Pod', apiVersion: 'v1', groupResource: { group: '', resource: 'pods' }, webhook: true, subresources: ['resize'] },
  {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    groupResource: { group: '', resource: 'persistentvolumeclaims' },
    webhook: true,
    subresources: ['status'],
  },
  { kind: 'Service', apiVersion: 'v1', groupResource: { group: '', resource: 'services' }, webhook: true },
  { kind: 'ConfigMap', apiVersion: 'v1', groupResource: { group: '', resource: 'configmaps' }, webhook: true, countOnly: true },
  { kind: 'Secret', apiVersion: 'v1', groupResource: { group: '', resource: 'secrets' }, webhook: true, countOnly: true },
  {
    kind: 'ReplicationController',
    apiVersion: 'v1',
    groupResource: { group: '', resource: 'replicationcontrollers' },
    webhook: true,
    countOnly: true,
  },
  // count/serviceaccounts: Kubernetes' quota refuses the one past it at admission, so ours does too.
  {
    kind: 'ServiceAccount',
    apiVersion: 'v1',
    groupResource: { group: '', resource: 'serviceaccounts' },
    webhook: true,
    countOnly: true,
  },
  { kind: 'ResourceQuota', apiVersion: 'v1', groupResource: { group: '', resource: 'resourcequotas' }, webhook: false },
  { kind: 'Job', apiVersion: 'batch/v1', groupResource: { group: 'batch', resource: 'jobs' }, webhook: true, countOnly: true },
  { kind: 'CronJob', apiVersion: 'batch/v1', groupResource: { group: 'batch', resource: 'cronjobs' }, webhook: true, countOnly: true },
  { kind: 'Deployment', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'deployments' }, webhook: true, countOnly: true },
  { kind: 'ReplicaSet', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'replicasets' }, webhook: true, countOnly: true },
  {
    kind: 'StatefulSet',
    apiVersion: 'apps/v1',
    groupResource: { group: 'apps', resource: 'statefulsets' },
    webhook: true,
    countOnly: true,
  },
  { kind: 'DaemonSet', apiVersion: 'apps/v1', groupResource: { group: 'apps', resource: 'daemonsets' }, webhook: true, countOnly: true },
  // Dynamic resource allocation (GA in Kubernetes 1.34): charged per claim and per device class.
  {
    kind: 'ResourceClaim',
    apiVersion: 'resource.k8s.io/v1',
    groupResource: { group: 'resource.k8s.io', resource: 'resourceclaims' },
    webhook: true,
  },
];

/** Whether a resource is one of CHARGED_KINDS (the kinds every inventory lists and RBAC grants). */
export function isChargedKind(groupResource: GroupResource): boolean {
  return CHARGED_KINDS.some((k) => k.groupResource.group === groupResource.group && k.groupResource.resource === groupResource.resource);
}
