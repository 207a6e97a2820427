import type pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import { LedgerError } from './ledger-error.js';
import { conflictCause, isConnectionError, isDatabaseError, isRetryableConflict, isTimeout, type ConflictCause } from './postgres-errors.js';
import type { KeyedRead } from './read-statement.js';
import { NamespaceUnitOfWork } from './unit-of-work.js';

/**
 * The unit of work's driver: decides the commands for one namespace together, each batch in
 * one SERIALIZABLE transaction. While a transaction for a namespace is in flight, new commands
 * for it wait, and the next transaction takes up to `batchSizeMax` of them at once: one
 * process never conflicts with itself on a hot namespace (the Kubernetes quota evaluator
 * batches per namespace for the same reason), and N waiting requests cost one transaction
 * instead of N retries. Conflicts with other processes (SQLSTATE 40001 or 40P01, a lost
 * compare-and-set on the head, a unique key another writer took) rerun the whole batch with
 * jittered exponential backoff, a bounded number of times.
 */
export interface NamespaceJob<R> {
  /** What the job will look up by key, so the batch reads it with the head in one round trip. */
  readonly prefetch?: Partial<KeyedRead>;
  /**
   * Runs inside the transaction; runs again if the transaction is retried. Returns a function
   * that gives the result (or throws the refusal) once the transaction has committed.
   */
  run(work: NamespaceUnitOfWork): Promise<() => R>;
}

export interface BatcherOptions {
  readonly batchSizeMax: number;
  readonly retryMax: number;
  readonly retryBaseMs: number;
  readonly retryMaxDelayMs: number;
  /** Most commands waiting for one namespace before new ones are refused (503). */
  readonly queueMax: number;
  readonly clock?: () => number;
  /** Told of every committed transaction: how many commands it decided and after how many retries (metrics). */
  readonly onCommitted?: (commands: number, retries: number) => void;
  /** Told when a committed batch appended events (to wake the projection worker). */
  readonly onAppended?: () => void;
  /** A seam for tests and fault injection: runs between a batch's prefetch and its transaction. */
  readonly onPrefetched?: (namespace: string) => Promise<void>;
}

interface Queued {
  readonly job: NamespaceJob<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface NamespaceQueue {
  readonly pending: Queued[];
  running: boolean;
}

export interface BatchStats {
  transactions: number;
  commands: number;
  retries: number;
  unavailable: number;
  /** Why transactions were rerun: 40001/40P01 (serialization), a moved head (version), a unique key taken (unique). */
  conflicts: Record<ConflictCause, number>;
}

type Attempt =
  | { readonly kind: 'done' }
  | { readonly kind: 'poisoned'; readonly job: Queued; readonly error: unknown }
  | { readonly kind: 'conflict' | 'connection' | 'failed'; readonly error: unknown; readonly commitSent: boolean };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class NamespaceBatcher {
  private readonly queues = new Map<string, NamespaceQueue>();
  private readonly running = new Set<Promise<void>>();
  private closing = false;
  readonly stats: BatchStats = { transactions: 0, commands: 0, retries: 0, unavailable: 0, conflicts: { serialization: 0, version: 0, unique: 0 } };

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: BatcherOptions,
  ) {}

  submit<R>(namespace: string, job: NamespaceJob<R>): Promise<R> {
    if (this.closing) return Promise.reject(new LedgerError('Unavailable', 'the server is shutting down; retry against another replica'));
    let queue = this.queues.get(namespace);
    if (!queue) {
      queue = { pending: [], running: false };
      this.queues.set(namespace, queue);
    }
    if (queue.pending.length >= this.options.queueMax) {
      this.stats.unavailable++;
      return Promise.reject(new LedgerError('Unavailable', `too many requests are waiting for namespace ${namespace}; retry shortly`, { retryAfterSeconds: 1 }));
    }
    const promise = new Promise<R>((resolve, reject) => {
      queue.pending.push({ job: job as NamespaceJob<unknown>, resolve: resolve as (value: unknown) => void, reject });
    });
    if (!queue.running) {
      queue.running = true;
      const drained = this.drain(namespace, queue).finally(() => this.running.delete(drained));
      this.running.add(drained);
    }
    return promise;
  }

