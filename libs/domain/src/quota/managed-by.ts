/**
 * On a ledger definition copied from a cluster object (a LedgerQuota, a LimitRange): the cluster
 * object is its source of truth, and the annotation's value is its resource (`<plural>.<group>`,
 * the plural alone for the core group). The reconciler sets it; the REST admin API refuses to
 * change or delete such a definition (409), since the next sync would put the object's spec back.
 */
export const MANAGED_BY_ANNOTATION = 'quota-ledger.io/managed-by';
/** A quota copied from a LedgerQuota object (quota-ledger.io/v1alpha1). */
export const MANAGED_BY_CLUSTER = 'ledgerquotas.quota-ledger.io';
/** A LimitRange copied from the cluster's own LimitRange object (v1). */
export const MANAGED_BY_LIMIT_RANGE = 'limitranges';
/** A ClusterResourceQuota copied from a LedgerClusterQuota object (quota-ledger.io/v1alpha1, cluster-scoped). */
export const MANAGED_BY_CLUSTER_QUOTA = 'ledgerclusterquotas.quota-ledger.io';
/** A HierarchicalResourceQuota copied from a LedgerHierarchicalQuota object (quota-ledger.io/v1alpha1, namespaced). */
export const MANAGED_BY_HIERARCHICAL_QUOTA = 'ledgerhierarchicalquotas.quota-ledger.io';

type Annotated = { readonly annotations?: Readonly<Record<string, string>> } | undefined;

/** Whether a definition's metadata says it came from a cluster object of `resource` (a LedgerQuota unless told). */
export function managedByCluster(metadata: Annotated, resource: string = MANAGED_BY_CLUSTER): boolean {
  return metadata?.annotations?.[MANAGED_BY_ANNOTATION] === resource;
}

/** The resource of the cluster object a definition came from, if it came from one. */
export function clusterManager(metadata: Annotated): string | undefined {
  return metadata?.annotations?.[MANAGED_BY_ANNOTATION];
}

/**
 * On a LedgerQuota or LimitRange object: the Kubernetes user who last created or updated it, stamped by our
 * mutating webhook from the review's userInfo (trusted only from the kube-apiserver's credential),
 * removed when it cannot be trusted, so that a user cannot name someone else.
 */
export { LAST_APPLIED_BY_ANNOTATION } from '../kube/annotations.js';
