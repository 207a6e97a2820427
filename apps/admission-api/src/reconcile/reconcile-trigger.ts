import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { NAMESPACE_JOB, namespaceJobOptions, queueBackendOf, reconcileQueue, type NamespaceJobData } from '@quota/jobs';
import { withTimeout } from '@quota/ops';
import type { Queue } from 'bullmq';
import { APP_CONFIG } from '../config/app-config.module.js';

const ENQUEUE_TIMEOUT_MS = 2000;

/**
 * After an admitted DELETE, the namespace is reconciled promptly (a delayed job) instead of
 * at the next interval, so the deleted object's charge is released soon. Best effort: the
 * queue being down never fails or slows an admission beyond a short timeout; the interval
 * reconcile catches up. The queue is opened on first use.
 */
@Injectable()
export class ReconcileTrigger implements OnApplicationShutdown {
  private readonly logger = new Logger(ReconcileTrigger.name);
  private queue: Queue<NamespaceJobData> | undefined;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** The queue, opened on first use; undefined without a database (nothing to queue into). */
  private open(): Queue<NamespaceJobData> | undefined {
    const databaseUrl = this.config.databaseUrl;
    if (!databaseUrl) return undefined;
    this.queue ??= reconcileQueue(queueBackendOf(this.config.redisUrl, databaseUrl));
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
    const queue = this.open();
    if (!queue) return;
    const added = queue.add(NAMESPACE_JOB, { namespace, reason: 'after-delete' }, namespaceJobOptions(namespace, 'after-delete', { delayMs: this.config.reconcileAfterDeleteSeconds * 1000 }));
    withTimeout(added, ENQUEUE_TIMEOUT_MS).catch((error: unknown) =>
      this.logger.warn(`could not queue the reconcile of namespace ${namespace} after a delete: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue?.close();
  }
}