  /** Stops taking commands and waits for those already taken. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private async drain(namespace: string, queue: NamespaceQueue): Promise<void> {
    try {
      while (queue.pending.length > 0) await this.runBatch(namespace, queue);
    } finally {
      queue.running = false;
      if (this.queues.get(namespace) === queue && queue.pending.length === 0) this.queues.delete(namespace);
    }
  }

  private async runBatch(namespace: string, queue: NamespaceQueue, preset: Queued[] = []): Promise<void> {
    let batch: Queued[] = preset;
    for (let attempt = 1; ; attempt++) {
      const runner = this.dataSource.createQueryRunner();
      let client: pg.PoolClient;
      try {
        client = (await runner.connect()) as pg.PoolClient;
      } catch (error) {
        await runner.release();
        // Take the batch only now, so commands that arrived while we waited for a connection join it.
        if (batch.length === 0) batch = queue.pending.splice(0, this.options.batchSizeMax);
        if (attempt < this.options.retryMax && isConnectionError(error)) {
          await sleep(this.backoff(attempt));
          continue;
        }
        this.fail(batch, unavailable(error));
        return;
      }
      if (batch.length === 0) batch = queue.pending.splice(0, this.options.batchSizeMax);
      if (batch.length === 0) {
        await runner.release();
        return;
      }
      const outcome = await this.attempt(runner, client, namespace, batch);
      if (outcome.kind === 'done') {
        this.options.onCommitted?.(batch.length, attempt - 1);
        return;
      }
      if (outcome.kind === 'poisoned') {
        // One command hit a database error of its own: answer it, and rerun the others.
        outcome.job.reject(outcome.error);
        batch = batch.filter((q) => q !== outcome.job);
        attempt--;
        if (batch.length === 0) return;
        continue;
      }
      if (outcome.kind === 'failed' && batch.length > 1 && isDatabaseError(outcome.error) && !isTimeout(outcome.error)) {
        // One command's data broke the batch's single write statement, which rolled back with
        // the transaction: decide each alone, so that only the culprit fails.
        for (const queued of batch) await this.runBatch(namespace, queue, [queued]);
        return;
      }
      const retryable = outcome.kind === 'conflict' || (outcome.kind === 'connection' && !outcome.commitSent);
      if (retryable && attempt < this.options.retryMax) {
        this.stats.retries++;
        await sleep(this.backoff(attempt));
        continue;
      }
      this.fail(batch, outcome.kind === 'connection' && outcome.commitSent ? unknownOutcome() : unavailable(outcome.error, attempt));
      return;
    }
  }

  /**
   * One try of a batch: the keyed prefetch (outside the snapshot, see NamespaceUnitOfWork.open),
   * START TRANSACTION ISOLATION LEVEL SERIALIZABLE (TypeORM's startTransaction), the head read
   * by key, every command decided on the evolving state, the one write statement, COMMIT. The error that aborts it can arrive at any of these, COMMIT
   * included (a serialization failure is often found only there), so the whole transaction is
   * what is retried.
   */
  private async attempt(runner: QueryRunner, client: pg.PoolClient, namespace: string, batch: readonly Queued[]): Promise<Attempt> {
    let commitSent = false;
    let culprit: Queued | undefined;
    try {
      const read = prefetchOf(batch);
      const prefetched = await NamespaceUnitOfWork.prefetch(client, namespace, read);
      await this.options.onPrefetched?.(namespace);
      await runner.startTransaction('SERIALIZABLE');
      const work = await NamespaceUnitOfWork.open(client, namespace, read, prefetched, this.options.clock);
      const finals: { queued: Queued; finish?: () => unknown; error?: unknown }[] = [];
      for (const queued of batch) {
        const mark = work.mark();
        try {
          finals.push({ queued, finish: await queued.job.run(work) });
        } catch (error) {
          if (isDatabaseError(error) || isConnectionError(error)) {
            culprit = queued;
            throw error;
          }
          work.restore(mark);
          finals.push({ queued, error });
        }
      }
      await work.flush();
      // Once COMMIT is sent, a lost connection leaves the outcome unknown.
      commitSent = true;
      await runner.commitTransaction();
      if (work.appends) this.options.onAppended?.();
      this.stats.transactions++;
      this.stats.commands += batch.length;
      for (const { queued, finish, error } of finals) settle(queued, finish, error);
      return { kind: 'done' };
    } catch (error) {
      const cause = conflictCause(error);
      if (!cause && !isDatabaseError(error)) {
        // A lost connection, or an error from inside the driver (say, a stack overflow while it
        // encoded a parameter): the connection's protocol state is unknown. Closing it makes the
        // pool drop it when TypeORM releases it, instead of handing it to the next batch; the
        // server rolls the transaction back.
        await client.end().catch(() => undefined);
      } else if (runner.isTransactionActive && !commitSent) {
        // A failed COMMIT has ended the transaction already; anything earlier is rolled back.
        await runner.rollbackTransaction().catch(() => undefined);
      }
      if (cause) {
        this.stats.conflicts[cause]++;
        return { kind: 'conflict', error, commitSent: false };
      }
      if (isConnectionError(error) || !isDatabaseError(error)) return { kind: 'connection', error, commitSent };
      if (culprit && !isTimeout(error)) return { kind: 'poisoned', job: culprit, error };
      return { kind: 'failed', error, commitSent };
    } finally {
      await runner.release();
    }
  }

