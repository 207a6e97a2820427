import { MANAGED_BY_CLUSTER, validateResourceQuota, type QuotaDefinition } from '@quota/domain';
import type { DefinitionQueries, LedgerCommands } from '@quota/ledger';
import type { ClusterObject, ClusterObjectApi } from './cluster-object-api.js';
import { DefinitionSync, ledgerMetadata, type DefinitionSyncOptions, type SyncedKind } from './definition-sync.js';

export { authorOf } from './definition-sync.js';

/** What the sync needs of the ledger: the commands the REST PUT and DELETE run, and the quotas that came from the cluster. */
export type LedgerQuotaLedger = Pick<LedgerCommands, 'putQuota' | 'deleteQuota'> & Pick<DefinitionQueries, 'managedDefinitions'>;

/**
 * LedgerQuota objects → the ledger's quotas (LedgerCommands.putQuota, the REST PUT's command), and
 * the ledger's hard and used → their status. A ledger quota from a LedgerQuota carries the
 * annotation quota-ledger.io/managed-by: ledgerquotas.quota-ledger.io.
 */
export function ledgerQuotaKind(ledger: LedgerQuotaLedger): SyncedKind {
  return {
    label: 'ledger quotas',
    hasStatus: true,
    async put(object, author) {
      const result = await ledger.putQuota(object.metadata.namespace, definitionOf(object), author);
      return { changed: result.changed, hard: result.view.hard, used: result.view.used };
    },
    held: () => ledger.managedDefinitions('quotas', MANAGED_BY_CLUSTER),
    remove: (namespace, name, options) => ledger.deleteQuota(namespace, name, options),
  };
}

/** The sync of LedgerQuota objects. */
export class LedgerQuotaSync extends DefinitionSync {
  constructor(ledger: LedgerQuotaLedger, api: ClusterObjectApi, options: DefinitionSyncOptions = {}) {
    super(ledgerQuotaKind(ledger), api, options);
  }
}

/** The object's spec as the ledger's quota definition, validated as the REST PUT validates a ResourceQuota. */
export function definitionOf(object: ClusterObject): QuotaDefinition {
  const { name, namespace } = object.metadata;
  const quota = validateResourceQuota({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace }, spec: object.spec ?? {} });
  return { name, spec: quota.spec ?? {}, metadata: ledgerMetadata(object, MANAGED_BY_CLUSTER) };
}
