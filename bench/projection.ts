/**
 * The projection worker and as-of queries on one long namespace history, in-process: how
 * fast the worker catches up (events/s), and how long `UsageQueries.usageAt` takes at random
 * instants once snapshots exist. (`npm run bench` measures the same over HTTP.) Prints
 * figures; asserts nothing.
 *
 *   npm run bench:projection [-- EVENTS]     (default 200,000)
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, UsageQueries } from '@quota/ledger';
import { instantIn, LONG_NAMESPACE, writeLongHistory } from './lib/history.js';
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
  console.log(`events in the namespace:      ${history.events.toLocaleString('en-US')}`);
  console.log(`projection catch-up:          ${history.catchUpSeconds.toFixed(1)} s = ${Math.round(history.catchUpPerSecond).toLocaleString('en-US')} events/s (batches of 5,000, snapshot every 1,000)`);
  console.log(`usage?at= (200 random instants): p50 ${asOf.p50.toFixed(1)} ms, p95 ${asOf.p95.toFixed(1)} ms, p99 ${asOf.p99.toFixed(1)} ms`);
} finally {
  if (dataSource.isInitialized) await dataSource.destroy();
  await db.drop();
}
