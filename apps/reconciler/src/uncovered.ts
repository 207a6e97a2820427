import type { Uncovered } from '@quota/domain';

/** Namespaces whose report is kept at most; past it, the oldest report is forgotten first. */
export const UNCOVERED_NAMESPACES_MAX = 10_000;

/**
 * Per namespace, the live reservations of kinds the inventory does not list, as its last
 * reconcile left them (only namespaces that have some): no listing can settle them, so the
 * reconciler reports them (the `quota_ledger_reconciler_uncovered_reservations` gauge, a log
 * line when they first appear).
 *
 * Bounded two ways (the map once grew without bound). A report older than `maxAgeMs` is
 * dropped: every namespace with a stream is reconciled every interval, by this replica or
 * another, so a namespace that disappeared, or that another replica now reconciles, stops
 * counting here after two intervals. And at most `max` namespaces are kept, the oldest report
 * going first. Reports are kept in the order they were made, so both take the oldest first.
 */
export class UncoveredReports {
  private readonly reports = new Map<
    string,
    { readonly at: number; readonly uncovered: readonly Uncovered[]; readonly unconfirmed: number }
  >();

  constructor(
    private readonly maxAgeMs: number,
    private readonly max = UNCOVERED_NAMESPACES_MAX,
  ) {}

  get size(): number {
    return this.reports.size;
  }

  has(namespace: string): boolean {
    return this.reports.has(namespace);
  }

  /** The webhook's reservations the namespace's last listing did not find (ReconcileOutcome.unconfirmed), 0 when none is reported. */
  unconfirmed(namespace: string): number {
    return this.reports.get(namespace)?.unconfirmed ?? 0;
  }

  /** What the namespace's reconcile at `at` (epoch ms) left uncovered and unconfirmed; none of either forgets it. */
  record(namespace: string, uncovered: readonly Uncovered[], at: number, unconfirmed = 0): void {
    this.reports.delete(namespace);
    this.prune(at);
    if (uncovered.length === 0 && unconfirmed === 0) return;
    this.reports.set(namespace, { at, uncovered, unconfirmed });
    for (const oldest of this.reports.keys()) {
      if (this.reports.size <= this.max) break;
      this.reports.delete(oldest);
    }
  }

  /** Live uncovered reservations by resource, over the reports still current at `now`. */
  totals(now: number): Map<string, number> {
    this.prune(now);
    const totals = new Map<string, number>();
    for (const { uncovered } of this.reports.values())
      for (const { resource, count } of uncovered) totals.set(resource, (totals.get(resource) ?? 0) + count);
    return totals;
  }

  /** The webhook's reservations waiting for objects the listings did not find, over the reports still current at `now`. */
  unconfirmedTotal(now: number): number {
    this.prune(now);
    let total = 0;
    for (const { unconfirmed } of this.reports.values()) total += unconfirmed;
    return total;
  }

  private prune(now: number): void {
    for (const [namespace, report] of this.reports) {
      if (report.at >= now - this.maxAgeMs) break;
      this.reports.delete(namespace);
    }
  }
}
