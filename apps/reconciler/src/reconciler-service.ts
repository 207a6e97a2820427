import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { createInventorySource, type CacheState, type InventorySource } from '@quota/inventory';
import type { QueueBackend } from '@quota/jobs';
import { LEDGER_PARTS, type LedgerParts } from '@quota/ledger';
import { APP_CONFIG, startOpsServer, type OpsServer } from '@quota/ops';
import { cacheReadiness } from './cache-readiness.js';
import { createNamespaceMarker, createWebhookRulesReader } from './definitions/cluster-object-api.js';
import { startDefinitionSyncs } from './definitions/start-syncs.js';
import { CACHE_DELIVERY_MARGIN_MS } from './listing-time.js';
import { LABEL_PROPAGATION_MS, ManagedLabels } from './managed-labels.js';
import { reconcilerMetrics } from './metrics.js';
import { RECONCILE_QUEUE_BACKEND } from './reconcile-queue.provider.js';
import { Reconciler, type ReconcilerLedger } from './reconciler.js';
import { WEBHOOK_ROUTES_PERIOD_MAX_MS, WebhookRoutes } from './webhook-routes.js';

export const RECONCILER_LOG = Symbol('RECONCILER_LOG');
export type ReconcilerLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** What the reconciler reads and appends, from the ledger's parts. */
function reconcilerLedger({ commands, definitions, cluster, clusterQueries }: LedgerParts): ReconcilerLedger {
  return {
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
}

/** What the log says of the kind caches: a kind left uncovered for its RBAC (info, once per try), one over its ceiling (error). */
function cacheLog(log: ReconcilerLog): (state: CacheState) => void {
  return (state) => {
    if (state.state === 'forbidden')
      log('info', 'a discovered kind the reconciler may not list is left uncovered; tried again after the next discovery', {
        resource: state.resource,
      });
    else if (state.state === 'over-ceiling')
      log('error', "a kind's cache is over its ceiling: emptied, its listings fail closed (nothing released) until it fits", {
        resource: state.resource,
        error: state.error,
      });
  };
}

/** The check of the quotas' object counts against the registered ValidatingWebhookConfiguration's rules. */
function webhookRoutes(
  config: AppConfig,
  clusterAccess: Parameters<typeof createWebhookRulesReader>[0],
  definitions: LedgerParts['definitions'],
  log: ReconcilerLog,
): WebhookRoutes {
  const name = config.reconcileWebhookConfiguration;
  return new WebhookRoutes(
    name,
    { rules: createWebhookRulesReader(clusterAccess, name), counted: () => definitions.countedResources() },
    { periodMs: Math.min(config.reconcileIntervalSeconds * 1000, WEBHOOK_ROUTES_PERIOD_MAX_MS), log },
  );
}

/**
 * The reconciler's work in one provider: the every-namespace job scheduler and the namespace
 * jobs (Reconciler, on BullMQ), the definition syncs of LedgerQuota, LimitRange and
 * LedgerClusterQuota objects, and GET /metrics and /healthz on METRICS_PORT. It stops before the
 * ledger closes (beforeApplicationShutdown runs ahead of every module's onApplicationShutdown).
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private reconciler: Reconciler | undefined;
  private syncs: { stop(): Promise<void> } | undefined;
  private routes: WebhookRoutes | undefined;
  private ops: OpsServer | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LEDGER_PARTS) private readonly ledger: LedgerParts,
    @Inject(RECONCILE_QUEUE_BACKEND) private readonly backend: QueueBackend,
    @Inject(RECONCILER_LOG) private readonly log: ReconcilerLog,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { config, ledger, log } = this;
    const inventory = config.inventory;
    const source = createInventorySource(inventory.source === 'kubernetes' ? { ...inventory, onCacheState: cacheLog(log) } : inventory);
    const clusterAccess =
      inventory.source === 'kubernetes'
        ? {
            ...(inventory.kubeconfigPath ? { kubeconfigPath: inventory.kubeconfigPath } : {}),
            inCluster: inventory.inCluster,
            timeoutMs: inventory.timeoutMs,
          }
        : undefined;
    // The webhooks' default namespaceSelector sends only the namespaces labelled as managed.
    const readNamespace = source.namespace?.bind(source);
    const labels =
      clusterAccess && readNamespace && config.reconcileManagedLabel
        ? new ManagedLabels(
            { read: readNamespace, mark: createNamespaceMarker(clusterAccess) },
            // A listing from the caches is timed their delivery margin before now: the label's wait covers it too.
            {
              now: () => ledger.commands.now(),
              log,
              propagationMs: LABEL_PROPAGATION_MS + (source.cacheStates ? CACHE_DELIVERY_MARGIN_MS : 0),
            },
          )
        : undefined;
    const reconciler = new Reconciler(reconcilerLedger(ledger), source, this.backend, {
      intervalMs: config.reconcileIntervalSeconds * 1000,
      graceMs: config.reconcileGraceSeconds * 1000,
      concurrency: config.reconcileConcurrency,
      watch: config.reconcileWatch,
      ...(labels ? { labels } : {}),
      log,
    });
    this.reconciler = reconciler;
    // A namespace made managed here awaits its first count, which is queued at once: by a shared quota
    // the cluster's labels put it under, or by a LedgerQuota or LimitRange the definition syncs put into
    // the ledger (without the second, a LedgerQuota applied with kubectl to a namespace left its
    // admissions refused, "status unknown", until the next periodic pass: up to 600 s when watching).
    // From a watch-fed cache, a listing is timed its delivery margin before now: the count waits for it to cover the namespace's start.
    const countDelayMs = source.cacheStates ? CACHE_DELIVERY_MARGIN_MS + 100 : 0;
    const countAtOnce = (namespaces: readonly string[]): void => {
      for (const namespace of namespaces)
        void reconciler
          .enqueue(namespace, 'count', countDelayMs)
          .catch((error: unknown) => log('warn', 'first count not queued', { namespace, error: (error as Error).message }));
    };
    ledger.cluster.onCountAwaited(countAtOnce);
    ledger.commands.onCountAwaited(countAtOnce);
    await reconciler.start();
    // LedgerQuota, LimitRange and LedgerClusterQuota objects (applied with kubectl) into the ledger, and the ledger's usage into the quotas' status.
    const { commands, definitions, cluster, clusterQueries } = ledger;
    this.syncs = clusterAccess
      ? startDefinitionSyncs(
          { commands, definitions, writer: cluster, queries: clusterQueries },
          clusterAccess,
          config.reconcileIntervalSeconds,
          { log },
        )
      : undefined;
    // The quotas' object counts against the registered webhook's rules (a stale registration leaves some counted only after the fact).
    this.routes = clusterAccess ? webhookRoutes(config, clusterAccess, definitions, log) : undefined;
    this.routes?.start();
    log('info', 'reconciling', {
      queue: this.backend.kind,
      inventory: inventory.source,
      intervalSeconds: config.reconcileIntervalSeconds,
      graceSeconds: config.reconcileGraceSeconds,
      watch: reconciler.watches,
      managedLabel: labels !== undefined,
    });
    this.ops = await this.startOps(reconciler, source);
    if (this.ops) log('info', 'GET /metrics, /healthz and /readyz', { port: this.ops.port });
  }

  /** GET /metrics, /healthz and /readyz on METRICS_PORT (none when it is 0). */
  private async startOps(reconciler: Reconciler, source: InventorySource): Promise<OpsServer | undefined> {
    const { config } = this;
    if (!config.metricsPort) return undefined;
    return startOpsServer({
      port: config.metricsPort,
      host: config.host,
      registry: reconcilerMetrics(reconciler, source.cacheStates?.bind(source), this.routes),
      healthy: () => true,
      readiness: () => {
        const { ready, detail } = cacheReadiness(source.cacheStates?.());
        return { ready, detail: { ...detail, ...this.routes?.readinessDetail() } };
      },
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.log('info', 'finishing the jobs in hand', { ...this.reconciler?.stats });
    await this.syncs?.stop();
    this.routes?.stop();
    await this.reconciler?.stop();
    await this.ops?.close();
  }
}
