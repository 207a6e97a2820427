import type { History } from './history.js';
import type { ReconcileFigures } from './reconcile.js';
import type { ServiceRun } from './service-run.js';
import { ms, ratio, type Latency } from './stats.js';

/** The bench's targets (bench/run.ts), each judged met or missed on the run's figures. Asserts nothing. */

export interface Target {
  readonly target: string;
  readonly goal: number;
  readonly value: number;
  readonly higherIsBetter: boolean;
  readonly met: 'met' | 'MISSED' | 'not run';
}

/** The figures the targets are judged on. */
export interface TargetFigures {
  /** The service's loads, in the order run.ts runs them: low contention, hot namespace, mixed, 70% of peak. */
  readonly runs: readonly ServiceRun[];
  /** Baseline (a)'s admissions per second on this many namespaces. */
  readonly baselineA: (namespaces: number) => number;
  readonly overAdmitted: number;
  readonly history: History;
  readonly asOf: Latency;
  readonly series: readonly { readonly points: number; readonly latency: Latency }[];
  readonly reconcileNamespaces: number;
  /** Absent when the reconcile bench was skipped. */
  readonly reconcileDone: ReconcileFigures | undefined;
  readonly rssMaxMiB: number;
}

export function benchTargets(figures: TargetFigures): Target[] {
  const { runs, baselineA, overAdmitted, history, asOf, series, reconcileNamespaces, reconcileDone, rssMaxMiB } = figures;
  /** The API's share of the CPU one admission costs (API, PostgreSQL, projection worker; not the load generator), in %. */
  const apiShare = (r: ServiceRun | undefined): number =>
    r
      ? (100 * r.cpuMsPerRequest.api) / Math.max(1e-9, r.cpuMsPerRequest.api + r.cpuMsPerRequest.postgres + r.cpuMsPerRequest.worker)
      : Number.NaN;
  return [
    {
      target: 'low contention ≥ 0.4 × (a) (moonshot 0.6)',
      goal: 0.4,
      value: ratio(runs[0]?.perSecond ?? 0, baselineA(1000)),
      higherIsBetter: true,
    },
    { target: 'hot namespace ≥ 1.5 × (a)', goal: 1.5, value: ratio(runs[1]?.perSecond ?? 0, baselineA(1)), higherIsBetter: true },
    { target: 'API CPU ≤ 25 % of all CPU per admission (low contention)', goal: 25, value: ms(apiShare(runs[0])), higherIsBetter: false },
    { target: 'over-admission = 0', goal: 0, value: overAdmitted, higherIsBetter: false },
    {
      target: 'lost + unacknowledged = 0 (every load)',
      goal: 0,
      value: runs.reduce((sum, r) => sum + r.lost + r.unacknowledged, 0),
      higherIsBetter: false,
    },
    { target: 'p99 < 20 ms at 70% of peak', goal: 20, value: ms(runs[3]?.latency.p99 ?? 0), higherIsBetter: false },
    { target: 'projection lag p99 < 500 ms at 70% of peak', goal: 500, value: ms(runs[3]?.projectionLag.p99 ?? 0), higherIsBetter: false },
    {
      target: 'projection lag p99 < 500 ms, saturated loads',
      goal: 500,
      value: ms(Math.max(...runs.slice(0, 3).map((r) => r.projectionLag.p99))),
      higherIsBetter: false,
    },
    {
      target: `as-of p99 on ${history.events.toLocaleString('en-US')} events < 10 ms`,
      goal: 10,
      value: ms(asOf.p99),
      higherIsBetter: false,
    },
    ...series.map((s) => {
      const goal = s.points <= 100 ? 100 : 300;
      return { target: `usage series of ${s.points} points p99 < ${goal} ms`, goal, value: ms(s.latency.p99), higherIsBetter: false };
    }),
    { target: 'projection catch-up ≥ 50,000 events/s', goal: 50_000, value: Math.round(history.catchUpPerSecond), higherIsBetter: true },
    {
      target: `reconcile ${reconcileNamespaces} × 100 < ${reconcileNamespaces === 1000 ? 30 : 3} s`,
      goal: reconcileNamespaces === 1000 ? 30 : 3,
      value: reconcileDone ? ms(reconcileDone.seconds) : Number.NaN,
      higherIsBetter: false,
    },
    { target: 'API RSS under load < 250 MB', goal: 250, value: Math.round(rssMaxMiB), higherIsBetter: false },
  ].map((t) => ({
    ...t,
    met: Number.isNaN(t.value)
      ? 'not run'
      : (t.higherIsBetter ? t.value >= t.goal : t.goal === 0 ? t.value === 0 : t.value < t.goal)
        ? 'met'
        : 'MISSED',
  }));
}
