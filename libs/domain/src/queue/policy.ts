import type { Waiter } from '../events/state.js';
import type { ResourceList } from '../resources/resource-list.js';

/**
 * The queue's policy, BestEffortFIFO as Kueue names it, with a bound: waiters are
 * tried in order (priority desc, then arrival); one that does not fit is passed by smaller ones
 * behind it that do, until it has been passed `passMax` times or has waited `passMs`: from then
 * on it is *blocking*, and nothing ordered after it is admitted (queued or new with a wait)
 * until it is admitted, cancelled or expired. So a big request at the head waits at most
 * `passMs` (or `passMax` admissions) for room that smaller ones would otherwise keep taking.
 */
export interface QueuePolicy {
  /** Admissions from behind a waiter after which it blocks the queue. */
  readonly passMax: number;
  /** Time a waiter may wait (ms) before it blocks the queue, passed or not. */
  readonly passMs: number;
  /** Most queued reservations in one namespace. */
  readonly perNamespaceMax: number;
  /**
   * The most one principal's blocking waiters may ask for together, in percent of the hard limit
   * of each quota limiting what they ask for (BlockingShares); 100: no bound.
   */
  readonly blockSharePercent: number;
}

export const DEFAULT_QUEUE_POLICY: QueuePolicy = { passMax: 8, passMs: 60_000, perNamespaceMax: 100, blockSharePercent: 50 };

/** Whether a waiter that does not fit stops everything ordered after it. */
export function isBlocking(waiter: Pick<Waiter, 'passed' | 'queuedAt'>, now: number, policy: QueuePolicy): boolean {
  return waiter.passed >= policy.passMax || now - waiter.queuedAt >= policy.passMs;
}

/** A label or annotation that weights a namespace's fair share of the shared quotas covering it. */
export const FAIR_SHARE_WEIGHT_KEY = 'quota-ledger.io/fair-share-weight';

export const FAIR_SHARE_WEIGHT_MAX = 1000;

/** A namespace's weight from its labels or annotations (an integer 1..1000; anything else: 1). */
export function fairShareWeight(
  meta: { readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> } | undefined,
): number {
  const raw = meta?.labels?.[FAIR_SHARE_WEIGHT_KEY] ?? meta?.annotations?.[FAIR_SHARE_WEIGHT_KEY];
  if (raw === undefined || !/^[1-9][0-9]{0,3}$/.test(raw)) return 1;
  return Math.min(Number(raw), FAIR_SHARE_WEIGHT_MAX);
}

/** An exact non-negative fraction (no float ever touches a quota). */
export interface Share {
  readonly num: bigint;
  readonly den: bigint;
}

export const compareShares = (a: Share, b: Share): number => {
  const left = a.num * b.den;
  const right = b.num * a.den;
  return left < right ? -1 : left > right ? 1 : 0;
};

/**
 * A namespace's weighted dominant share of a shared quota (DRF): the largest, over the quota's
 * hard resources, of what the namespace uses of it over the hard limit, divided by its weight.
 */
export function weightedDominantShare(used: ResourceList, hard: ResourceList, weight: number): Share {
  let best: Share = { num: 0n, den: 1n };
  for (const [resource, limit] of Object.entries(hard)) {
    const part = used[resource];
    if (!part || limit.nanos <= 0n) continue;
    const share = { num: part.nanos < 0n ? 0n : part.nanos, den: limit.nanos };
    if (compareShares(share, best) > 0) best = share;
  }
  return { num: best.num, den: best.den * BigInt(Math.max(1, weight)) };
}

/** One namespace waiting under a shared quota: its weight, what it uses of the quota now, and the priority of its waiter to serve next. */
export interface FairShareCandidate {
  readonly namespace: string;
  readonly weight: number;
  readonly used: ResourceList;
  /** Its next waiter's priority (absent: 0); a higher one is served first, whatever the shares. */
  readonly priority?: number;
}

/**
 * Which namespace a shared quota serves next when room frees: the one whose next waiter has the
 * highest priority (priority orders across the quota's namespaces as within one), then, among
 * equals, the lowest weighted dominant share, then the namespace name (deterministic). Pure: the
 * caller tries the first one's queue head, and on admission recomputes (its share grew), so over
 * time each waiting namespace of a priority receives freed capacity in proportion to its weight.
 */
export function fairShareOrder(candidates: readonly FairShareCandidate[], hard: ResourceList): FairShareCandidate[] {
  const shares = new Map(candidates.map((c) => [c.namespace, weightedDominantShare(c.used, hard, c.weight)]));
  const shareOf = (c: FairShareCandidate): Share => shares.get(c.namespace) ?? { num: 0n, den: 1n };
  return [...candidates].sort(
    (a, b) =>
      (b.priority ?? 0) - (a.priority ?? 0) ||
      compareShares(shareOf(a), shareOf(b)) ||
      (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0),
  );
}
