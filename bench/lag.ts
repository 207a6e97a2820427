/**
 * The projection's lag under one saturated namespace, alone: the full bench's "hot namespace"
 * load (64 clients admitting pods into one namespace) against the built API and projection
 * worker as processes, with the lag sampled every 100 ms and the worker's steps read from its
 * /metrics (quota_ledger_projection_step_duration_seconds). Prints figures; asserts nothing.
 * The worker's settings come from the environment as in production (PROJECTION_STEP_MAX,
 * PROJECTION_COALESCE_MS, SNAPSHOT_EVERY, ...), so one setting can be measured beside another.
 *
 *   npm run build && npm run bench:lag [-- SECONDS [CLIENTS]]     (default 15 s, 64 clients)
 */
import 'reflect-metadata';
import { openDataSource, UsageProjection } from '@quota/ledger';
import { closedLoop, HttpClient } from './lib/load.js';
import { createDatabase } from './lib/postgres.js';
import { classifyReview, podReview, quotaPut } from './lib/review.js';
import {
  benchCredentials,
  builtAppsMissing,
  freePort,
  migrate,
  postgresCpuSeconds,
  sampler,
  startApi,
  startProjectionWorker,
} from './lib/service.js';
import { summarize } from './lib/stats.js';

const seconds = Number(process.argv[2] ?? 15);
const clients = Number(process.argv[3] ?? 64);
const missing = builtAppsMissing();
if (missing) {
  console.error(`bench:lag: ${missing}`);
  process.exit(2);
}

const credentials = benchCredentials();
const db = await createDatabase('lag');
migrate(db.url);
const api = await startApi(db.url, credentials);
const metricsPort = await freePort();
const worker = startProjectionWorker(db.url, { HOST: '127.0.0.1', METRICS_PORT: String(metricsPort) });
const client = new HttpClient(api.base, credentials.token, 256);
const lagSource = await openDataSource({ url: db.url, poolSize: 1 });
try {
  await client.must(quotaPut('hot', { pods: '10000000', 'requests.cpu': '100000' }));
  await closedLoop(client, { clients, seconds: 2, next: () => podReview('hot'), classify: classifyReview });
  const lag = new UsageProjection(lagSource);
  const before = await workerMetrics(metricsPort);
  const cpu0 = { api: api.cpuSeconds(), worker: worker.cpuSeconds(), postgres: postgresCpuSeconds() };
  const samples = sampler(async () => (await lag.lag()).lagMs, 100);
  const result = await closedLoop(client, { clients, seconds, next: () => podReview('hot'), classify: classifyReview });
  const lagMs = summarize(await samples.stop());
  const after = await workerMetrics(metricsPort);
  const admissions = result.byKind['admission'];
  const allowed = admissions?.ok ?? 0;
  const steps =
    (after.get('quota_ledger_projection_step_duration_seconds_count') ?? 0) -
    (before.get('quota_ledger_projection_step_duration_seconds_count') ?? 0);
  const stepSeconds =
    (after.get('quota_ledger_projection_step_duration_seconds_sum') ?? 0) -
    (before.get('quota_ledger_projection_step_duration_seconds_sum') ?? 0);
  const applied =
    (after.get('quota_ledger_projection_events_applied_total') ?? 0) - (before.get('quota_ledger_projection_events_applied_total') ?? 0);
  const cpuMsPerEvent = (s: number): string => ((s * 1000) / Math.max(1, applied)).toFixed(3);
  console.log(
    `hot namespace, ${clients} clients, ${seconds} s: ${Math.round(allowed / result.elapsedSeconds).toLocaleString('en-US')} admissions/s (${admissions?.errors ?? 0} errors)`,
  );
  console.log(
    `projection lag (every 100 ms, ${lagMs.count} samples): p50 ${Math.round(lagMs.p50)} ms, p95 ${Math.round(lagMs.p95)} ms, p99 ${Math.round(lagMs.p99)} ms, max ${Math.round(lagMs.max)} ms`,
  );
  console.log(
    `worker steps: ${steps} applying ${applied.toLocaleString('en-US')} events (${(applied / Math.max(1, steps)).toFixed(0)} a step), ${((stepSeconds * 1000) / Math.max(1, steps)).toFixed(1)} ms a step on average`,
  );
  console.log('steps by duration (ms, at most):');
  console.table(bucketsOf(before, after));
  // Caught up, and a moment for the worker's last snapshot (written after its step).
  while ((await lag.lag()).eventsBehind > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const [written] = await lagSource.query<{ n: number; largest: number | null }[]>(
    `SELECT count(*)::int AS n, max(jsonb_array_length(reservations))::int AS largest FROM usage_snapshots WHERE namespace = 'hot'`,
  );
  console.log(
    `snapshots of the namespace: ${written?.n ?? 0} (the largest with ${written?.largest ?? 0} live reservations), written after their steps`,
  );
  console.log(
    `CPU ms per applied event: worker ${cpuMsPerEvent(worker.cpuSeconds() - cpu0.worker)}; per admission: api ${(((api.cpuSeconds() - cpu0.api) * 1000) / Math.max(1, allowed)).toFixed(3)}, postgres ${(((postgresCpuSeconds() - cpu0.postgres) * 1000) / Math.max(1, allowed)).toFixed(3)}`,
  );
} finally {
  client.close();
  await lagSource.destroy();
  await worker.stop();
  await api.stop();
  credentials.remove();
  await db.drop();
}

/** Every sample of the worker's /metrics, by its name with its labels (`name{le="0.1"}`). */
async function workerMetrics(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-z_:][a-z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) samples.set(match[1] as string, Number(match[2]));
  }
  return samples;
}

/** The step histogram's buckets over the load (not cumulative): how many steps took at most `le` ms. */
function bucketsOf(before: Map<string, number>, after: Map<string, number>): Record<string, { steps: number }> {
  const rows: Record<string, { steps: number }> = {};
  let below = 0;
  for (const [key, value] of after) {
    const le = /^quota_ledger_projection_step_duration_seconds_bucket\{le="([^"]+)"\}$/.exec(key)?.[1];
    if (le === undefined) continue;
    const cumulative = value - (before.get(key) ?? 0);
    rows[le === '+Inf' ? 'more' : String(Number(le) * 1000)] = { steps: cumulative - below };
    below = cumulative;
  }
  return rows;
}
