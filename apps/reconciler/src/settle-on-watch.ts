import type { SettleSignal } from '@quota/inventory';

/** How long an addition waits for the others of its burst before its namespace is settled. */
export const DEFAULT_COALESCE_MS = 500;

/** Settles one settler runs at once (each holds a database connection): the rest wait their turn, deletions first. */
export const DEFAULT_MAX_SETTLES = 8;

/**
 * Settles a namespace as soon as a watch says one of its objects was deleted or a pod of it
 * finished, and shortly after an object of it was added, by the reconciler's own pass over that
 * namespace (the ledger's Reconcile command, the same decision and events as the periodic pass:
 * only earlier). An addition commits its reservation, or adopts an object nobody reserved
 * (created while the webhook was down or not registered).
 *
 * Additions are coalesced: the first one of a namespace waits `coalesceMs` for the rest of its
 * burst, so a hundred creations in one namespace cost a few settles, not a hundred. A deletion
 * or a finished pod settles at once (and takes any addition waiting with it). One settle per
 * namespace runs at a time; a signal that arrives while it runs (its listing may predate the
 * change) runs it once more after it, however many signals came meanwhile: at once for a
 * deletion or a finished pod, `coalesceMs` later for additions only.
 *
 * At most `maxSettles` run at once, over every namespace: a relist that finds thousands of
 * namespaces changed (a watch that missed them) queues them, and they run in turn, the deletions
 * and finished pods before the additions, each namespace once however often it is signalled meanwhile.
 *
 * Every replica watches and settles: the Reconcile command is judged inside the ledger's
 * namespace transaction against the current state, so two replicas settling the same object
 * append its release once (ledger-commands.ts `reconcile`).
 */
export class WatchSettler {
  /** `skipped`: settles the callback declined (it answered false: a namespace nothing is managed in). */
  readonly stats = { signals: 0, settles: 0, failures: 0, skipped: 0 };
  private readonly running = new Map<string, Promise<void>>();
  /** Namespaces to settle again after their running settle: `now`, or `later` (additions only). */
  private readonly again = new Map<string, 'now' | 'later'>();
  /** Namespaces whose additions wait for the rest of their burst. */
  private readonly waiting = new Map<string, { readonly timer: NodeJS.Timeout; readonly urgent: boolean }>();
  /** Namespaces due to settle while `maxSettles` run, in arrival order: the urgent ones first. */
  private readonly due = { urgent: new Set<string>(), later: new Set<string>() };
  private readonly coalesceMs: number;
  private readonly urgentDelayMs: number;
  private readonly maxSettles: number;

  constructor(
    /** Settles the namespace; answering false means it had nothing to settle (counted as skipped). */
    private readonly settle: (namespace: string) => Promise<unknown>,
    private readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
    /**
     * `urgentDelayMs`: how long a deletion or a finished pod waits before its settle (default 0):
     * a listing read from a watch-fed cache is timed that much before now (listing-time.ts), so a
     * settle run at once could not release what the ledger recorded within that margin.
     */
    options: { readonly coalesceMs?: number; readonly urgentDelayMs?: number; readonly maxSettles?: number } = {},
  ) {
    this.coalesceMs = options.coalesceMs ?? DEFAULT_COALESCE_MS;
    this.urgentDelayMs = options.urgentDelayMs ?? 0;
    this.maxSettles = Math.max(1, options.maxSettles ?? DEFAULT_MAX_SETTLES);
  }

  /** Namespaces waiting for a free settle (for the metrics and tests). */
  get queued(): number {
    return this.due.urgent.size + this.due.later.size;
  }

  signal(change: Pick<SettleSignal, 'namespace'> & Partial<Pick<SettleSignal, 'why'>>): void {
    this.stats.signals++;
    const { namespace } = change;
    const urgent = change.why !== 'added';
    // Due already: its settle has not begun, so its listing will include this change.
    if (this.due.urgent.has(namespace)) return;
    if (this.due.later.has(namespace)) {
      if (urgent) {
        this.due.later.delete(namespace);
        this.due.urgent.add(namespace);
      }
      return;
    }
    if (this.running.has(namespace)) {
      if (urgent || !this.again.has(namespace)) this.again.set(namespace, urgent ? 'now' : 'later');
      return;
    }
    const waiting = this.waiting.get(namespace);
    if (waiting && (!urgent || waiting.urgent)) return;
    if (!urgent) this.wait(namespace, this.coalesceMs, false);
    else if (this.urgentDelayMs > 0) this.wait(namespace, this.urgentDelayMs, true);
    else this.run(namespace);
  }

  /** Resolves once no settle runs or waits (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.waiting.size > 0 || this.queued > 0) {
      if (this.running.size > 0) await Promise.all(this.running.values());
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Drops the additions still waiting (shutdown: the periodic pass settles them). */
  cancel(): void {
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    this.again.clear();
    this.due.urgent.clear();
    this.due.later.clear();
  }

  /** Settles the namespace after `ms` (a shorter, urgent wait replaces a waiting addition's). */
  private wait(namespace: string, ms: number, urgent: boolean): void {
    const waiting = this.waiting.get(namespace);
    if (waiting) clearTimeout(waiting.timer);
    const timer = setTimeout(() => {
      this.waiting.delete(namespace);
      this.run(namespace, urgent);
    }, ms);
    this.waiting.set(namespace, { timer, urgent });
  }

  /** Settles the namespace now, or when a settle is free (`urgent` ones first). */
  private run(namespace: string, urgent = true): void {
    const waiting = this.waiting.get(namespace);
    if (waiting) {
      clearTimeout(waiting.timer);
      this.waiting.delete(namespace);
    }
    if (this.running.size >= this.maxSettles) {
      (urgent ? this.due.urgent : this.due.later).add(namespace);
      return;
    }
    const done = this.settle(namespace)
      .then(
        (ran) => void (ran === false ? this.stats.skipped++ : this.stats.settles++),
        (error: unknown) => {
          // The periodic pass settles it later; the next signal tries again.
          this.stats.failures++;
          this.log?.('warn', 'settle after a watch event failed', { namespace, error: (error as Error).message });
        },
      )
      .finally(() => {
        this.running.delete(namespace);
        const next = this.again.get(namespace);
        this.again.delete(namespace);
        if (next === 'now' && this.urgentDelayMs === 0) this.run(namespace);
        else if (next === 'now') this.wait(namespace, this.urgentDelayMs, true);
        else if (next === 'later') this.wait(namespace, this.coalesceMs, false);
        this.runDue();
      });
    this.running.set(namespace, done);
  }

  /** The next due namespaces, while settles are free. */
  private runDue(): void {
    while (this.running.size < this.maxSettles) {
      const set = this.due.urgent.size > 0 ? this.due.urgent : this.due.later;
      const next = set.values().next();
      if (next.done) return;
      set.delete(next.value);
      this.run(next.value, set === this.due.urgent);
    }
  }
}
