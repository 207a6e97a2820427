import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Resources from '../resources/resource-list.js';
import { waitEstimate, WAIT_ESTIMATE_SAMPLES_MAX, type PastWait } from './wait-estimate.js';

const cpu = (amount: string, waitedMs: number, extra: Record<string, string> = {}): PastWait => ({
  resources: Resources.resourceList({ cpu: amount, ...extra }),
  waitedMs,
});
const ask = (raw: Record<string, string>) => Resources.resourceList(raw);

describe('waitEstimate: what the ledger recorded of waits like this one', () => {
  it.each([
    { what: 'fewer than five similar waits: none', past: [1, 2, 3, 4].map((s) => cpu('2', s * 1000)), expected: undefined },
    {
      what: 'nearest-rank p50 and p90 of ten',
      past: [10, 1, 9, 2, 8, 3, 7, 4, 6, 5].map((s) => cpu('2', s * 1000)),
      expected: { samples: 10, p50Seconds: 5, p90Seconds: 9 },
    },
    {
      what: 'only waits within a factor of two, of the same resources',
      past: [
        ...[1, 2, 3, 4, 5].map((s) => cpu('1', s * 1000)),
        ...[100, 100, 100].map((s) => cpu('250m', s * 1000)),
        ...[200, 200].map((s) => cpu('2', s * 1000, { memory: '1Gi' })),
        cpu('4', 7000),
      ],
      expected: { samples: 6, p50Seconds: 3, p90Seconds: 7 },
    },
  ])('$what', ({ past, expected }) => {
    expect(waitEstimate(ask({ cpu: '2' }), past)).toEqual(expected);
  });

  it('reads the newest waits first, at most WAIT_ESTIMATE_SAMPLES_MAX', () => {
    const past = [
      ...Array.from({ length: WAIT_ESTIMATE_SAMPLES_MAX }, () => cpu('1', 1000)),
      ...Array.from({ length: 50 }, () => cpu('1', 60_000)),
    ];
    expect(waitEstimate(ask({ cpu: '1' }), past)).toEqual({ samples: WAIT_ESTIMATE_SAMPLES_MAX, p50Seconds: 1, p90Seconds: 1 });
  });

  it('property: p50 ≤ p90, both among the waits read, and similarity is symmetric', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ milli: fc.integer({ min: 1, max: 8000 }), ms: fc.integer({ min: 0, max: 600_000 }) }), { maxLength: 150 }),
        fc.integer({ min: 1, max: 8000 }),
        (waits, milli) => {
          const past = waits.map((w) => cpu(`${w.milli}m`, w.ms));
          const estimate = waitEstimate(ask({ cpu: `${milli}m` }), past);
          if (!estimate) return;
          expect(estimate.p50Seconds).toBeLessThanOrEqual(estimate.p90Seconds);
          const read = past.map((p) => p.waitedMs / 1000);
          expect(read).toContain(estimate.p50Seconds);
          expect(read).toContain(estimate.p90Seconds);
          for (const w of waits) {
            const one = [cpu(`${w.milli}m`, 0)];
            const there = (a: number, b: number) =>
              waitEstimate(
                ask({ cpu: `${a}m` }),
                Array(5)
                  .fill(one[0])
                  .map(() => cpu(`${b}m`, 0)),
              );
            expect(there(milli, w.milli) === undefined).toBe(there(w.milli, milli) === undefined);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
