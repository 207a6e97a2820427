import { afterEach, describe, expect, it, vi } from 'vitest';
import { HeavyReads } from './heavy-reads.js';

describe('HeavyReads (the slots of series, as-of reads of shared quotas and exports)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('grants the free slots at once, queues the next reads and hands each released slot to the oldest waiting one', async () => {
    const reads = new HeavyReads(2, 2, 1000);
    expect([await reads.take(), await reads.take()]).toEqual([true, true]);
    const order: string[] = [];
    const third = reads.take().then((taken) => order.push(`third ${taken}`));
    const fourth = reads.take().then((taken) => order.push(`fourth ${taken}`));
    reads.release();
    await third;
    expect(order).toEqual(['third true']);
    reads.release();
    await fourth;
    expect(order).toEqual(['third true', 'fourth true']);
  });

  it('refuses at once when as many reads wait as it holds, and a waiting read whose wait runs out', async () => {
    vi.useFakeTimers();
    const reads = new HeavyReads(1, 1, 1000);
    expect(await reads.take()).toBe(true);
    const waiting = reads.take();
    expect(await reads.take()).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(await waiting).toBe(false);
    // The slot is still the first read's: released, the next read gets it at once.
    reads.release();
    expect(await reads.take()).toBe(true);
  });
});
