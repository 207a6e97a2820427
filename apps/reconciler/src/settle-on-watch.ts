import type { SettleSignal } from '@quota/inventory';

/**
 * Settles a namespace as soon as a watch says one of its objects was deleted or a pod of it
 * finished, by the reconciler's own pass over that namespace (the ledger's Reconcile command,
 * the same decision and events as the periodic pass: only earlier). One settle per namespace
 * runs at a time; a signal that arrives while it runs (its listing may predate the change)
 * runs it once more after it, however many signals came meanwhile.
 *
 * Every replica watches and settles: the Reconcile command is judged inside the ledger's
 * namespace transaction against the current state, so two replicas settling the same object
 * append its release once (ledger-commands.ts `reconcile`).
 */
export class WatchSettler {
  readonly stats = { signals: 0, settles: 0, failures: 0 };
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  constructor(
    private readonly settle: (namespace: string) => Promise<unknown>,
    private readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
  ) {}

  signal(change: Pick<SettleSignal, 'namespace'>): void {
    this.stats.signals++;
    if (this.running.has(change.namespace)) this.again.add(change.namespace);
    else this.run(change.namespace);
  }

  /** Resolves once no settle runs (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  private run(namespace: string): void {
    const done = this.settle(namespace)
      .then(
        () => void this.stats.settles++,
        (error: unknown) => {
          // The periodic pass settles it later; the next signal tries again.
          this.stats.failures++;
          this.log?.('warn', 'settle after a watch event failed', { namespace, error: (error as Error).message });
        },
      )
      .finally(() => {
        this.running.delete(namespace);
        if (this.again.delete(namespace)) this.run(namespace);
      });
    this.running.set(namespace, done);
  }
}
