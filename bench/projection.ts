/**
 * The projection worker and as-of queries on one long namespace history, in-process: how
 * fast the worker catches up (events/s), where a catch-up's time goes (per statement, from a
 * rebuild of the same history), and how long `UsageQueries.usageAt` and a 500-point
 * `usageSeries` take at random instants. (`npm run bench` measures the same over HTTP.)
 * Prints figures; asserts nothing.
 *
 *   npm run bench:projection [-- EVENTS]     (default 200,000)
 */
import 'reflect-metadata';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, UsageProjection, UsageQueries } from '@quota/ledger';
import { instantIn, LONG_NAMESPACE, rangeIn, writeLongHistory } from './lib/history.js';
import { createDatabase } from './lib/postgres.js';
import { summarize } from './lib/stats.js';

const total = Number(process.argv[2] ?? 200_000);
const db = await createDatabase('proj');
const dataSource = new DataSource(buildDataSourceOptions({ url: db.url, poolSize: 4 }));
try {
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  const history = await writeLongHistory(db.url, total);
  const ledger = new UsageQueries(dataSource);
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) {
    const s = performance.now();
    await ledger.usageAt(LONG_NAMESPACE, instantIn(history));
    samples.push(performance.now() - s);
  }
  const asOf = summarize(samples);
  const seriesSamples: number[] = [];
  for (let i = 0; i < 20; i++) {
    const s = performance.now();
    await ledger.usageSeries(LONG_NAMESPACE, { ...rangeIn(history, 7 * 24 * 3600_000), points: 500 });
    seriesSamples.push(performance.now() - s);
  }
  const series = summarize(seriesSamples);
  const breakdown = await rebuildBreakdown();
  console.log(`events in the namespace:      ${history.events.toLocaleString('en-US')}`);
  console.log(
    `projection catch-up:          ${history.catchUpSeconds.toFixed(1)} s = ${Math.round(history.catchUpPerSecond).toLocaleString('en-US')} events/s (batches of 5,000, snapshot every 10,000: the default); Node CPU ${history.catchUpNodeMicrosPerEvent.toFixed(1)} µs per event`,
  );
  console.log(
    `usage?at= (200 random instants): p50 ${asOf.p50.toFixed(1)} ms, p95 ${asOf.p95.toFixed(1)} ms, p99 ${asOf.p99.toFixed(1)} ms`,
  );
  console.log(`usage series of 500 points over a week (20 random weeks): p50 ${series.p50.toFixed(1)} ms, p99 ${series.p99.toFixed(1)} ms`);
  console.log(
    `where a rebuild of the same history spends its ${breakdown.seconds.toFixed(1)} s (${Math.round(breakdown.perSecond).toLocaleString('en-US')} events/s): per statement, from send to answer; the rest is the fold in Node`,
  );
  console.table(breakdown.statements);
} finally {
  if (dataSource.isInitialized) await dataSource.destroy();
  await db.drop();
}

/** A rebuild of the projection with every statement timed (from the call to its answer), grouped by the statement's start. */
async function rebuildBreakdown(): Promise<{
  seconds: number;
  perSecond: number;
  statements: Record<string, { calls: number; ms: number }>;
}> {
  const times = new Map<string, { calls: number; ms: number }>();
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as { query: unknown }).query = function timed(this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const key = (typeof first === 'string' ? first : (first?.text ?? '')).replace(/\s+/g, ' ').trim().slice(0, 60);
    const t0 = performance.now();
    const answer = query.apply(this, args);
    const done = (): void => {
      const entry = times.get(key) ?? { calls: 0, ms: 0 };
      entry.calls++;
      entry.ms += performance.now() - t0;
      times.set(key, entry);
    };
    if (answer instanceof Promise) answer.then(done, () => undefined);
    return answer;
  };
  try {
    const projection = new UsageProjection(dataSource, { batchSize: 5000 });
    const t0 = performance.now();
    const applied = await projection.rebuild();
    const seconds = (performance.now() - t0) / 1000;
    const statements = Object.fromEntries(
      [...times]
        .sort((a, b) => b[1].ms - a[1].ms)
        .slice(0, 10)
        .map(([key, { calls, ms }]) => [key, { calls, ms: Math.round(ms) }]),
    );
    return { seconds, perSecond: applied / seconds, statements };
  } finally {
    (pg.Client.prototype as { query: unknown }).query = query;
  }
}
