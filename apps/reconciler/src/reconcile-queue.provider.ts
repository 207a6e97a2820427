import type { Provider } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { queueBackendOf, type QueueBackend } from '@quota/jobs';
import { APP_CONFIG } from '@quota/ops';

/** The reconcile queue's backend, for the reconciler's Queue and Worker (reconciler.ts). */
export const RECONCILE_QUEUE_BACKEND = Symbol('RECONCILE_QUEUE_BACKEND');

/**
 * BullMQ on Redis when REDIS_URL is set, else BullMQ's PostgreSQL backend in the ledger's
 * database. This one provider, and not @nestjs/bullmq's BullModule with @Processor/WorkerHost:
 * @nestjs/bullmq 12.0.0 makes every Queue and Worker as `new Queue(name, options)` /
 * `new Worker(name, processor, options)` (its bull.providers.js and bull.explorer.js), and BullMQ
 * 6's PostgreSQL backend, the embedded default that needs no Redis, is the constructors' third
 * argument (createPostgresBackend). Through BullModule the PostgreSQL default could not run.
 */
export const reconcileQueueBackend: Provider = {
  provide: RECONCILE_QUEUE_BACKEND,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig): QueueBackend =>
    queueBackendOf(config.redisUrl, config.databaseUrl ?? '', { migrate: !config.databaseRuntimeRole }),
};
