import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { LedgerCommands, QueueQueries } from '@quota/ledger';
import { APP_CONFIG } from '../config/app-config.module.js';

/** The watched queues are read again at least this often: other replicas and the reconciler write too, and this process hears only its own commits. */
const POLL_MS = 250;
/** Commits of this process wake the watchers at most this often (hundreds commit each second under load). */
const COALESCE_MS = 20;

type Wake = () => void;

/**
 * The `?watch=true` reads of queued reservations, told when theirs leaves the queue (admitted,
 * cancelled or expired). One read of the watched namespaces' queues answers every watcher of
 * the process (QueueQueries.waitingIds), after a commit of this process (coalesced) or the poll;
 * each watcher then reads its own reservation once. Before, every watcher read its reservation
 * again on every commit and every 250 ms, which cost the queue's admissions a third more API CPU
 * (docs/benchmarks.md, "Queued reservations: wait instead of 403").
 *
 * Each principal holds at most QUEUE_WATCHES_PER_PRINCIPAL_MAX of them open at once in this
 * process (`hold`): one token could otherwise open watches without end, each a held request and
 * its connection (~50 KB), up to the 300 s a watch may last.
 */
@Injectable()
export class QueueWatchers implements OnApplicationShutdown {
  private readonly logger = new Logger('queue');
  /** namespace → reservation id → the watchers waiting for it to leave the queue. */
  private readonly watching = new Map<string, Map<string, Set<Wake>>>();
  private timer: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  private checking = false;
  private again = false;
  /** Open watches per principal. */
  private readonly open = new Map<string, number>();

  constructor(
    @Inject(LedgerCommands) ledger: LedgerCommands,
    @Inject(QueueQueries) private readonly queue: QueueQueries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    ledger.onCommitted(() => this.wake());
  }

  /** The most watches one principal may hold open at once. */
  get perPrincipalMax(): number {
    return this.config.queue.watchesPerPrincipalMax;
  }

  /** A watch of `principal`'s, counted until the returned release is called (once is enough); undefined when it holds as many as it may. */
  hold(principal: string): (() => void) | undefined {
    const held = this.open.get(principal) ?? 0;
    if (held >= this.perPrincipalMax) return undefined;
    this.open.set(principal, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(principal) ?? 1) - 1;
      if (left > 0) this.open.set(principal, left);
      else this.open.delete(principal);
    };
  }

  /** Resolves once reservation `id` of `namespace` is no longer queued (as far as a read shows), after `ms`, or once `signal` aborts (its client went away). */
  left(namespace: string, id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timeout);
        signal?.removeEventListener('abort', done);
        this.forget(namespace, id, done);
        resolve();
      };
      if (signal?.aborted) return resolve();
      signal?.addEventListener('abort', done, { once: true });
      const timeout = setTimeout(done, Math.max(1, ms));
      const ids = this.watching.get(namespace) ?? new Map<string, Set<Wake>>();
      this.watching.set(namespace, ids);
      ids.set(id, (ids.get(id) ?? new Set()).add(done));
      this.poll ??= setInterval(() => this.wake(), POLL_MS);
    });
  }

  private forget(namespace: string, id: string, wake: Wake): void {
    const ids = this.watching.get(namespace);
    const wakes = ids?.get(id);
    wakes?.delete(wake);
    if (wakes?.size === 0) ids?.delete(id);
    if (ids?.size === 0) this.watching.delete(namespace);
    if (this.watching.size === 0 && this.poll) {
      clearInterval(this.poll);
      this.poll = undefined;
    }
  }

  /** Something may have left a queue: read them within COALESCE_MS, once, whatever else wakes meanwhile. */
  private wake(): void {
    if (this.watching.size === 0 || this.timer) return;
    if (this.checking) {
      this.again = true;
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.check();
    }, COALESCE_MS);
  }

  private async check(): Promise<void> {
    this.checking = true;
    try {
      const namespaces = [...this.watching.keys()];
      const waiting = await this.queue.waitingIds(namespaces);
      // Only the namespaces read: a watcher that came meanwhile waits for the next read.
      for (const namespace of namespaces) {
        for (const [id, wakes] of [...(this.watching.get(namespace) ?? [])])
          if (!waiting.get(namespace)?.has(id)) for (const wake of [...wakes]) wake();
      }
    } catch (error) {
      // The next poll reads again; each watcher still ends by its own timeout.
      this.logger.warn(`reading the watched queues failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.checking = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    }
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
    clearInterval(this.poll);
  }
}
