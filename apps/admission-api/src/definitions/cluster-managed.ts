import { clusterManager } from '@quota/domain';
import { LedgerError } from '@quota/ledger';

type Stored = { readonly definition: { readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> } } } | undefined;

/**
 * A definition that came from a cluster object (a LedgerQuota, a LimitRange, a LedgerClusterQuota,
 * whose namespace is '') is the cluster's:
 * changed or deleted here, the reconciler's next sync would put the object's spec back, so the
 * write is refused (409) and the caller told where to make it. (Checked before the write, not in
 * its transaction: a sync between the two is the cluster's own write, and the next one settles it.)
 */
export function refuseClusterManaged(existing: Stored, resource: string, namespace: string, name: string, verb: 'changed' | 'deleted'): void {
  const manager = existing ? clusterManager(existing.definition.metadata) : undefined;
  if (manager === undefined) return;
  const where = namespace ? ` in namespace "${namespace}"` : '';
  throw new LedgerError(
    'Conflict',
    `Operation cannot be fulfilled on ${resource} "${name}": it is managed by the cluster object ${manager} "${name}"${where}; it can be ${verb} there (kubectl), not through this API`,
    { kind: resource, name },
  );
}

/** The annotations of ours (quota-ledger.io/...) are the system's: a REST write never stores them (nor claims a cluster object). */
export function withoutSystemAnnotations(annotations: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(annotations).filter(([key]) => !key.startsWith('quota-ledger.io/')));
}
