/**
 * Keys to work on, kept as client-go's workqueue keeps them: a key is queued once however often
 * it is added, and the value worked on is the latest one added; no two workers hold one key at
 * once (a key added while in hand is worked on again after); urgent keys (a watch event's) are
 * taken before routine ones (a periodic pass's), so a change waits for at most the keys in hand,
 * never for a pass over the whole kind.
 */
export class KeyedQueue<V> {
  private readonly urgent = new Map<string, V>();
  private readonly routine = new Map<string, V>();
  private readonly inHand = new Set<string>();
  /** Added while in hand: queued again when the worker lets the key go. */
  private readonly parked = new Map<string, { readonly value: V; readonly urgent: boolean }>();
  private workers = 0;
  private stopped = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    private readonly work: (key: string, value: V) => Promise<void>,
    private readonly options: { readonly concurrency: number; readonly onError: (key: string, error: unknown) => void },
  ) {}

  /** Queues `key` with `value` (the latest replaces what it had); an urgent add moves it ahead of the routine keys. */
  add(key: string, value: V, urgent: boolean): void {
    if (this.stopped) return;
    if (this.inHand.has(key)) {
      this.parked.set(key, { value, urgent: urgent || (this.parked.get(key)?.urgent ?? false) });
      return;
    }
    if (urgent || this.urgent.has(key)) {
      this.routine.delete(key);
      this.urgent.set(key, value);
    } else this.routine.set(key, value);
    this.pump();
  }

  /** Whether a worker holds the key now. */
  holds(key: string): boolean {
    return this.inHand.has(key);
  }

  /** Resolves when nothing is queued or in hand. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Drops what is queued, takes nothing more, and waits for the keys in hand. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.urgent.clear();
    this.routine.clear();
    this.parked.clear();
    await this.idle();
  }

  private pump(): void {
    while (this.workers < this.options.concurrency) {
      const next = this.take();
      if (!next) break;
      this.workers++;
      void this.run(next[0], next[1]);
    }
    if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private take(): [string, V] | undefined {
    for (const queue of [this.urgent, this.routine]) {
      const first = queue.entries().next();
      if (first.done) continue;
      const [key, value] = first.value;
      queue.delete(key);
      this.inHand.add(key);
      return [key, value];
    }
    return undefined;
  }

  private async run(key: string, value: V): Promise<void> {
    try {
      await this.work(key, value);
    } catch (error) {
      this.options.onError(key, error);
    } finally {
      this.inHand.delete(key);
      this.workers--;
      const parked = this.parked.get(key);
      this.parked.delete(key);
      if (parked) this.add(key, parked.value, parked.urgent);
      this.pump();
    }
  }

  private isIdle(): boolean {
    return this.workers === 0 && this.urgent.size === 0 && this.routine.size === 0 && this.parked.size === 0;
  }
}
