import { assertDefinitionSize, clusterResourceQuotaSizeErrors, MANAGED_BY_ANNOTATION, MANAGED_BY_CLUSTER_QUOTA, validateClusterResourceQuota, type SharedQuotaDefinition } from '@quota/domain';
import type { ClusterQueries, ClusterWriter } from '@quota/ledger';
import type { ClusterObject, ClusterObjectApi } from './cluster-object-api.js';
import { DefinitionSync, ledgerMetadata, type DefinitionSyncOptions, type SyncedKind } from './definition-sync.js';

/** What the sync needs of the ledger: the shared-quota commands the REST PUT and DELETE run, and the ClusterResourceQuotas it holds. */
export type ClusterQuotaLedger = Pick<ClusterWriter, 'putSharedQuota' | 'deleteSharedQuota'> & Pick<ClusterQueries, 'listSharedQuotas'>;

/** How many ClusterResourceQuotas one pass reads back to find those whose object is gone (the REST list's bound). */
const HELD_MAX = 1000;

/**
 * LedgerClusterQuota objects (cluster-scoped) → the ledger's ClusterResourceQuotas of the same name
 * (ClusterWriter.putSharedQuota, the REST PUT's command), and the ledger's hard and used (the total
 * over the namespaces it covers) → their status. A ledger ClusterResourceQuota from one carries the
 * annotation quota-ledger.io/managed-by: ledgerclusterquotas.quota-ledger.io.
 */
export function clusterQuotaKind(ledger: ClusterQuotaLedger): SyncedKind {
  return {
    label: 'ledger cluster quotas',
    hasStatus: true,
    async put(object, author) {
      const result = await ledger.putSharedQuota(sharedQuotaOf(object), author);
      return { changed: result.changed, hard: result.view.hard, used: result.view.used };
    },
    async *held() {
      for (const view of await ledger.listSharedQuotas('clusterresourcequotas/', HELD_MAX)) {
        if (view.definition.metadata?.annotations?.[MANAGED_BY_ANNOTATION] === MANAGED_BY_CLUSTER_QUOTA) yield { namespace: '', name: view.definition.ref.name };
      }
    },
    remove: (_namespace, name, options) => ledger.deleteSharedQuota({ kind: 'ClusterResourceQuota', name }, options),
  };
}

/** The sync of LedgerClusterQuota objects. */
export class ClusterQuotaSync extends DefinitionSync {
  constructor(ledger: ClusterQuotaLedger, api: ClusterObjectApi, options: DefinitionSyncOptions = {}) {
    super(clusterQuotaKind(ledger), api, options);
  }
}

/** The object's spec as the ledger's ClusterResourceQuota, validated as the REST PUT validates one. */
export function sharedQuotaOf(object: ClusterObject): SharedQuotaDefinition {
  const { name } = object.metadata;
  const quota = validateClusterResourceQuota({ apiVersion: 'quota.openshift.io/v1', kind: 'ClusterResourceQuota', metadata: { name }, spec: object.spec ?? {} });
  assertDefinitionSize('ClusterResourceQuota', name, clusterResourceQuotaSizeErrors(quota));
  return { ref: { kind: 'ClusterResourceQuota', name }, spec: quota.spec.quota, selector: quota.spec.selector, metadata: ledgerMetadata(object, MANAGED_BY_CLUSTER_QUOTA) };
}
