import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyedQueue } from './keyed-queue.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('KeyedQueue', () => {
  it('takes urgent keys before routine ones, and works on the latest value of a key once', async () => {
    const worked: string[] = [];
    const queue = new KeyedQueue<number>(async (key, value) => void worked.push(`${key}=${value}`), {
      concurrency: 1,
      onError: () => {},
    });
    // The first add starts at once; the rest wait behind it.
    queue.add('first', 0, false);
    queue.add('a', 1, false);
    queue.add('b', 1, false);
    queue.add('a', 2, false);
    queue.add('c', 1, true);
    queue.add('b', 3, true);
    await queue.idle();
    expect(worked).toEqual(['first=0', 'c=1', 'b=3', 'a=2']);
  });

  it('property: never two workers on one key, never more than `concurrency` at once, and each key’s last value worked on last', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.boolean(), fc.nat(3)), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 3 }),
        async (adds, concurrency) => {
          const inHand = new Set<string>();
          let most = 0;
          const last = new Map<string, number>();
          const queue = new KeyedQueue<number>(
            async (key, value) => {
              expect(inHand.has(key), `two workers on ${key}`).toBe(false);
              inHand.add(key);
              most = Math.max(most, inHand.size);
              await tick();
              inHand.delete(key);
              last.set(key, value);
            },
            { concurrency, onError: (_key, error) => void expect.fail(String(error)) },
          );
          const wanted = new Map<string, number>();
          for (const [i, [key, urgent, pause]] of adds.entries()) {
            queue.add(key, i, urgent);
            wanted.set(key, i);
            for (let p = 0; p < pause; p++) await tick();
          }
          await queue.idle();
          expect(most).toBeLessThanOrEqual(concurrency);
          expect(Object.fromEntries(last)).toEqual(Object.fromEntries(wanted));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a failed key is reported and the queue goes on', async () => {
    const errors: string[] = [];
    const worked: string[] = [];
    const queue = new KeyedQueue<number>(
      async (key) => {
        if (key === 'bad') throw new Error('refused');
        worked.push(key);
      },
      { concurrency: 2, onError: (key, error) => errors.push(`${key}: ${(error as Error).message}`) },
    );
    queue.add('bad', 1, false);
    queue.add('good', 1, false);
    await queue.idle();
    expect([errors, worked]).toEqual([['bad: refused'], ['good']]);
  });
});
