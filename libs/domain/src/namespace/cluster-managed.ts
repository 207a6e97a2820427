import { clusterManager } from '../quota/managed-by.js';
import { refusal, type Refusal } from './answers.js';

/**
 * A write of the REST admin API (a command with `unmanagedOnly`) to a definition that came from a
 * cluster object (a LedgerQuota, a LimitRange, a LedgerClusterQuota, a LedgerHierarchicalQuota):
 * the cluster object is its source of truth, and the reconciler's next sync would put the object's
 * spec back, so the write is refused (409) and the caller told where to make it. Decided on the
 * state the write's own transaction read, so no sync can slip in between the check and the write.
 */
export function clusterManagedRefusal(
  command: { readonly unmanagedOnly?: boolean },
  metadata: Parameters<typeof clusterManager>[0],
  target: { readonly resource: string; readonly namespace: string; readonly name: string; readonly verb: 'changed' | 'deleted' },
): Refusal | undefined {
  if (!command.unmanagedOnly) return undefined;
  const manager = clusterManager(metadata);
  if (manager === undefined) return undefined;
  const { resource, namespace, name, verb } = target;
  const where = namespace ? ` in namespace "${namespace}"` : '';
  return refusal(
    'Conflict',
    `Operation cannot be fulfilled on ${resource} "${name}": it is managed by the cluster object ${manager} "${name}"${where}; it can be ${verb} there (kubectl), not through this API`,
    resource,
    name,
  );
}
