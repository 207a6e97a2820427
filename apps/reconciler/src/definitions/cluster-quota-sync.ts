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
} from '@quota/domain';
import type { ClusterQueries, ClusterWriter } from '@quota/ledger';
import type { ClusterObject, ClusterObjectApi } from './cluster-object-api.js';
import { DefinitionSync, ledgerMetadata, type DefinitionSyncOptions, type SyncedKind } from './definition-sync.js';

/** What the sync needs of the ledger: the shared-quota commands the REST PUT and DELETE run, and the ClusterResourceQuotas it holds. */
export type ClusterQuotaLedger = Pick<ClusterWriter, 'putSharedQuota' | 'deleteSharedQuota'> & Pick<ClusterQueries, 'listSharedQuotas'>;

/** How many ClusterResourceQuotas one pass reads back to find those whose object is gone (the REST list's bound). */
const HELD_MAX = 1000;

/**
 * LedgerClusterQuota objects (cluster-scoped) → the ledger's ClusterResourceQuotas of the same name,
 * and LedgerHierarchicalQuota objects → its HierarchicalResourceQuotas of the same namespace and name
 * (ClusterWriter.putSharedQuota, the REST PUT's command); the ledger's hard and used (the total over
 * the namespaces it covers) → their status. A ledger shared quota from one carries the annotation
 * quota-ledger.io/managed-by: ledgerclusterquotas.quota-ledger.io (ledgerhierarchicalquotas...).
 */
function sharedQuotaKind(ledger: ClusterQuotaLedger, kind: 'ClusterResourceQuota' | 'HierarchicalResourceQuota'): SyncedKind {
  const cluster = kind === 'ClusterResourceQuota';
  const managedBy = cluster ? MANAGED_BY_CLUSTER_QUOTA : MANAGED_BY_HIERARCHICAL_QUOTA;
  return {
    label: cluster ? 'ledger cluster quotas' : 'ledger hierarchical quotas',
    hasStatus: true,
    async put(object, author) {
      const result = await ledger.putSharedQuota(cluster ? sharedQuotaOf(object) : hierarchicalQuotaOf(object), author);
      return { changed: result.changed, hard: result.view.hard, used: result.view.used };
    },
    async held() {
      const views = await ledger.listSharedQuotas(cluster ? 'clusterresourcequotas/' : 'hierarchicalresourcequotas/', HELD_MAX);
      return views
        .filter((view) => view.definition.metadata?.annotations?.[MANAGED_BY_ANNOTATION] === managedBy)
        .map((view) => ({ namespace: view.definition.ref.namespace ?? '', name: view.definition.ref.name }));
    },
    remove: (namespace, name, options) => ledger.deleteSharedQuota(cluster ? { kind, name } : { kind, name, namespace }, options),
  };
}

export const clusterQuotaKind = (ledger: ClusterQuotaLedger): SyncedKind => sharedQuotaKind(ledger, 'ClusterResourceQuota');
export const hierarchicalQuotaKind = (ledger: ClusterQuotaLedger): SyncedKind => sharedQuotaKind(ledger, 'HierarchicalResourceQuota');

/** The sync of LedgerClusterQuota objects. */
export class ClusterQuotaSync extends DefinitionSync {
  constructor(ledger: ClusterQuotaLedger, api: ClusterObjectApi, options: DefinitionSyncOptions = {}) {
    super(clusterQuotaKind(ledger), api, options);
  }
}

/** The sync of LedgerHierarchicalQuota objects. */
export class HierarchicalQuotaSync extends DefinitionSync {
  constructor(ledger: ClusterQuotaLedger, api: ClusterObjectApi, options: DefinitionSyncOptions = {}) {
    super(hierarchicalQuotaKind(ledger), api, options);
  }
}

/** The object's spec as the ledger's ClusterResourceQuota, validated as the REST PUT validates one. */
export function sharedQuotaOf(object: ClusterObject): SharedQuotaDefinition {
  const { name } = object.metadata;
  const quota = validateClusterResourceQuota({ apiVersion: 'quota.openshift.io/v1', kind: 'ClusterResourceQuota', metadata: { name }, spec: object.spec ?? {} });
  assertDefinitionSize('ClusterResourceQuota', name, clusterResourceQuotaSizeErrors(quota));
  return { ref: { kind: 'ClusterResourceQuota', name }, spec: quota.spec.quota, selector: quota.spec.selector, metadata: ledgerMetadata(object, MANAGED_BY_CLUSTER_QUOTA) };
}

/** The object's spec as the ledger's HierarchicalResourceQuota (in its namespace, over its subtree), validated as the REST PUT validates one. */
export function hierarchicalQuotaOf(object: ClusterObject): SharedQuotaDefinition {
  const { name, namespace } = object.metadata;
  const quota = validateHierarchicalResourceQuota({ apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'HierarchicalResourceQuota', metadata: { name, namespace }, spec: object.spec ?? {} });
  assertDefinitionSize('HierarchicalResourceQuota', name, resourceQuotaSizeErrors({ spec: quota.spec }));
  return { ref: { kind: 'HierarchicalResourceQuota', name, namespace }, spec: { hard: quota.spec.hard ?? {} }, metadata: ledgerMetadata(object, MANAGED_BY_HIERARCHICAL_QUOTA) };
}
