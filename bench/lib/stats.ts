/** Latency summaries: nearest-rank percentiles over a sorted copy, in milliseconds. */
export interface Latency {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  readonly count: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

export function summarize(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? 0,
    count: sorted.length,
  };
}

/** One decimal for milliseconds, none for rates: what a person reads in the table. */
export const ms = (value: number): number => Math.round(value * 10) / 10;
export const ratio = (value: number, base: number): number => (base > 0 ? Math.round((value / base) * 100) / 100 : 0);
