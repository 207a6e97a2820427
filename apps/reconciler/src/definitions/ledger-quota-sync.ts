import { MANAGED_BY_CLUSTER, validateResourceQuota, type QuotaDefinition } from '@quota/domain';
import type { DefinitionQueries, LedgerCommands, QuotaView } from '@quota/ledger';
import { restBody, totalsOf } from './definition-object.js';
import { syncOf, type SyncedKind } from './definition-sync.js';

export { authorOf } from './definition-object.js';

/** What the sync needs of the ledger: the commands the REST PUT and DELETE run, and the quotas that came from the cluster. */
export type LedgerQuotaLedger = Pick<LedgerCommands, 'putQuota' | 'deleteQuota'> & Pick<DefinitionQueries, 'managedDefinitions'>;

/**
 * LedgerQuota objects → the ledger's quotas (LedgerCommands.putQuota, the REST PUT's command), and
 * the ledger's hard and used → their status. A ledger quota from a LedgerQuota carries the
 * annotation quota-ledger.io/managed-by: ledgerquotas.quota-ledger.io. Its spec is validated as the
 * REST PUT validates a ResourceQuota's.
 */
export function ledgerQuotaKind(ledger: LedgerQuotaLedger): SyncedKind<QuotaDefinition, QuotaView> {
  return {
    label: 'ledger quotas',
    managedBy: MANAGED_BY_CLUSTER,
    definitionOf(object, metadata) {
      const quota = validateResourceQuota(restBody(object, 'v1', 'ResourceQuota'));
      return { name: object.metadata.name, spec: quota.spec ?? {}, metadata };
    },
    put: (namespace, definition, author) => ledger.putQuota(namespace, definition, author),
    totals: totalsOf,
    held: (managedBy, namespace) => ledger.managedDefinitions('quotas', managedBy, namespace),
    remove: (namespace, name, options) => ledger.deleteQuota(namespace, name, options),
  };
}

/** The sync of LedgerQuota objects. */
export const LedgerQuotaSync = syncOf(ledgerQuotaKind);
