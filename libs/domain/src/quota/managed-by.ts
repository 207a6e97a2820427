/**
 * On a ledger quota copied from a LedgerQuota object (quota-ledger.io/v1alpha1): the cluster object
 * is its source of truth. The reconciler sets it; the REST admin API refuses to change or delete
 * such a quota (409), since the next sync would put the object's spec back.
 */
export const MANAGED_BY_ANNOTATION = 'quota-ledger.io/managed-by';
export const MANAGED_BY_CLUSTER = 'ledgerquotas.quota-ledger.io';

/** Whether a quota definition's metadata says it came from a LedgerQuota object. */
export function managedByCluster(metadata: { readonly annotations?: Readonly<Record<string, string>> } | undefined): boolean {
  return metadata?.annotations?.[MANAGED_BY_ANNOTATION] === MANAGED_BY_CLUSTER;
}

/**
 * On a LedgerQuota object: the Kubernetes user who last created or updated it, stamped by our
 * mutating webhook from the review's userInfo (trusted only from the kube-apiserver's credential),
 * removed when it cannot be trusted, so that a user cannot name someone else.
 */
export const LAST_APPLIED_BY_ANNOTATION = 'quota-ledger.io/last-applied-by';
