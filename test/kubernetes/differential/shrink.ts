import type { Op } from './operations.js';

/**
 * Delta debugging (Zeller's ddmin, complements only) of a failing sequence: drop chunks of
 * steps while the rest still fails, halving the chunks when none can go. Every trial is a
 * replay on real namespaces, so the search stops at `budgetMs` with the shortest found so far.
 * Steps whose object no longer exists are skipped by the replay, so any subsequence is playable;
 * `fails` answers the steps played up to the failure (the replay may fail sooner), or undefined.
 */
export async function shrink(
  ops: readonly Op[],
  fails: (candidate: readonly Op[]) => Promise<readonly Op[] | undefined>,
  budgetMs: number,
): Promise<{ ops: readonly Op[]; trials: number; complete: boolean }> {
  const deadline = Date.now() + budgetMs;
  let current = ops;
  let chunks = 2;
  let trials = 0;
  // The last step, which shows the failure, stays; chunks of the steps before it are dropped.
  while (current.length > 1) {
    const before = current.length - 1;
    const size = Math.ceil(before / chunks);
    let reduced = false;
    // From the end backwards: what leads to the failure is usually near it.
    for (let start = Math.floor((before - 1) / size) * size; start >= 0 && !reduced; start -= size) {
      if (Date.now() > deadline) return { ops: current, trials, complete: false };
      const candidate = [...current.slice(0, start), ...current.slice(Math.min(start + size, before))];
      trials++;
      const failed = await fails(candidate);
      if (failed) {
        current = failed;
        chunks = Math.max(chunks - 1, 2);
        reduced = true;
      }
    }
    if (!reduced) {
      if (size === 1) return { ops: current, trials, complete: true };
      chunks = Math.min(before, chunks * 2);
    }
  }
  return { ops: current, trials, complete: true };
}
