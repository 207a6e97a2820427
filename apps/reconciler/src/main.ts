import 'reflect-metadata';
import { loadConfig } from '@quota/config';
import { createInventorySource } from '@quota/inventory';
import { queueBackendOf } from '@quota/jobs';
import { ClusterQueries, ClusterWriter, DefinitionQueries, LedgerCommands, openDataSource } from '@quota/ledger';
import { createLogger, leaveWithSupervisor, onShutdown, startOpsServer } from '@quota/ops';
import { createNamespaceMarker } from './definitions/cluster-object-api.js';
import { startDefinitionSyncs } from './definitions/start-syncs.js';
import { ManagedLabels } from './managed-labels.js';
import { reconcilerMetrics } from './metrics.js';
import { Reconciler } from './reconciler.js';

/**
 * The reconciler process: registers the every-namespace job scheduler (idempotent; any
 * number of replicas), works namespace jobs, and appends commit / release / adopt events.
 * BullMQ runs on REDIS_URL when set, else on BullMQ's PostgreSQL backend in the ledger's
 * database.
 */
const config = loadConfig();
const logger = createLogger(config.logLevel, 'reconciler');
leaveWithSupervisor((message) => logger.warn(message));
if (!config.databaseUrl) {
  logger.fatal('DATABASE_URL is not set: the reconciler needs the ledger database');
  process.exit(2);
}
const log = (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void => logger[level](fields, msg);

const dataSource = await openDataSource({
  url: config.databaseUrl,
  poolSize: Math.max(2, config.reconcileConcurrency),
  applicationName: 'quota-ledger-reconciler',
  statementTimeoutMs: config.statementTimeoutMs,
});
const commands = new LedgerCommands(dataSource, {
  retryMax: config.admissionRetryMax,
  awaitFirstCount: config.awaitFirstCount,
  // Its releases drain the queue too: with the API's policy.
  queuePolicy: { passMax: config.queue.passMax, passMs: config.queue.passSeconds * 1000, perNamespaceMax: config.queue.perNamespaceMax, blockSharePercent: config.queue.blockSharePercent },
});
const definitions = new DefinitionQueries(dataSource);
const cluster = new ClusterWriter(dataSource, { sharedQuotaNamespacesMax: config.sharedQuotaNamespacesMax, awaitFirstCount: config.awaitFirstCount });
const clusterQueries = new ClusterQueries(dataSource);
const ledger = {
  now: () => commands.now(),
  reconcile: commands.reconcile.bind(commands),
  namespaces: definitions.namespaces.bind(definitions),
  namespaceManaged: definitions.namespaceManaged.bind(definitions),
  managedNamespaces: definitions.managedNamespaces.bind(definitions),
  awaitingFirstCount: definitions.awaitingFirstCount.bind(definitions),
  putNamespace: cluster.putNamespace.bind(cluster),
  deleteNamespace: cluster.deleteNamespace.bind(cluster),
  namespaceObjects: clusterQueries.namespaceObjects.bind(clusterQueries),
};
const backend = queueBackendOf(config.redisUrl, config.databaseUrl, { migrate: !config.databaseRuntimeRole });
const inventory = config.inventory;
const source = createInventorySource(inventory);
const clusterAccess =
  inventory.source === 'kubernetes' ? { ...(inventory.kubeconfigPath ? { kubeconfigPath: inventory.kubeconfigPath } : {}), inCluster: inventory.inCluster, timeoutMs: inventory.timeoutMs } : undefined;
// The webhooks' default namespaceSelector sends only the namespaces labelled as managed.
const readNamespace = source.namespace?.bind(source);
const labels =
  clusterAccess && readNamespace && config.reconcileManagedLabel
    ? new ManagedLabels({ read: readNamespace, mark: createNamespaceMarker(clusterAccess) }, { now: () => commands.now(), log })
    : undefined;
const reconciler = new Reconciler(ledger, source, backend, {
  intervalMs: config.reconcileIntervalSeconds * 1000,
  graceMs: config.reconcileGraceSeconds * 1000,
  concurrency: config.reconcileConcurrency,
  watch: config.reconcileWatch,
  ...(labels ? { labels } : {}),
  log,
});
// A namespace made managed here awaits its first count, which is queued at once: by a shared quota
// the cluster's labels put it under, or by a LedgerQuota or LimitRange the definition syncs put into
// the ledger (without the second, a LedgerQuota applied with kubectl to a namespace left its
// admissions refused, "status unknown", until the next periodic pass: up to 600 s when watching).
const countAtOnce = (namespaces: readonly string[]): void => {
  for (const namespace of namespaces) void reconciler.enqueue(namespace, 'count').catch((error: unknown) => log('warn', 'first count not queued', { namespace, error: (error as Error).message }));
};
cluster.onCountAwaited(countAtOnce);
commands.onCountAwaited(countAtOnce);
await reconciler.start();
// LedgerQuota, LimitRange and LedgerClusterQuota objects (applied with kubectl) into the ledger, and the ledger's usage into the quotas' status.
const clusterDefinitions = clusterAccess
  ? startDefinitionSyncs({ commands, definitions, writer: cluster, queries: clusterQueries }, clusterAccess, config.reconcileIntervalSeconds, { log })
  : undefined;
log('info', 'reconciling', {
  queue: backend.kind,
  inventory: config.inventory.source,
  intervalSeconds: config.reconcileIntervalSeconds,
  graceSeconds: config.reconcileGraceSeconds,
  watch: reconciler.watches,
  managedLabel: labels !== undefined,
});

const ops = config.metricsPort ? await startOpsServer({ port: config.metricsPort, host: config.host, registry: reconcilerMetrics(reconciler), healthy: () => true }) : undefined;
if (ops) log('info', 'GET /metrics and /healthz', { port: ops.port });

onShutdown(
  async () => {
    log('info', 'finishing the jobs in hand', { ...reconciler.stats });
    await clusterDefinitions?.stop();
    await reconciler.stop();
    await ops?.close();
    await commands.close();
    await cluster.close();
    await dataSource.destroy();
  },
  { timeoutMs: config.shutdownTimeoutMs, logger },
);
