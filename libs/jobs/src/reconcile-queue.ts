import { createPostgresBackend, Queue, runMigrations, type JobsOptions, type QueueOptions, type RedisOptions } from 'bullmq';
import type pg from 'pg';

/**
 * The reconcile queue as every process sees it: its name, its jobs, and how to reach its
 * backend. Production runs BullMQ on Redis (REDIS_URL); the embedded default runs BullMQ's
 * PostgreSQL backend in the ledger's own database (schema `bullmq`), so a machine with only
 * PostgreSQL needs nothing else.
 */
export const RECONCILE_QUEUE = 'quota-ledger-reconcile';

/** The scheduler's repeating job: fans out one `namespace` job per namespace. */
export const FAN_OUT_JOB = 'fan-out';
export const NAMESPACE_JOB = 'namespace';
/** One Namespace object read again from the cluster (after a review of it): its labels choose the shared quotas covering it. */
export const NAMESPACE_OBJECT_JOB = 'namespace-object';
export const SCHEDULER_ID = 'reconcile-every-namespace';

export interface NamespaceJobData {
  readonly namespace: string;
  /** Why it was queued: `interval`, `after-delete`, ... */
  readonly reason: string;
}

export type QueueBackend =
  /** `prefix` namespaces the keys (default `bull`): one Redis can serve several deployments. */
  | { readonly kind: 'redis'; readonly url: string; readonly prefix?: string }
  /**
   * `migrate` (default true): BullMQ makes and migrates its tables at connect. False where the
   * process's role may not create a schema (DATABASE_RUNTIME_ROLE: `npm run migrate` does it,
   * migrateQueueSchema).
   */
  | { readonly kind: 'postgres'; readonly url: string; readonly schema?: string; readonly migrate?: boolean };

/** The schema of BullMQ's PostgreSQL backend in the ledger's database. */
export const QUEUE_SCHEMA = 'bullmq';

/** Redis when a URL is given, else BullMQ's PostgreSQL backend on the ledger's database (`migrate` as above). */
export function queueBackendOf(
  redisUrl: string | undefined,
  databaseUrl: string,
  options: { readonly migrate?: boolean } = {},
): QueueBackend {
  return redisUrl
    ? { kind: 'redis', url: redisUrl }
    : { kind: 'postgres', url: databaseUrl, ...(options.migrate === false ? { migrate: false } : {}) };
}

/**
 * BullMQ's schema on PostgreSQL made or migrated by `npm run migrate`, on its connection (the
 * owner's), for apps that connect as a role that runs no DDL: BullMQ's own migration starts with
 * CREATE SCHEMA IF NOT EXISTS, which needs CREATE on the database even when the schema exists.
 */
export async function migrateQueueSchema(client: pg.ClientBase): Promise<void> {
  await runMigrations(client as never, QUEUE_SCHEMA);
}

/** Reasons whose jobs are their own: one delayed after a DELETE review, and the Namespace object's sync (another job). */
const OWN_JOB_REASONS: ReadonlySet<string> = new Set(['after-delete', 'namespace-object']);

/**
 * The deduplication id of a namespace's job (Queue.getDeduplicationJobId finds the pending one).
 * A settle queued at once is one job per namespace whatever queued it (the interval's fan-out, a
 * first count): the same settle, so a namespace waiting for one is not settled twice. A settle
 * delayed after a DELETE review, and the Namespace object's sync, keep ids of their own.
 */
export const namespaceDeduplicationId = (namespace: string, reason: string): string =>
  `${OWN_JOB_REASONS.has(reason) ? reason : 'settle'}.${namespace}`;

/** Attempts of a namespace job whose listing failed, and the first retry's delay (doubled at each). */
export const NAMESPACE_JOB_ATTEMPTS = 3;
export const NAMESPACE_JOB_RETRY_DELAY_MS = 1000;

/**
 * A namespace job's options: one job per namespace and purpose (namespaceDeduplicationId),
 * whatever the number of producers. BullMQ's deduplication keeps that one job while it is delayed, waiting, running or
 * waiting for a retry, and forgets it once the job completes or fails for good, so the next
 * fan-out queues the namespace again whatever happened to its last job. A fixed `jobId` did the
 * opposite: a job that failed every attempt kept its id in the failed set (removeOnFail), and
 * every later add of that id was a no-op, so the namespace was never reconciled again.
 */
export function namespaceJobOptions(
  namespace: string,
  reason: string,
  options: { delayMs?: number; attempts?: number; retryDelayMs?: number } = {},
): JobsOptions {
  return {
    deduplication: { id: namespaceDeduplicationId(namespace, reason) },
    delay: options.delayMs ?? 0,
    attempts: options.attempts ?? NAMESPACE_JOB_ATTEMPTS,
    backoff: { type: 'exponential', delay: options.retryDelayMs ?? NAMESPACE_JOB_RETRY_DELAY_MS },
    removeOnComplete: true,
    // Kept for a look (and the queue's `failed` gauge); they no longer stand in the way of a new job.
    removeOnFail: 100,
  };
}

/** Constructor arguments for a Queue or Worker on the backend (BullMQ takes the factory last). */
export function bullConnection(backend: QueueBackend): {
  options: Pick<QueueOptions, 'connection'>;
  factory?: typeof createPostgresBackend;
} {
  if (backend.kind === 'redis')
    return {
      options: { connection: redisOptions(backend.url), ...(backend.prefix ? { prefix: backend.prefix } : {}) } as Pick<
        QueueOptions,
        'connection'
      >,
    };
  return {
    options: {
      connection: {
        connectionString: backend.url,
        schema: backend.schema ?? QUEUE_SCHEMA,
        migrate: backend.migrate ?? true,
        max: 4,
      } as unknown as QueueOptions['connection'],
    },
    factory: createPostgresBackend,
  };
}

export function reconcileQueue(backend: QueueBackend): Queue<NamespaceJobData> {
  const { options, factory } = bullConnection(backend);
  return factory
    ? new Queue<NamespaceJobData>(RECONCILE_QUEUE, options as never, factory as never)
    : new Queue<NamespaceJobData>(RECONCILE_QUEUE, options);
}

/** ioredis options from a redis:// or rediss:// URL (BullMQ then owns and closes its clients). */
export function redisOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  const db = parsed.pathname.replace(/^\//, '');
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ's blocking commands must wait for a reconnect instead of failing.
    maxRetriesPerRequest: null,
  };
}
