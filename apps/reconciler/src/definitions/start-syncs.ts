import type { ClusterQueries, ClusterWriter, DefinitionQueries, LedgerCommands } from '@quota/ledger';
import {
  createClusterObjectApi,
  LEDGER_CLUSTER_QUOTA,
  LEDGER_HIERARCHICAL_QUOTA,
  LEDGER_QUOTA,
  LIMIT_RANGE,
  type ClusterObjectApiOptions,
} from './cluster-object-api.js';
import { ClusterQuotaSync, HierarchicalQuotaSync, type ClusterQuotaLedger } from './cluster-quota-sync.js';
import type { DefinitionSync, DefinitionSyncOptions } from './definition-sync.js';
import { LedgerQuotaSync } from './ledger-quota-sync.js';
import { LimitRangeSync } from './limit-range-sync.js';

/**
 * The longest time between two passes of a definition sync: the objects' status shows the
 * ledger's used at most this old. Changes of the objects themselves are watched: each starts a
 * pass at once.
 */
export const DEFINITION_SYNC_MAX_SECONDS = 10;

/**
 * The syncs of every kind of definition the cluster holds (LedgerQuota objects, the cluster's
 * LimitRanges, LedgerClusterQuota and LedgerHierarchicalQuota objects): each watches its kind and
 * passes on every change, and every `intervalSeconds` besides (at most DEFINITION_SYNC_MAX_SECONDS).
 * Stop them with `stop()`.
 */
export function startDefinitionSyncs(
  {
    commands,
    definitions,
    writer,
    queries,
  }: { commands: LedgerCommands; definitions: DefinitionQueries; writer: ClusterWriter; queries: ClusterQueries },
  cluster: ClusterObjectApiOptions,
  intervalSeconds: number,
  options: DefinitionSyncOptions,
): { stop(): Promise<void> } {
  const managedDefinitions = definitions.managedDefinitions.bind(definitions);
  const shared: ClusterQuotaLedger = {
    putSharedQuota: writer.putSharedQuota.bind(writer),
    deleteSharedQuota: writer.deleteSharedQuota.bind(writer),
    listSharedQuotas: queries.listSharedQuotas.bind(queries),
  };
  const syncs: DefinitionSync[] = [
    new LedgerQuotaSync(
      { putQuota: commands.putQuota.bind(commands), deleteQuota: commands.deleteQuota.bind(commands), managedDefinitions },
      createClusterObjectApi(LEDGER_QUOTA, cluster),
      options,
    ),
    new LimitRangeSync(
      {
        putLimitRange: commands.putLimitRange.bind(commands),
        deleteLimitRange: commands.deleteLimitRange.bind(commands),
        managedDefinitions,
      },
      createClusterObjectApi(LIMIT_RANGE, cluster),
      options,
    ),
    new ClusterQuotaSync(shared, createClusterObjectApi(LEDGER_CLUSTER_QUOTA, cluster), options),
    new HierarchicalQuotaSync(shared, createClusterObjectApi(LEDGER_HIERARCHICAL_QUOTA, cluster), options),
  ];
  for (const sync of syncs) sync.start(Math.min(intervalSeconds, DEFINITION_SYNC_MAX_SECONDS) * 1000);
  return { stop: async () => void (await Promise.all(syncs.map((sync) => sync.stop()))) };
}
