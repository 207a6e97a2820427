import {
  assertDefinitionSize,
  clusterResourceQuotaSizeErrors,
  MANAGED_BY_ANNOTATION,
  MANAGED_BY_CLUSTER_QUOTA,
  MANAGED_BY_HIERARCHICAL_QUOTA,
  resourceQuotaSizeErrors,
  validateClusterResourceQuota,
  validateHierarchicalResourceQuota,
  type SharedQuotaDefinition,
  type SharedQuotaRef,
} from '@quota/domain';
import type { ClusterQueries, ClusterWriter, SharedQuotaView } from '@quota/ledger';
import type { ClusterObject } from './cluster-object-api.js';
import { restBody, totalsOf, type LedgerMetadata } from './definition-object.js';
import { syncOf, type SyncedKind } from './definition-sync.js';

/** What the sync needs of the ledger: the shared-quota commands the REST PUT and DELETE run, and the ClusterResourceQuotas it holds. */
export type ClusterQuotaLedger = Pick<ClusterWriter, 'putSharedQuota' | 'deleteSharedQuota'> & Pick<ClusterQueries, 'listSharedQuotas'>;

/** How many ClusterResourceQuotas one pass reads back to find those whose object is gone (the REST list's bound). */
const HELD_MAX = 1000;

/** One kind of shared-quota object, as data: which ledger shared quotas it becomes (their key prefix, their ref). */
type SharedQuotaObjects = Pick<SyncedKind<SharedQuotaDefinition, SharedQuotaView>, 'label' | 'managedBy' | 'definitionOf'> & {
  readonly prefix: string;
  refOf(namespace: string, name: string): SharedQuotaRef;
};

const LEDGER_CLUSTER_QUOTAS: SharedQuotaObjects = {
  label: 'ledger cluster quotas',
  managedBy: MANAGED_BY_CLUSTER_QUOTA,
  prefix: 'clusterresourcequotas/',
  definitionOf: sharedQuotaOf,
  refOf: (_cluster, name) => ({ kind: 'ClusterResourceQuota', name }),
};

const LEDGER_HIERARCHICAL_QUOTAS: SharedQuotaObjects = {
  label: 'ledger hierarchical quotas',
  managedBy: MANAGED_BY_HIERARCHICAL_QUOTA,
  prefix: 'hierarchicalresourcequotas/',
  definitionOf: hierarchicalQuotaOf,
  refOf: (namespace, name) => ({ kind: 'HierarchicalResourceQuota', name, namespace }),
};

/**
 * LedgerClusterQuota objects (cluster-scoped) → the ledger's ClusterResourceQuotas of the same name,
 * and LedgerHierarchicalQuota objects → its HierarchicalResourceQuotas of the same namespace and name
 * (ClusterWriter.putSharedQuota, the REST PUT's command); the ledger's hard and used (the total over
 * the namespaces it covers) → their status. A ledger shared quota from one carries the annotation
 * quota-ledger.io/managed-by: ledgerclusterquotas.quota-ledger.io (ledgerhierarchicalquotas...).
 */
function sharedQuotaKind(
  ledger: ClusterQuotaLedger,
  { label, managedBy, prefix, definitionOf, refOf }: SharedQuotaObjects,
): SyncedKind<SharedQuotaDefinition, SharedQuotaView> {
  return {
    label,
    managedBy,
    definitionOf,
    put: (_namespace, definition, author) => ledger.putSharedQuota(definition, author),
    totals: totalsOf,
    async held(managedBy) {
      const views = await ledger.listSharedQuotas(prefix, HELD_MAX);
      return views
        .filter((view) => view.definition.metadata?.annotations?.[MANAGED_BY_ANNOTATION] === managedBy)
        .map((view) => ({ namespace: view.definition.ref.namespace ?? '', name: view.definition.ref.name }));
    },
    remove: (namespace, name, options) => ledger.deleteSharedQuota(refOf(namespace, name), options),
  };
}

/** The sync of LedgerClusterQuota objects. */
export const ClusterQuotaSync = syncOf((ledger: ClusterQuotaLedger) => sharedQuotaKind(ledger, LEDGER_CLUSTER_QUOTAS));

/** The sync of LedgerHierarchicalQuota objects. */
export const HierarchicalQuotaSync = syncOf((ledger: ClusterQuotaLedger) => sharedQuotaKind(ledger, LEDGER_HIERARCHICAL_QUOTAS));

/** The object's spec as the ledger's ClusterResourceQuota, validated as the REST PUT validates one. */
export function sharedQuotaOf(object: ClusterObject, metadata: LedgerMetadata): SharedQuotaDefinition {
  const { name } = object.metadata;
  const quota = validateClusterResourceQuota(restBody(object, 'quota.openshift.io/v1', 'ClusterResourceQuota'));
  assertDefinitionSize('ClusterResourceQuota', name, clusterResourceQuotaSizeErrors(quota));
  return { ref: { kind: 'ClusterResourceQuota', name }, spec: quota.spec.quota, selector: quota.spec.selector, metadata };
}

/** The object's spec as the ledger's HierarchicalResourceQuota (in its namespace, over its subtree), validated as the REST PUT validates one. */
export function hierarchicalQuotaOf(object: ClusterObject, metadata: LedgerMetadata): SharedQuotaDefinition {
  const { name, namespace } = object.metadata;
  const quota = validateHierarchicalResourceQuota(restBody(object, 'hnc.x-k8s.io/v1alpha2', 'HierarchicalResourceQuota'));
  assertDefinitionSize('HierarchicalResourceQuota', name, resourceQuotaSizeErrors({ spec: quota.spec }));
  return { ref: { kind: 'HierarchicalResourceQuota', name, namespace }, spec: { hard: quota.spec.hard ?? {} }, metadata };
}
