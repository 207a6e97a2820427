import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { formGroup, type GroupLimits, type NamespaceJob, type NamespaceQueue, type Part, type Queued } from './group-queues.js';
import { attemptGroup, type Attempt, type BatchStats, type TransactionHooks } from './group-transaction.js';
import { LedgerError } from '../ledger-error.js';
import { isConnectionError, isDatabaseError, isRetryableConflict, isTimeout } from '../database/postgres-errors.js';
import type { RetryPolicy } from './retry-policy.js';

export type { NamespaceJob } from './group-queues.js';
export type { BatchStats } from './group-transaction.js';

export interface GroupCommitOptions extends GroupLimits, TransactionHooks {
  /** Most groups in flight at once (each holds one pooled connection). */
  readonly groupsInFlightMax: number;
  /** When a conflicted command is tried again, and how often at most (the writers' one policy). */
  readonly retries: RetryPolicy;
  /** Longest a command waits, in all, for heads another writer holds before it is answered Unavailable. */
  readonly headWaitMaxMs: number;
  /** Most commands waiting for one namespace before new ones are refused (503). */
  readonly queueMax: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Group commit: the commands that arrive while transactions are in flight, whatever their
 * namespace, share the next SERIALIZABLE transaction. One statement reads by key what they
 * need (before the transaction, see `attemptGroup` in group-transaction.ts), one reads and locks every head they write, the
 * decider runs per namespace on its own unit of work, and one statement writes every head
 * (compare-and-set per namespace) with its events, reservations and decisions. N commands
 * cost one transaction of six round trips instead of N (baseline (c), ten decisions per
 * transaction, runs 3-4 times baseline (a) on these machines).
 *
 * Within a namespace, commands are decided in arrival order, up to `batchSizeMax` per group;
 * while a group holding a namespace is in flight, that namespace's new commands wait for a
 * later group (one process never conflicts with itself; the Kubernetes quota evaluator
 * batches per namespace for the same reason). A group is bounded by `groupCommandsMax`
 * commands and `groupBytesMax` estimated bytes, and at most `groupsInFlightMax` groups run at
 * once, each on one pooled connection.
 *
 * A namespace whose head another process holds is skipped and retried on its own; the rest
 * of the group commits. A conflict that aborts the transaction (SQLSTATE 40001 or 40P01, a
 * unique key another writer took) puts the group's commands back at the front of their
 * namespaces' queues, to be retried after a jittered exponential backoff, at most `retryMax`
 * times each.
 */
export class GroupCommitter {
  /** Namespaces with commands waiting or in flight, least recently served first. */
  private readonly queues = new Map<string, NamespaceQueue>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Queues told to wait (`notBefore`) after a conflict. */
  private readonly backingOff = new Set<NamespaceQueue>();
  private pumpScheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private closing = false;
  readonly stats: BatchStats = {
    transactions: 0,
    commands: 0,
    retries: 0,
    unavailable: 0,
    conflicts: { serialization: 0, version: 0, unique: 0, locked: 0 },
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: GroupCommitOptions,
  ) {}

  submit<R>(namespace: string, job: NamespaceJob<R>): Promise<R> {
    if (this.closing) return Promise.reject(new LedgerError('Unavailable', 'the server is shutting down; retry against another replica'));
    let queue = this.queues.get(namespace);
    if (!queue) {
      queue = { pending: [], busy: false, notBefore: 0 };
      this.queues.set(namespace, queue);
    }
    if (queue.pending.length >= this.options.queueMax) {
      this.stats.unavailable++;
      return Promise.reject(
        new LedgerError('Unavailable', `too many requests are waiting for namespace ${namespace}; retry shortly`, { retryAfterSeconds: 1 }),
      );
    }
    const promise = new Promise<R>((resolve, reject) => {
      queue.pending.push({
        job: job as NamespaceJob<unknown>,
        resolve: resolve as (value: unknown) => void,
        reject,
        attempts: 0,
        held: 0,
        alone: false,
      });
    });
    this.schedule();
    return promise;
  }

  /** Stops taking commands and waits for those already taken. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.inFlight.size > 0 || this.waiting() > 0) {
      if (this.inFlight.size > 0) await Promise.race([...this.inFlight]);
      else await sleep(this.options.retries.options.retryBaseMs);
      this.pump();
    }
    clearTimeout(this.timer);
  }

  private waiting(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.pending.length;
    return n;
  }

  /** Forms groups on the next microtask, so that commands submitted together start together. */
  private schedule(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * Forms and starts groups while slots are free, then arms the backoff timer. One clock
   * reading serves both: with two, a namespace whose backoff ends between them (its notBefore
   * is fractional) was "not yet" to the forming and "due" to the timer, so it was neither taken
   * nor woken for, and with nothing in flight its commands waited forever.
   */
  private pump(): void {
    const now = performance.now();
    while (this.inFlight.size < this.options.groupsInFlightMax) {
      const group = formGroup(this.queues, now, this.options);
      if (group.length === 0) break;
      const running: Promise<void> = this.run(group)
        .catch((error: unknown) => this.settleAll(group, error))
        .finally(() => {
          this.inFlight.delete(running);
          for (const part of group) {
            part.queue.busy = false;
            if (part.queue.pending.length === 0 && this.queues.get(part.namespace) === part.queue) this.queues.delete(part.namespace);
          }
          this.pump();
        });
      this.inFlight.add(running);
    }
    this.wakeForBackoff(now);
  }

  /** Pumps again when the earliest namespace backing off may be taken (the others wait for a group to finish, which pumps). */
  private wakeForBackoff(now: number): void {
    if (this.timer !== undefined || this.backingOff.size === 0) return;
    let earliest = Infinity;
    for (const queue of this.backingOff) {
      if (queue.notBefore <= now || queue.pending.length === 0) this.backingOff.delete(queue);
      else if (!queue.busy) earliest = Math.min(earliest, queue.notBefore);
    }
    // None waiting on time: what is ready waits for a free slot, and a finishing group pumps.
    if (earliest === Infinity) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.ceil(earliest - now),
    );
    this.timer.unref?.();
  }

