import fc from 'fast-check';
import { Resources } from '@quota/domain';
import { describe, expect, it } from 'vitest';
import { mergeChanges, type SeriesEntry } from './shared-usage-series.js';

type Change = { readonly atMs: number; readonly pods: number };

/** The step function the changes make: at each instant any of them has, the sum of those at or before it. */
function expected(changes: readonly Change[]): { atMs: number; pods: number }[] {
  const instants = [...new Set(changes.map((c) => c.atMs))].sort((a, b) => a - b);
  return instants.map((atMs) => ({ atMs, pods: changes.filter((c) => c.atMs <= atMs).reduce((sum, c) => sum + c.pods, 0) }));
}

const pods = (entries: readonly SeriesEntry[]) =>
  entries.map((e) => ({ atMs: e.atMs, pods: Number(Resources.get(e.total, 'pods')?.value() ?? 0n) }));
const delta = (c: Change) => ({ atMs: c.atMs, delta: Resources.resourceList({ pods: String(c.pods) }) });

describe('the shared usage series: merging a step’s changes into the stored totals', () => {
  it('adds a change to every total from its instant on, and starts an instant at the total before it', () => {
    const stored = mergeChanges([], [delta({ atMs: 10, pods: 2 }), delta({ atMs: 30, pods: 1 })]);
    expect(pods(mergeChanges(stored, [delta({ atMs: 20, pods: 5 }), delta({ atMs: 30, pods: -1 }), delta({ atMs: 5, pods: 1 })]))).toEqual([
      { atMs: 5, pods: 1 },
      { atMs: 10, pods: 3 },
      { atMs: 20, pods: 8 },
      { atMs: 30, pods: 8 },
    ]);
  });

  it('property: changes merged in any order, in any batches, from any suffix holding the batch’s earliest, make the step function of them all', () => {
    const change = fc.record({ atMs: fc.integer({ min: 0, max: 40 }), pods: fc.integer({ min: -3, max: 5 }) });
    fc.assert(
      fc.property(fc.array(fc.array(change, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 8 }), fc.nat(), (batches, pick) => {
        let stored: SeriesEntry[] = [];
        for (const batch of batches) {
          // What flush reads: the rows from the one holding the batch's earliest change on; any
          // suffix starting at or before the last instant at or before it.
          const earliest = Math.min(...batch.map((c) => c.atMs));
          const holding = stored.reduce((last, e, i) => (e.atMs <= earliest ? i : last), 0);
          const from = stored.length === 0 ? 0 : pick % (holding + 1);
          stored = [...stored.slice(0, from), ...mergeChanges(stored.slice(from), batch.map(delta))];
        }
        expect(pods(stored)).toEqual(expected(batches.flat()));
      }),
      { numRuns: 500 },
    );
  });
});
