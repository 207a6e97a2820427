/**
 * At most `permits` large request bodies read and scanned at a time; the rest wait for their turn,
 * unread (the kernel's buffers fill and their senders pause). A burst of large bodies then
 * delays the small requests beside it by one body's step at most, never by the whole burst: the
 * event loop serves everything else between the chunks and the scan of the one being read. A
 * body that could not start within `waitMaxMs` is refused (GateBusy) instead of being read after
 * its caller has given up.
 */
export class GateBusy extends Error {
  constructor(readonly waitedMs: number) {
    super(`waited ${Math.round(waitedMs)} ms for its turn`);
    this.name = 'GateBusy';
  }
}

interface Waiter {
  readonly grant: () => void;
  readonly timer: NodeJS.Timeout;
}

export class Gate {
  private free: number;
  private readonly waiters: Waiter[] = [];

  constructor(
    permits: number,
    private readonly waitMaxMs: number,
  ) {
    this.free = permits;
  }

  /** How many wait for their turn. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Resolves with the release of a permit, once one is free; rejects with GateBusy past `waitMaxMs`, or when `abandoned` fires first. */
  acquire(abandoned?: {
    once(event: 'close', listener: () => void): unknown;
    off(event: 'close', listener: () => void): unknown;
  }): Promise<() => void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(this.releaser());
    }
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const leave = (error: Error): void => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        abandoned?.off('close', onClose);
        reject(error);
      };
      const onClose = (): void => leave(new GateBusy(performance.now() - started));
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          abandoned?.off('close', onClose);
          resolve(this.releaser());
        },
        timer: setTimeout(() => leave(new GateBusy(performance.now() - started)), this.waitMaxMs),
      };
      this.waiters.push(waiter);
      abandoned?.once('close', onClose);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next.grant();
      else this.free++;
    };
  }
}
