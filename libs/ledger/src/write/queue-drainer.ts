import type { ClusterWriter } from './cluster-writer.js';
import type { LedgerCommands } from './ledger-commands.js';
import type { QueueQueries } from '../read/queue-queries.js';

/** Namespaces (and shared quotas) one sweep visits, at most. */
export const SWEEP_NAMESPACES_MAX = 500;

export interface QueueDrainerOptions {
  /** How often the sweep runs (QUEUE_SWEEP_INTERVAL_MS). */
  readonly sweepIntervalMs: number;
  /** Told of a drain or sweep that failed (the next sweep retries it). */
  readonly warn?: (message: string) => void;
}

/**
 * The one owner of when the queue's waiters are admitted. There are three triggers, in the order
 * they act:
 *
 * 1. In the transaction of every command that appends anything: the domain's decider drains the
 *    namespace's own queue on the state the command leaves (`withDrain`, namespace/reservation-queue.ts), so a
 *    release admits what fits in the same commit. It is part of the decision and needs no owner
 *    outside it: the unit of work appends what `decide` returns.
 * 2. After a commit of this process that freed room in a shared quota (`LedgerCommands.onSharedFreed`):
 *    that quota's fair drain, at once, in a transaction of its own holding every waiting
 *    namespace's head (`ClusterWriter.drainSharedQueue`, decided by the domain's decideFairDrain).
 * 3. Every `sweepIntervalMs` (`sweep`): each namespace with a waiter past its deadline gets a
 *    SweepQueue command, which expires it (`Expired`, with the reason), and each shared quota
 *    covering a namespace with waiters, whose use, members or spec changed since the sweep last
 *    looked, gets its fair drain: the backstop for other processes' writes.
 */
export class QueueDrainer {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  /** Shared quotas freed by this process's writes, whose fair drain has not run since. */
  private readonly freed = new Set<string>();
  /** Per shared quota, its head's revision when the sweep last drained it. */
  private readonly drainedAt = new Map<string, string>();
  private draining = false;

  constructor(
    private readonly commands: LedgerCommands,
    private readonly writer: ClusterWriter,
    private readonly queries: QueueQueries,
    private readonly options: QueueDrainerOptions,
  ) {
    // Listened to from the start: a write before the timer starts still drains what it freed.
    commands.onSharedFreed((keys) => {
      for (const key of keys) this.freed.add(key);
      void this.drainFreed();
    });
  }

  /** Starts the periodic sweep (trigger 3). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.options.sweepIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One period's sweep; a period that finds the last one still running skips. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      for (const namespace of await this.queries.namespacesWithExpiredWaiters(await this.commands.now(), SWEEP_NAMESPACES_MAX)) {
        await this.commands.sweepQueue(namespace, { actor: 'system:queue-sweeper' });
      }
      for (const { key, revision } of await this.queries.sharedKeysWithWaiters(SWEEP_NAMESPACES_MAX)) {
        if (this.drainedAt.get(key) === revision) continue;
        await this.writer.drainSharedQueue(key, { actor: 'system:queue-sweeper' });
        this.drainedAt.set(key, revision);
      }
    } catch (error) {
      this.warn('the queue sweep', error);
    } finally {
      this.sweeping = false;
    }
  }

  /** The fair drains of the shared quotas this process's writes freed (trigger 2), one after the other. */
  private async drainFreed(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let key = first(this.freed); key !== undefined; key = first(this.freed)) {
        this.freed.delete(key);
        await this.writer
          .drainSharedQueue(key, { actor: 'system:queue-fair-share' })
          .catch((error: unknown) => this.warn('a fair drain', error));
      }
    } finally {
      this.draining = false;
    }
  }

  private warn(what: string, error: unknown): void {
    this.options.warn?.(`${what} failed, retried by the next sweep: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const first = <T>(set: ReadonlySet<T>): T | undefined => set.values().next().value;
