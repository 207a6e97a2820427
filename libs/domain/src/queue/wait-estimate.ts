import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';

/** One past wait of a namespace's queue: what the waiter asked for and how long it waited until admitted. */
export interface PastWait {
  readonly resources: ResourceList;
  readonly waitedMs: number;
}

/** How long waiters like this one waited before admission, as the ledger recorded it (nearest-rank percentiles). */
export interface WaitEstimate {
  /** The past waits the percentiles are taken over (at least WAIT_ESTIMATE_SAMPLES_MIN). */
  readonly samples: number;
  readonly p50Seconds: number;
  readonly p90Seconds: number;
}

/** Fewer similar past waits than this give no estimate: two or three waits say little of the next. */
export const WAIT_ESTIMATE_SAMPLES_MIN = 5;
/** The most recent similar waits the estimate reads; older ones describe a namespace that has changed since. */
export const WAIT_ESTIMATE_SAMPLES_MAX = 100;

/**
 * The wait to expect for a waiter asking for `resources`, from `past` (newest first): the waits of
 * waiters that asked for the same resources, each within a factor of two of this one's amount (a
 * 2-CPU request is not timed by 100-millicore ones), the newest WAIT_ESTIMATE_SAMPLES_MAX of them.
 * Undefined below WAIT_ESTIMATE_SAMPLES_MIN such waits: no estimate rather than a guess.
 */
export function waitEstimate(resources: ResourceList, past: readonly PastWait[]): WaitEstimate | undefined {
  const waits: number[] = [];
  for (const wait of past) {
    if (waits.length >= WAIT_ESTIMATE_SAMPLES_MAX) break;
    if (similar(resources, wait.resources)) waits.push(Math.max(0, wait.waitedMs));
  }
  if (waits.length < WAIT_ESTIMATE_SAMPLES_MIN) return undefined;
  waits.sort((a, b) => a - b);
  const rank = (p: number) => waits[Math.ceil((p / 100) * waits.length) - 1] ?? 0;
  return { samples: waits.length, p50Seconds: rank(50) / 1000, p90Seconds: rank(90) / 1000 };
}

/** The same resource names, each amount within a factor of two of the other's. */
function similar(a: ResourceList, b: ResourceList): boolean {
  const names = Resources.resourceNames(Resources.withoutZeros(a));
  if (names.length === 0 || names.length !== Resources.resourceNames(Resources.withoutZeros(b)).length) return false;
  return names.every((name) => {
    const x = Resources.get(a, name);
    const y = Resources.get(b, name);
    if (!x || !y || y.sign() !== 1) return false;
    return x.cmp(y.add(y)) <= 0 && y.cmp(x.add(x)) <= 0;
  });
}
