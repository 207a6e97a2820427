import { limitRangeForLedger, MANAGED_BY_LIMIT_RANGE, type LimitRangeDefinition } from '@quota/domain';
import type { DefinitionQueries, LedgerCommands, LimitRangeView } from '@quota/ledger';
import { restBody } from './definition-object.js';
import { syncOf, type SyncedKind } from './definition-sync.js';

/** What the sync needs of the ledger: the commands the REST PUT and DELETE of a LimitRange run, and the LimitRanges that came from the cluster. */
export type LimitRangeLedger = Pick<LedgerCommands, 'putLimitRange' | 'deleteLimitRange'> & Pick<DefinitionQueries, 'managedDefinitions'>;

/**
 * The cluster's own LimitRange objects (v1) → the ledger's LimitRanges (LedgerCommands.putLimitRange,
 * the REST PUT's command, storing what it would store of the same object), which our webhooks
 * default and check pods with. A LimitRange has no status and no controller writes it: the object
 * is only read. A ledger LimitRange from the cluster carries the annotation
 * quota-ledger.io/managed-by: limitranges.
 */
export function limitRangeKind(ledger: LimitRangeLedger): SyncedKind<LimitRangeDefinition, LimitRangeView> {
  return {
    label: 'limit ranges',
    managedBy: MANAGED_BY_LIMIT_RANGE,
    definitionOf(object, metadata) {
      const { name } = object.metadata;
      return { name, spec: limitRangeForLedger(restBody(object, 'v1', 'LimitRange'), name).spec, metadata };
    },
    put: (namespace, definition, author) => ledger.putLimitRange(namespace, definition, author),
    held: (managedBy, namespace) => ledger.managedDefinitions('limitRanges', managedBy, namespace),
    remove: (namespace, name, options) => ledger.deleteLimitRange(namespace, name, options),
  };
}

/** The sync of the cluster's LimitRange objects. */
export const LimitRangeSync = syncOf(limitRangeKind);
