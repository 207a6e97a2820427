/**
 * The projection worker and as-of queries on one long namespace history: how fast the worker
 * catches up (events/s), and how long `usageAt` takes at random instants once snapshots
 * exist. The history is written straight into ledger_events with SQL (valid Reserved /
 * Committed / Released sequences, ~1,000 live reservations), because the admission path is
 * measured by bench/admission.ts. Prints figures; asserts nothing.
 *
 *   npm run bench:projection [-- EVENTS]     (default 200,000)
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, Ledger, UsageProjection } from '@quota/ledger';

const ADMIN_URL = process.env['BENCH_DATABASE_ADMIN_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const total = Number(process.argv[2] ?? 200_000);
const name = `qlbench_proj_${randomBytes(4).toString('hex')}`;
const urlOf = (db: string): string => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${db}`;
  return url.toString();
};

const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const dataSource = new DataSource(buildDataSourceOptions({ url: urlOf(name), poolSize: 4 }));
try {
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  const pool = (dataSource.driver as unknown as { master: pg.Pool }).master;
  const start = Date.UTC(2026, 0, 1);
  // Per cycle of 3 versions: Reserved r_i, Committed r_i, Released r_(i-1000). Version 1 defines the quota.
  await pool.query(
    `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor, recorded_at)
     SELECT 'long', 1, 'QuotaDefined', 1, '{"name":"compute","spec":{"hard":{"pods":"100k","requests.cpu":"1000"}}}', 'bench', to_timestamp($1 / 1000.0)`,
    [start],
  );
  const facts = '{"Terminating":false,"NotTerminating":true,"BestEffort":false,"NotBestEffort":true,"PriorityClass":[],"CrossNamespacePodAffinity":false}';
  // Cycle i: Reserved r_i, Committed r_i, and (from i = 1,000 on) Released r_(i-1000): about
  // 1,000 live reservations throughout. Versions are numbered gap-free as the rows are made.
  await pool.query(
    `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor, recorded_at)
     SELECT 'long', 1 + row_number() OVER (ORDER BY i, k), t, 1, d::jsonb, 'bench', to_timestamp(($1 + (1 + row_number() OVER (ORDER BY i, k)) * 1000) / 1000.0)
       FROM generate_series(0, $2::int / 3) AS i, generate_series(0, 2) AS k,
       LATERAL (SELECT CASE k WHEN 0 THEN 'Reserved' WHEN 1 THEN 'Committed' ELSE 'Released' END AS t,
                       CASE k WHEN 0 THEN format('{"reservationId":"r%s","object":{"group":"","resource":"pods","uid":"u%s"},"operation":"CREATE","charged":{"pods":"1","requests.cpu":"100m"},"scopeFacts":%s}', i, i, $3::text)
                              WHEN 1 THEN format('{"reservationId":"r%s"}', i)
                              ELSE CASE WHEN i >= 1000 THEN format('{"reservationId":"r%s","reason":"deleted"}', i - 1000) END END AS d) x
      WHERE d IS NOT NULL`,
    [start, total, facts],
  );
  const { rows: count } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ledger_events WHERE namespace = 'long'`);
  const events = Number(count[0]?.n);
  await pool.query(`INSERT INTO namespace_heads (namespace, version, state) VALUES ('long', $1, '{"quotas":[],"limitRanges":[],"releasedCount":0}')`, [events]);
  await pool.query('ANALYZE');

  const projection = new UsageProjection(pool, { batchSize: 5000, snapshotEvery: 1000 });
  const t0 = performance.now();
  const applied = await projection.catchUp();
  const catchUpMs = performance.now() - t0;

  const ledger = new Ledger(dataSource);
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) {
    const at = new Date(start + Math.floor(Math.random() * events) * 1000).toISOString();
    const s = performance.now();
    await ledger.usageAt('long', at);
    samples.push(performance.now() - s);
  }
  samples.sort((a, b) => a - b);
  const pct = (p: number): string => (samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] ?? 0).toFixed(1);
  console.log(`events in the namespace:      ${events.toLocaleString('en-US')}`);
  console.log(`projection catch-up:          ${applied.toLocaleString('en-US')} events in ${(catchUpMs / 1000).toFixed(1)} s = ${Math.round(applied / (catchUpMs / 1000)).toLocaleString('en-US')} events/s (batches of 5,000, snapshot every 1,000)`);
  console.log(`usage?at= (200 random instants): p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, p99 ${pct(0.99)} ms`);
  await ledger.close();
} finally {
  if (dataSource.isInitialized) await dataSource.destroy();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
