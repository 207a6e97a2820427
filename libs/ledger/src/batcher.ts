import type pg from 'pg';
import { LedgerError } from './ledger-error.js';
import { NamespaceTx, type Prefetch } from './namespace-tx.js';
import { guardCheckedOut, isConnectionError, isDatabaseError, isRetryableConflict, isTimeout } from './postgres-errors.js';

/**
 * Decides the commands for one namespace together: while a transaction for a namespace is
 * in flight, new commands for it wait, and the next transaction takes up to `batchSizeMax`
 * of them at once. One process thus never conflicts with itself on a hot namespace (the
 * Kubernetes quota evaluator batches per namespace for the same reason), and N waiting
 * requests cost one transaction instead of N retries. Conflicts with other processes
 * (SQLSTATE 40001, a lost version race) rerun the whole batch with jittered exponential
 * backoff, a bounded number of times.
 */
export interface NamespaceJob<R> {
  /** What the job will look up, so the transaction reads it with the head in one round trip. */
  readonly prefetch?: Partial<Prefetch>;
  /**
   * Runs inside the transaction; may run again if the transaction is retried. Returns a
   * function that gives the result once the transaction has committed.
   */
  run(tx: NamespaceTx): Promise<() => R>;
}

export interface BatcherOptions {
  readonly batchSizeMax: number;
  readonly retryMax: number;
  readonly retryBaseMs: number;
  readonly retryMaxDelayMs: number;
  readonly statementTimeoutMs: number;
  /** Most commands waiting for one namespace before new ones are refused (503). */
  readonly queueMax: number;
  readonly clock?: () => number;
  /** Told of every committed transaction: how many commands it decided and after how many retries (metrics). */
  readonly onCommitted?: (commands: number, retries: number) => void;
  /** Told when a committed batch appended events (to wake the projection worker). */
  readonly onAppended?: () => void;
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
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class NamespaceBatcher {
  private readonly queues = new Map<string, NamespaceQueue>();
  private readonly running = new Set<Promise<void>>();
  private closing = false;
  private readonly prepared = new WeakSet<pg.PoolClient>();
  readonly stats: BatchStats = { transactions: 0, commands: 0, retries: 0, unavailable: 0 };

  constructor(
    private readonly pool: pg.Pool,
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
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (error) {
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
        client.release();
        return;
      }
      const unguard = guardCheckedOut(client);
      const outcome = await this.attempt(client, namespace, batch, unguard);
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
        // One command's data broke the batch's single statement, which wrote nothing: decide
        // each alone, so that only the culprit fails.
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

  private async attempt(
    client: pg.PoolClient,
    namespace: string,
    batch: readonly Queued[],
    unguard: () => void,
  ): Promise<
    | { kind: 'done' }
    | { kind: 'poisoned'; job: Queued; error: unknown }
    | { kind: 'conflict' | 'connection' | 'failed'; error: unknown; commitSent: boolean }
  > {
    let commitSent = false;
    let culprit: Queued | undefined;
    let broken = false;
    try {
      await this.prepare(client);
      const tx = await NamespaceTx.open(client, namespace, prefetchOf(batch), this.options.clock);
      const finals: { queued: Queued; finish?: () => unknown; error?: unknown }[] = [];
      for (const queued of batch) {
        const mark = tx.mark();
        try {
          finals.push({ queued, finish: await queued.job.run(tx) });
        } catch (error) {
          if (isDatabaseError(error) || isConnectionError(error)) {
            culprit = queued;
            throw error;
          }
          tx.restore(mark);
          finals.push({ queued, error });
        }
      }
      // The flush is the commit: once it is sent, a lost connection leaves the outcome unknown.
      commitSent = true;
      await tx.flush();
      if (tx.appends) this.options.onAppended?.();
      this.stats.transactions++;
      this.stats.commands += batch.length;
      for (const { queued, finish, error } of finals) {
        if (finish === undefined) {
          queued.reject(error);
          continue;
        }
        try {
          queued.resolve(finish());
        } catch (finishError) {
          queued.reject(finishError);
        }
      }
      return { kind: 'done' };
    } catch (error) {
      // Nothing to roll back: every write is in the one flush statement, which failed whole.
      // Besides a lost connection, an error that is neither the server's nor our conflict came
      // from inside the driver (say, a stack overflow while it encoded a parameter of a
      // prepared statement): the connection's state is unknown, so it is not reused.
      broken = isConnectionError(error) || !(isDatabaseError(error) || isRetryableConflict(error));
      if (isRetryableConflict(error)) return { kind: 'conflict', error, commitSent: false };
      if (broken) return { kind: 'connection', error, commitSent };
      if (culprit && !isTimeout(error)) return { kind: 'poisoned', job: culprit, error };
      return { kind: 'failed', error, commitSent };
    } finally {
      // A broken connection is destroyed, not returned to the pool.
      unguard();
      client.release(broken ? true : undefined);
    }
  }

  /**
   * Bounds every statement the ledger sends on this connection (a session setting, sent once
   * per connection: the pool's other users are keyed, paged reads that fit the same bound).
   */
  private async prepare(client: pg.PoolClient): Promise<void> {
    if (this.prepared.has(client)) return;
    await client.query(`SET statement_timeout = ${Math.floor(this.options.statementTimeoutMs)}`);
    this.prepared.add(client);
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

function prefetchOf(batch: readonly Queued[]): Prefetch {
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