  private fail(batch: readonly Queued[], error: unknown): void {
    this.stats.unavailable += batch.length;
    for (const queued of batch) queued.reject(error);
  }

  /** Exponential backoff with full jitter, capped. */
  private backoff(attempt: number): number {
    const ceiling = Math.min(this.options.retryMaxDelayMs, this.options.retryBaseMs * 2 ** (attempt - 1));
    return Math.random() * ceiling;
  }
}

function settle(queued: Queued, finish: (() => unknown) | undefined, error: unknown): void {
  if (finish === undefined) {
    queued.reject(error);
    return;
  }
  try {
    queued.resolve(finish());
  } catch (finishError) {
    queued.reject(finishError);
  }
}

function prefetchOf(batch: readonly Queued[]): KeyedRead {
  const requestKeys = new Set<string>();
  const uids = new Set<string>();
  const reservationIds = new Set<string>();
  for (const { job } of batch) {
    for (const key of job.prefetch?.requestKeys ?? []) requestKeys.add(key);
    for (const uid of job.prefetch?.uids ?? []) uids.add(uid);
    for (const id of job.prefetch?.reservationIds ?? []) reservationIds.add(id);
  }
  return { requestKeys: [...requestKeys], uids: [...uids], reservationIds: [...reservationIds] };
}

function unavailable(error: unknown, attempts?: number): LedgerError {
  if (error instanceof LedgerError) return error;
  if (isRetryableConflict(error)) {
    return new LedgerError('Unavailable', `the namespace is too busy: the decision conflicted with concurrent ones ${attempts ?? 0} times; retry`, { retryAfterSeconds: 1 });
  }
  if (isTimeout(error)) return new LedgerError('Unavailable', 'the ledger did not answer in time; retry', { retryAfterSeconds: 1 });
  if (isConnectionError(error)) return new LedgerError('Unavailable', 'the ledger database is unreachable; retry', { retryAfterSeconds: 1 });
  return error instanceof Error ? (error as LedgerError) : new LedgerError('Unavailable', String(error));
}

function unknownOutcome(): LedgerError {
  return new LedgerError(
    'Unavailable',
    'the connection to the ledger was lost while committing: the outcome is unknown; repeat the request with the same request id to learn it',
    { retryAfterSeconds: 1 },
  );
}
