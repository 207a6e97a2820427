import pg from 'pg';
import { openDataSource, UsageProjection } from '@quota/ledger';

/**
 * A long namespace history written straight into ledger_events with SQL (valid Reserved /
 * Committed / Released sequences, ~1,000 live reservations throughout), because the
 * admission path is measured elsewhere and a million admissions would take the run's whole
 * budget. Then the projection worker's catch-up over it, which also writes the snapshots
 * that as-of queries start from.
 */
export const LONG_NAMESPACE = 'long';
export const HISTORY_START_MS = Date.UTC(2026, 0, 1);

export interface History {
  readonly events: number;
  readonly catchUpSeconds: number;
  readonly catchUpPerSecond: number;
  /** CPU time of this process (the fold in Node, the driver) per event applied, in µs: steadier than the wall clock on a shared machine. */
  readonly catchUpNodeMicrosPerEvent: number;
}

export async function writeLongHistory(databaseUrl: string, approximateEvents: number): Promise<History> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  try {
    // Version 1 defines the quota; then one event per second of simulated time.
    await pool.query(
      `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor, recorded_at)
       SELECT $2, 1, 'QuotaDefined', 1, '{"name":"compute","spec":{"hard":{"pods":"100k","requests.cpu":"1000"}}}', 'bench', to_timestamp($1 / 1000.0)`,
      [HISTORY_START_MS, LONG_NAMESPACE],
    );
    const facts =
      '{"Terminating":false,"NotTerminating":true,"BestEffort":false,"NotBestEffort":true,"PriorityClass":[],"CrossNamespacePodAffinity":false}';
    // Cycle i: Reserved r_i, Committed r_i, and (from i = 1,000 on) Released r_(i-1000).
    // Versions are numbered gap-free as the rows are made.
    await pool.query(
      `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor, recorded_at)
       SELECT $4, 1 + row_number() OVER (ORDER BY i, k), t, 1, d::jsonb, 'bench', to_timestamp(($1 + (1 + row_number() OVER (ORDER BY i, k)) * 1000) / 1000.0)
         FROM generate_series(0, $2::int / 3) AS i, generate_series(0, 2) AS k,
         LATERAL (SELECT CASE k WHEN 0 THEN 'Reserved' WHEN 1 THEN 'Committed' ELSE 'Released' END AS t,
                         CASE k WHEN 0 THEN format('{"reservationId":"r%s","object":{"group":"","resource":"pods","uid":"u%s"},"operation":"CREATE","charged":{"pods":"1","requests.cpu":"100m"},"scopeFacts":%s}', i, i, $3::text)
                                WHEN 1 THEN format('{"reservationId":"r%s"}', i)
                                ELSE CASE WHEN i >= 1000 THEN format('{"reservationId":"r%s","reason":"deleted"}', i - 1000) END END AS d) x
        WHERE d IS NOT NULL`,
      [HISTORY_START_MS, approximateEvents, facts, LONG_NAMESPACE],
    );
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ledger_events WHERE namespace = $1`, [LONG_NAMESPACE]);
    const events = Number(rows[0]?.n);
    await pool.query(
      `INSERT INTO namespace_heads (namespace, version, state) VALUES ($1, $2, '{"quotas":[],"limitRanges":[],"releasedCount":0}')`,
      [LONG_NAMESPACE, events],
    );
    await pool.query('ANALYZE');
    const dataSource = await openDataSource({ url: databaseUrl, poolSize: 2 });
    const projection = new UsageProjection(dataSource, { batchSize: 5000 });
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const applied = await projection.catchUp().finally(() => dataSource.destroy());
    const cpu = process.cpuUsage(cpu0);
    const catchUpSeconds = (performance.now() - t0) / 1000;
    return {
      events,
      catchUpSeconds,
      catchUpPerSecond: applied / catchUpSeconds,
      catchUpNodeMicrosPerEvent: (cpu.user + cpu.system) / Math.max(1, applied),
    };
  } finally {
    await pool.end();
  }
}

/** The history's last instant: version v (v ≥ 2) is recorded v seconds after HISTORY_START_MS. */
export function historyEndMs(history: History): number {
  return HISTORY_START_MS + history.events * 1000;
}

/**
 * How long a range `rangeIn` picks: `spanMs`, or 90% of the history when that is shorter.
 * Not the whole history: every request would sample the same instants, and 100 points over
 * the quick run's 100,000 events would land right on the 1,000-event snapshot grid, which
 * flatters every fold that starts from a snapshot.
 */
export function spanIn(history: History, spanMs: number): number {
  return Math.min(spanMs, Math.floor((historyEndMs(history) - HISTORY_START_MS) * 0.9));
}

/** A random range of `spanIn(history, spanMs)` inside the history. */
export function rangeIn(history: History, spanMs: number): { readonly since: string; readonly until: string } {
  const span = spanIn(history, spanMs);
  const since = HISTORY_START_MS + Math.floor(Math.random() * (historyEndMs(history) - HISTORY_START_MS - span));
  return { since: new Date(since).toISOString(), until: new Date(since + span).toISOString() };
}

/** A random instant inside the history. */
export function instantIn(history: History): string {
  return new Date(HISTORY_START_MS + Math.floor(Math.random() * history.events) * 1000).toISOString();
}
