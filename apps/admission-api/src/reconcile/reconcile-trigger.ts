import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { ClusterWriter, LedgerCommands } from '@quota/ledger';
import {
  NAMESPACE_JOB,
  NAMESPACE_OBJECT_JOB,
  namespaceJobOptions,
  queueBackendOf,
  reconcileQueue,
  type NamespaceJobData,
} from '@quota/jobs';
import { withTimeout } from '@quota/ops';
import type { Queue } from 'bullmq';
import { APP_CONFIG } from '../config/app-config.module.js';

const ENQUEUE_TIMEOUT_MS = 2000;

/**
 * Reconciles a namespace sooner than the next interval: after an admitted DELETE (a delayed
 * job), so the deleted object's charge is released soon; and at once when a write made a
 * namespace await its first count (CountAwaited), since its quotas refuse what they would
 * charge until then. Best effort: the queue being down never fails or slows a request beyond a
 * short timeout; the interval reconcile catches up. The queue is opened on first use.
 */
@Injectable()
export class ReconcileTrigger implements OnApplicationShutdown {
  private readonly logger = new Logger(ReconcileTrigger.name);
  private queue: Queue<NamespaceJobData> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LedgerCommands) ledger: LedgerCommands,
    @Inject(ClusterWriter) cluster: ClusterWriter,
  ) {
    ledger.onCountAwaited((namespaces) => this.count(namespaces));
    cluster.onCountAwaited((namespaces) => this.count(namespaces));
  }

  /** The queue, opened on first use; undefined without a database (nothing to queue into). */
  private open(): Queue<NamespaceJobData> | undefined {
    const databaseUrl = this.config.databaseUrl;
    if (!databaseUrl) return undefined;
    this.queue ??= reconcileQueue(queueBackendOf(this.config.redisUrl, databaseUrl, { migrate: !this.config.databaseRuntimeRole }));
    return this.queue;
  }

  /** Jobs by state, for /metrics and /readyz; rejects when the queue's backend does not answer in time. */
  async depth(): Promise<Record<string, number>> {
    const queue = this.open();
    if (!queue) throw new Error('no queue: DATABASE_URL is not set');
    try {
      return await withTimeout(queue.getJobCounts('wait', 'delayed', 'active', 'failed'), ENQUEUE_TIMEOUT_MS);
    } catch (error) {
      // BullMQ's PostgreSQL backend remembers a failed first connection for good: open a new queue next time.
      if (this.queue === queue) this.queue = undefined;
      void queue.close().catch(() => undefined);
      throw error;
    }
  }

  afterDelete(namespace: string): void {
    this.queueOne(namespace, 'after-delete', this.config.reconcileAfterDeleteSeconds * 1000);
  }

  /** The first count of namespaces that now await it, queued at once. */
  count(namespaces: readonly string[]): void {
    for (const namespace of namespaces) this.queueOne(namespace, 'count', 0);
  }

  /**
   * A Namespace the webhook let through, read back from the cluster once it is stored (its
   * labels are the stored object's): after the same delay as a deletion's reconcile.
   */
  namespaceStored(namespace: string): void {
    this.queueOne(namespace, 'namespace-object', this.config.reconcileAfterDeleteSeconds * 1000, NAMESPACE_OBJECT_JOB);
  }

  private queueOne(namespace: string, reason: string, delay: number, job = NAMESPACE_JOB): void {
    const queue = this.open();
    if (!queue) return;
    const added = queue.add(job, { namespace, reason }, namespaceJobOptions(namespace, reason, { delayMs: delay }));
    withTimeout(added, ENQUEUE_TIMEOUT_MS).catch((error: unknown) =>
      this.logger.warn(
        `could not queue the reconcile (${reason}) of namespace ${namespace}: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue?.close();
  }
}
