import { describe, expect, it } from 'vitest';
import { RetryPolicy } from './retry-policy.js';
import { VersionConflict } from '../database/postgres-errors.js';

describe('RetryPolicy', () => {
  const policy = new RetryPolicy({ retryMax: 3, retryBaseMs: 10, retryMaxDelayMs: 200, pessimisticAfter: 2 });

  it('backs off below a ceiling that doubles per attempt and stops at the largest delay', () => {
    for (let i = 0; i < 200; i++) {
      expect(policy.backoff(1)).toBeLessThan(10);
      expect(policy.backoff(3)).toBeLessThan(40);
      expect(policy.backoff(12)).toBeLessThan(200);
    }
  });

  it('turns pessimistic after the conflicts it allows, and gives up after retryMax', () => {
    expect([1, 2, 3].map((attempt) => policy.pessimistic(attempt))).toEqual([false, false, true]);
    expect(new RetryPolicy({ retryMax: 3, retryBaseMs: 1, retryMaxDelayMs: 1 }).pessimistic(99)).toBe(false);
    expect([2, 3].map((attempts) => policy.exhausted(attempts))).toEqual([false, true]);
  });

  it('retries a transaction that conflicted, throws any other error at once, and says when it gave up', async () => {
    const fast = new RetryPolicy({ retryMax: 3, retryBaseMs: 1, retryMaxDelayMs: 1 });
    const counted: string[] = [];
    const on = {
      conflicted: (cause: string) => counted.push(cause),
      retrying: () => counted.push('retry'),
      gaveUp: (n: number) => new Error(`gave up after ${n}`),
    };
    let calls = 0;
    await expect(fast.run(async (attempt) => (++calls < 2 ? Promise.reject(new VersionConflict('ns', 1)) : attempt), on)).resolves.toBe(2);
    expect(counted).toEqual(['version', 'retry']);
    await expect(fast.run(() => Promise.reject(new VersionConflict('ns', 1)), on)).rejects.toThrow('gave up after 3');
    await expect(fast.run(() => Promise.reject(new Error('boom')), on)).rejects.toThrow('boom');
  });
});
