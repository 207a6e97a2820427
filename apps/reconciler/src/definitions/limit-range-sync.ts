import { limitRangeForLedger, MANAGED_BY_LIMIT_RANGE, type LimitRangeDefinition } from '@quota/domain';
import type { DefinitionQueries, LedgerCommands } from '@quota/ledger';
import type { ClusterObject, ClusterObjectApi } from './cluster-object-api.js';
import { DefinitionSync, ledgerMetadata, type DefinitionSyncOptions, type SyncedKind } from './definition-sync.js';

/** What the sync needs of the ledger: the commands the REST PUT and DELETE of a LimitRange run, and the LimitRanges that came from the cluster. */
export type LimitRangeLedger = Pick<LedgerCommands, 'putLimitRange' | 'deleteLimitRange'> & Pick<DefinitionQueries, 'managedDefinitions'>;

/**
 * The cluster's own LimitRange objects (v1) → the ledger's LimitRanges (LedgerCommands.putLimitRange,
 * the REST PUT's command), which our webhooks default and check pods with. A LimitRange has no status
 * and no controller writes it: the object is only read. A ledger LimitRange from the cluster carries
 * the annotation quota-ledger.io/managed-by: limitranges.
 */
export function limitRangeKind(ledger: LimitRangeLedger): SyncedKind {
  return {
    label: 'limit ranges',
    hasStatus: false,
    async put(object, author) {
      return { changed: (await ledger.putLimitRange(object.metadata.namespace, limitRangeDefinitionOf(object), author)).changed };
    },
    held: () => ledger.managedDefinitions('limitRanges', MANAGED_BY_LIMIT_RANGE),
    remove: (namespace, name, options) => ledger.deleteLimitRange(namespace, name, options),
  };
}

/** The sync of the cluster's LimitRange objects. */
export class LimitRangeSync extends DefinitionSync {
  constructor(ledger: LimitRangeLedger, api: ClusterObjectApi, options: DefinitionSyncOptions = {}) {
    super(limitRangeKind(ledger), api, options);
  }
}

/** The object as the ledger's LimitRange: what the REST PUT would store of the same object. */
export function limitRangeDefinitionOf(object: ClusterObject): LimitRangeDefinition {
  const { name, namespace } = object.metadata;
  const { spec } = limitRangeForLedger({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name, namespace }, spec: object.spec ?? {} }, name);
  return { name, spec, metadata: ledgerMetadata(object, MANAGED_BY_LIMIT_RANGE) };
}
