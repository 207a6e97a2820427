import { afterEach, describe, expect, it, vi } from 'vitest';
import { WatchSettler } from './settle-on-watch.js';

/** A settler whose settles each wait for their gate to open: `calls` says which namespaces it settled, in order. */
function gatedSettler(options?: ConstructorParameters<typeof WatchSettler>[2]) {
  const calls: string[] = [];
  const gates: (() => void)[] = [];
  const settler = new WatchSettler(
    (namespace) =>
      new Promise<void>((resolve) => {
        calls.push(namespace);
        gates.push(resolve);
      }),
    undefined,
    options,
  );
  return { calls, gates, settler };
}

describe('WatchSettler', () => {
  it('settles a namespace at once, once at a time, and once more for signals that arrived while it ran', async () => {
    const { calls, gates, settler } = gatedSettler();
    settler.signal({ namespace: 'a' });
    settler.signal({ namespace: 'b' });
    expect(calls).toEqual(['a', 'b']);
    // Three signals for a while its settle runs: one more settle, after it.
    settler.signal({ namespace: 'a' });
    settler.signal({ namespace: 'a' });
    settler.signal({ namespace: 'a' });
    expect(calls).toEqual(['a', 'b']);
    gates.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['a', 'b', 'a']);
    for (const open of gates.splice(0)) open();
    await settler.idle();
    expect(calls).toEqual(['a', 'b', 'a']);
    expect(settler.stats).toEqual({ signals: 5, settles: 3, failures: 0, skipped: 0 });
  });

  it('a failed settle is logged and counted; the next signal tries again', async () => {
    let fail = true;
    const logged: string[] = [];
    const settler = new WatchSettler(
      async () => {
        if (fail) throw new Error('listing failed');
      },
      (_level, msg) => logged.push(msg),
    );
    settler.signal({ namespace: 'a' });
    await settler.idle();
    fail = false;
    settler.signal({ namespace: 'a' });
    await settler.idle();
    expect(settler.stats).toEqual({ signals: 2, settles: 1, failures: 1, skipped: 0 });
    expect(logged).toEqual(['settle after a watch event failed']);
  });

  it('runs at most maxSettles at once; the rest wait their turn, deletions before additions, each namespace once', async () => {
    vi.useFakeTimers();
    try {
      const { calls, gates, settler } = gatedSettler({ coalesceMs: 10, maxSettles: 2 });
      settler.signal({ namespace: 'a', why: 'deleted' });
      settler.signal({ namespace: 'b', why: 'deleted' });
      settler.signal({ namespace: 'c', why: 'added' });
      settler.signal({ namespace: 'e', why: 'added' });
      await vi.advanceTimersByTimeAsync(10);
      settler.signal({ namespace: 'd', why: 'deleted' });
      settler.signal({ namespace: 'd', why: 'deleted' });
      // c is due as an addition; a deletion of it moves it among the urgent, behind d.
      settler.signal({ namespace: 'c', why: 'deleted' });
      expect(calls).toEqual(['a', 'b']);
      expect(settler.queued).toBe(3);
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(0);
      expect(calls).toEqual(['a', 'b', 'd']);
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(0);
      expect(calls).toEqual(['a', 'b', 'd', 'c']);
      for (let i = 0; i < 3; i++) {
        gates.shift()?.();
        await vi.advanceTimersByTimeAsync(0);
      }
      await settler.idle();
      expect(calls).toEqual(['a', 'b', 'd', 'c', 'e']);
      expect(settler.stats).toMatchObject({ signals: 7, settles: 5 });
    } finally {
      vi.useRealTimers();
    }
  });

  describe('additions', () => {
    afterEach(() => void vi.useRealTimers());

    it('a burst of additions in one namespace waits for the burst and is one settle; another namespace is settled apart', async () => {
      vi.useFakeTimers();
      const calls: string[] = [];
      const settler = new WatchSettler(async (namespace) => void calls.push(namespace), undefined, { coalesceMs: 500 });
      for (let i = 0; i < 100; i++) settler.signal({ namespace: 'a', why: 'added' });
      settler.signal({ namespace: 'b', why: 'added' });
      await vi.advanceTimersByTimeAsync(499);
      expect(calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls.sort()).toEqual(['a', 'b']);
      await vi.advanceTimersByTimeAsync(5000);
      expect(calls).toHaveLength(2);
      expect(settler.stats).toEqual({ signals: 101, settles: 2, failures: 0, skipped: 0 });
    });

    it('additions while a settle runs settle once more, a window after it; a deletion does not wait for the window', async () => {
      vi.useFakeTimers();
      const { calls, gates, settler } = gatedSettler({ coalesceMs: 500 });
      settler.signal({ namespace: 'a', why: 'added' });
      await vi.advanceTimersByTimeAsync(500);
      expect(calls).toEqual(['a']);
      for (let i = 0; i < 10; i++) settler.signal({ namespace: 'a', why: 'added' });
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(499);
      expect(calls).toEqual(['a']);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toEqual(['a', 'a']);
      gates.shift()?.();
      // An addition waiting is taken along by a deletion, at once.
      settler.signal({ namespace: 'a', why: 'added' });
      await vi.advanceTimersByTimeAsync(100);
      settler.signal({ namespace: 'a', why: 'deleted' });
      expect(calls).toEqual(['a', 'a', 'a']);
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(5000);
      expect(calls).toHaveLength(3);
      // A deletion while additions wait behind a running settle: once more, at once.
      settler.signal({ namespace: 'a', why: 'added' });
      await vi.advanceTimersByTimeAsync(500);
      settler.signal({ namespace: 'a', why: 'added' });
      settler.signal({ namespace: 'a', why: 'deleted' });
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(0);
      expect(calls).toHaveLength(5);
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(5000);
      expect(calls).toHaveLength(5);
    });

    it('cancel drops the additions still waiting (shutdown)', async () => {
      vi.useFakeTimers();
      const calls: string[] = [];
      const settler = new WatchSettler(async (namespace) => void calls.push(namespace), undefined, { coalesceMs: 500 });
      settler.signal({ namespace: 'a', why: 'added' });
      settler.cancel();
      await settler.idle();
      await vi.advanceTimersByTimeAsync(1000);
      expect(calls).toEqual([]);
    });
  });

  it('with urgentDelayMs, a deletion waits that margin (taking a waiting addition with it), and so does the settle again after a running one', async () => {
    vi.useFakeTimers();
    try {
      const { calls, gates, settler } = gatedSettler({ coalesceMs: 500, urgentDelayMs: 300 });
      settler.signal({ namespace: 'a', why: 'added' });
      settler.signal({ namespace: 'a', why: 'deleted' });
      await vi.advanceTimersByTimeAsync(299);
      expect(calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toEqual(['a']);
      // A deletion while it runs: settled again, the margin after it ended.
      settler.signal({ namespace: 'a', why: 'deleted' });
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(299);
      expect(calls).toEqual(['a']);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toEqual(['a', 'a']);
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(1000);
      expect(settler.stats).toMatchObject({ signals: 3, settles: 2 });
    } finally {
      vi.useRealTimers();
    }
  });
});