  private async run(group: readonly Part[]): Promise<void> {
    const runner = this.dataSource.createQueryRunner();
    let outcome: Attempt;
    try {
      const client = (await runner.connect()) as pg.PoolClient;
      outcome = await attemptGroup(this.options, this.stats, runner, client, group);
    } catch (error) {
      // No connection: nothing was sent.
      outcome = isConnectionError(error) ? { kind: 'connection', error, commitSent: false } : { kind: 'failed', error, commitSent: false };
    } finally {
      await runner.release();
    }
    switch (outcome.kind) {
      case 'done':
        for (const part of outcome.deferred) this.waitForHead(part);
        return;
      case 'poisoned':
        // One command hit a database error of its own: answer it, and rerun the others at once.
        outcome.job.reject(outcome.error);
        for (const part of group)
          this.requeue(
            part.queue,
            part.batch.filter((q) => q !== outcome.job),
          );
        return;
      case 'failed':
        if (isDatabaseError(outcome.error) && !isTimeout(outcome.error) && group.length > 1) {
          // One command's data broke the group's single write statement, which rolled back with
          // the transaction: try each half of the namespaces again at once, so that a poisoned
          // command costs its group about 2 log2(N) transactions, not N (a tenant cannot slow
          // the other namespaces down by sending what PostgreSQL refuses).
          const middle = Math.ceil(group.length / 2);
          await this.run(group.slice(0, middle));
          await this.run(group.slice(middle));
          return;
        }
        if (isDatabaseError(outcome.error) && !isTimeout(outcome.error) && (group[0]?.batch.length ?? 0) > 1) {
          // Within one namespace: decide each of its commands alone, in arrival order, so that
          // only the culprit fails.
          for (const part of group) {
            for (const queued of part.batch) queued.alone = true;
            this.requeue(part.queue, part.batch);
          }
          return;
        }
        this.settleAll(group, unavailable(outcome.error));
        return;
      case 'connection':
        if (outcome.commitSent) {
          this.settleAll(group, outcome.error instanceof LedgerError ? outcome.error : unknownOutcome());
          return;
        }
        this.stats.retries++;
        for (const part of group) this.retryLater(part, outcome.error);
        return;
      case 'conflict':
        this.stats.retries++;
        for (const part of group) this.retryLater(part, outcome.error);
        return;
    }
  }

  /** Puts a part's commands back at the front of its queue after a backoff, or answers Unavailable once they have been tried `retryMax` times. */
  private retryLater(part: Part, error: unknown): void {
    const again: Queued[] = [];
    for (const queued of part.batch) {
      queued.attempts++;
      if (this.options.retries.exhausted(queued.attempts)) {
        this.stats.unavailable++;
        queued.reject(unavailable(error, queued.attempts));
      } else again.push(queued);
    }
    part.queue.notBefore = performance.now() + this.options.retries.backoff(Math.max(0, ...again.map((q) => q.attempts)));
    this.backingOff.add(part.queue);
    this.requeue(part.queue, again);
  }

  /**
   * Another writer held the namespace's head: its transaction ends within milliseconds, so the
   * commands go back to the front of their queue after a short jittered pause, and are answered
   * Unavailable only once they have waited `headWaitMaxMs` in all.
   */
  private waitForHead(part: Part): void {
    const now = performance.now();
    const again: Queued[] = [];
    for (const queued of part.batch) {
      queued.heldSince ??= now;
      queued.held++;
      if (now - queued.heldSince >= this.options.headWaitMaxMs) {
        this.stats.unavailable++;
        queued.reject(busy(now - queued.heldSince));
      } else again.push(queued);
    }
    part.queue.notBefore = now + this.options.retries.backoff(Math.min(4, Math.max(0, ...again.map((q) => q.held))));
    this.backingOff.add(part.queue);
    this.requeue(part.queue, again);
  }

  private requeue(queue: NamespaceQueue, batch: readonly Queued[]): void {
    queue.pending.unshift(...batch);
  }

  private settleAll(group: readonly Part[], error: unknown): void {
    for (const part of group) {
      this.stats.unavailable += part.batch.length;
      for (const queued of part.batch) queued.reject(error);
    }
  }
}

function unavailable(error: unknown, attempts?: number): LedgerError {
  if (error instanceof LedgerError) return error;
  if (isRetryableConflict(error)) {
    return new LedgerError(
      'Unavailable',
      `the namespace is too busy: the decision conflicted with concurrent ones ${attempts ?? 0} times; retry`,
      { retryAfterSeconds: 1 },
    );
  }
  if (isTimeout(error)) return new LedgerError('Unavailable', 'the ledger did not answer in time; retry', { retryAfterSeconds: 1 });
  if (isConnectionError(error))
    return new LedgerError('Unavailable', 'the ledger database is unreachable; retry', { retryAfterSeconds: 1 });
  return error instanceof Error ? (error as LedgerError) : new LedgerError('Unavailable', String(error));
}

function busy(waitedMs: number): LedgerError {
  return new LedgerError('Unavailable', `the namespace is too busy: other writers held it for ${waitedMs} ms; retry`, {
    retryAfterSeconds: 1,
  });
}

function unknownOutcome(): LedgerError {
  return new LedgerError(
    'Unavailable',
    'the connection to the ledger was lost while committing: the outcome is unknown; repeat the request with the same request id to learn it',
    {
      retryAfterSeconds: 1,
    },
  );
}
