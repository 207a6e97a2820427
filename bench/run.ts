/**
 * The benchmark: the service over HTTP against the direct-SQL baselines, in one run, as
 * ratios (these machines are shared and noisy: absolute figures drift, ratios hold).
 *
 *   npm run bench               full run (~6 min): 15 s per load, 1,000,000-event history,
 *                               1,000 namespaces × 100 objects to reconcile
 *   npm run bench -- --quick    smoke check (< 2 min): 3-4 s per load, 100,000 events, 100 × 100
 *
 * Needs the machine's PostgreSQL (BENCH_DATABASE_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres;
 * each part makes and drops a database of its own), Redis for the reconciler (BENCH_REDIS_URL),
 * and pgbench; to count each load's writes (WAL bytes, rows and index entries per admission, per
 * table) in its own database, pg_waldump and the server's pg_wal readable (else only the whole
 * server's WAL is shown). Prints tables and writes bench/results/<date>[-quick].json. Asserts nothing:
 * the targets are printed as met or missed with their margin.
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDataSource, UsageProjection } from '@quota/ledger';
import { DESIGNS, pgbenchAvailable, runBaseline, type BaselineDesign, type BaselineFigure } from './lib/baselines.js';
import { measureFloor } from './lib/floor.js';
import { instantIn, LONG_NAMESPACE, rangeIn, spanIn, writeLongHistory } from './lib/history.js';
import { closedLoop, HttpClient, openLoop, type KindFigures, type LoadResult } from './lib/load.js';
import { adminQuery, createDatabase, REDIS_URL } from './lib/postgres.js';
import { reconcileBench, type ReconcileFigures } from './lib/reconcile.js';
import { classifyReview, podReview, quotaPut } from './lib/review.js';
import { benchCredentials, builtAppsMissing, ledgerCounters, migrate, postgresCpuSeconds, sampler, serviceNodeVersion, startApi, startProjectionWorker } from './lib/service.js';
import { ms, ratio, summarize, type Latency } from './lib/stats.js';
import { measureWrites, whereTheWritesGo, writeFigures, type WriteFigures } from './lib/writes.js';

const quick = process.argv.includes('--quick');
const PLAN = quick
  ? { baselineSeconds: 3, loadSeconds: 4, warmupSeconds: 1, historyEvents: 100_000, reconcileNamespaces: 100, asOfQueries: 100, seriesQueries: 10 }
  : { baselineSeconds: 15, loadSeconds: 15, warmupSeconds: 3, historyEvents: 1_000_000, reconcileNamespaces: 1000, asOfQueries: 200, seriesQueries: 20 };
const LOW = { label: 'low contention', namespaces: 1000, clients: 32 };
const HOT = { label: 'hot namespace', namespaces: 1, clients: 64 };
const MIXED = { label: 'mixed read/write', namespaces: 100, clients: 32, writeShare: 0.7 };
const LIMIT = { hard: 1000, attempts: 3000 };
/** The dashboard's usage chart: a week (or 90% of the history when shorter, see spanIn) at these sample counts. */
const SERIES = { rangeMs: 7 * 24 * 3600 * 1000, points: [100, 500] } as const;

const log = (message: string): void => console.log(`[bench] ${message}`);

for (const problem of [builtAppsMissing(), pgbenchAvailable()]) {
  if (problem) {
    console.error(`bench: ${problem}`);
    process.exit(2);
  }
}

// ------------------------------------------------------------------ the baselines

const baselines: BaselineFigure[] = [];
for (const scenario of [LOW, HOT]) {
  for (const design of Object.keys(DESIGNS) as BaselineDesign[]) {
    log(`baseline (${design}) ${scenario.label}: pgbench ${DESIGNS[design].script}, ${scenario.namespaces} namespace(s), ${scenario.clients} clients, ${PLAN.baselineSeconds} s`);
    baselines.push(await runBaseline(design, scenario.namespaces, scenario.clients, PLAN.baselineSeconds));
  }
}
log(`baseline: the API's floor (bare Node http server, precomputed answer), ${LOW.clients} clients, ${PLAN.baselineSeconds} s`);
const floor = await measureFloor(PLAN.baselineSeconds, LOW.clients);
const baselineA = (namespaces: number): number => baselines.find((b) => b.design === 'a' && b.namespaces === namespaces)?.perSecond ?? 0;

// ------------------------------------------------------------------ the service over HTTP

const classify = classifyReview;

const pick = (prefix: string, count: number): string => `${prefix}-${String(Math.floor(Math.random() * count)).padStart(4, '0')}`;
const names = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);

interface ServiceRun {
  readonly label: string;
  readonly clients: number;
  readonly perSecond: number;
  readonly latency: Latency;
  readonly allowed: number;
  readonly denied: number;
  readonly errors: number;
  readonly statuses: Record<string, number>;
  /** Allowed answers the ledger has no reservation for (lost), and reservations no client was told of. */
  readonly lost: number;
  readonly unacknowledged: number;
  readonly reads?: { readonly perSecond: number; readonly latency: Latency; readonly errors: number };
  /** CPU milliseconds per request (admissions and reads) spent by each party: where the time goes. */
  readonly cpuMsPerRequest: { readonly api: number; readonly postgres: number; readonly worker: number; readonly loadGenerator: number };
  /** The projection's lag sampled every 250 ms during this load. */
  readonly projectionLag: Latency;
  /** The ledger's write transactions during this load, how many were rerun, and why (from the API's /metrics). */
  readonly ledger: { readonly transactions: number; readonly retries: number; readonly conflicts: Record<string, number> };
  /** What the database wrote during this load (the API's and the projection worker's writes), per admission answered. */
  readonly writes: WriteFigures;
}

const credentials = benchCredentials();
const serviceDb = await createDatabase('svc');
migrate(serviceDb.url);
const api = await startApi(serviceDb.url, credentials);
const worker = startProjectionWorker(serviceDb.url);
const client = new HttpClient(api.base, credentials.token, 256);
const pool = new pg.Pool({ connectionString: serviceDb.url, max: 2 });
const reservedIn = async (pattern: string): Promise<number> =>
  Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ledger_events WHERE type = 'Reserved' AND namespace LIKE $1`, [pattern])).rows[0]?.n);

async function putQuotas(namespaces: readonly string[], hard: Record<string, string>): Promise<void> {
  for (let i = 0; i < namespaces.length; i += 32) {
    await Promise.all(namespaces.slice(i, i + 32).map((namespace) => client.must(quotaPut(namespace, hard))));
  }
}

const roomy = { pods: '10000000', 'requests.cpu': '100000' };
log(`service: API ${api.base} (pid ${api.pid}, auth on, rate limit off), projection worker pid ${worker.pid}, database ${serviceDb.name}`);
await putQuotas([...names('low', LOW.namespaces), 'hot', ...names('mix', MIXED.namespaces), ...names('warm', 100)], roomy);
await putQuotas(['limit-hot'], { pods: String(LIMIT.hard) });
await putQuotas(names('limit-low', 100), { pods: String(LIMIT.hard / 100) });

log(`warm-up ${PLAN.warmupSeconds} s`);
await closedLoop(client, { clients: LOW.clients, seconds: PLAN.warmupSeconds, next: () => podReview(pick('warm', 100)), classify });

const lagSource = await openDataSource({ url: serviceDb.url, poolSize: 1 });
const lagProjection = new UsageProjection(lagSource);
const rssSamples = sampler(() => api.rss(), 250);

function figuresOf(result: LoadResult, kind: string): KindFigures {
  return result.byKind[kind] ?? { count: 0, ok: 0, denied: 0, errors: 0, latenciesMs: [], statuses: {} };
}

async function serviceRun(label: string, clients: number, pattern: string, load: () => Promise<LoadResult>): Promise<ServiceRun> {
  log(`${label}: ${clients} clients, ${PLAN.loadSeconds} s`);
  const before = await reservedIn(pattern);
  const cpu0 = { api: api.cpuSeconds(), postgres: postgresCpuSeconds(), worker: worker.cpuSeconds(), load: process.cpuUsage() };
  const counters0 = await ledgerCounters(api.base);
  const lagSamples = sampler(async () => (await lagProjection.lag()).lagMs, 250);
  const measured = await measureWrites(serviceDb.url, load);
  const result = measured.result;
  const projectionLag = summarize(await lagSamples.stop());
  const counters1 = await ledgerCounters(api.base);
  const delta = (name: string): number => (counters1[name] ?? 0) - (counters0[name] ?? 0);
  const ledger = {
    transactions: delta('ledger_batch_commands_count'),
    retries: delta('ledger_serialization_retries_total'),
    conflicts: Object.fromEntries(
      Object.keys(counters1)
        .filter((k) => k.startsWith('ledger_conflicts_total.'))
        .map((k) => [k.slice('ledger_conflicts_total.'.length), delta(k)]),
    ),
  };
  const requests = Object.values(result.byKind).reduce((sum, k) => sum + k.count, 0);
  const perRequest = (seconds: number): number => ms((seconds * 1000) / Math.max(1, requests));
  const loadCpu = process.cpuUsage(cpu0.load);
  const cpuMsPerRequest = {
    api: perRequest(api.cpuSeconds() - cpu0.api),
    postgres: perRequest(postgresCpuSeconds() - cpu0.postgres),
    worker: perRequest(worker.cpuSeconds() - cpu0.worker),
    loadGenerator: perRequest((loadCpu.user + loadCpu.system) / 1e6),
  };
  const admissions = figuresOf(result, 'admission');
  const writes = writeFigures(measured.wal, measured.clusterWalBytes, admissions.ok + admissions.denied);
  const reads = [figuresOf(result, 'usage'), figuresOf(result, 'history')];
  const reserved = (await reservedIn(pattern)) - before;
  const readLatencies = reads.flatMap((r) => r.latenciesMs);
  return {
    label,
    clients,
    perSecond: admissions.ok / result.elapsedSeconds,
    latency: summarize(admissions.latenciesMs),
    allowed: admissions.ok,
    denied: admissions.denied,
    errors: admissions.errors,
    statuses: admissions.statuses,
    lost: Math.max(0, admissions.ok - reserved),
    unacknowledged: Math.max(0, reserved - admissions.ok),
    cpuMsPerRequest,
    projectionLag,
    ledger,
    writes,
    ...(readLatencies.length > 0 ? { reads: { perSecond: readLatencies.length / result.elapsedSeconds, latency: summarize(readLatencies), errors: reads.reduce((sum, r) => sum + r.errors, 0) } } : {}),
  };
}

const runs: ServiceRun[] = [];
runs.push(
  await serviceRun(LOW.label, LOW.clients, 'low-%', () => closedLoop(client, { clients: LOW.clients, seconds: PLAN.loadSeconds, next: () => podReview(pick('low', LOW.namespaces)), classify })),
);
runs.push(await serviceRun(HOT.label, HOT.clients, 'hot', () => closedLoop(client, { clients: HOT.clients, seconds: PLAN.loadSeconds, next: () => podReview('hot'), classify })));
runs.push(
  await serviceRun(MIXED.label, MIXED.clients, 'mix-%', () =>
    closedLoop(client, {
      clients: MIXED.clients,
      seconds: PLAN.loadSeconds,
      classify,
      next: () => {
        const dice = Math.random();
        const namespace = pick('mix', MIXED.namespaces);
        if (dice < MIXED.writeShare) return podReview(namespace);
        if (dice < (1 + MIXED.writeShare) / 2) return { kind: 'usage', method: 'GET', path: `/v1/namespaces/${namespace}/usage` };
        return { kind: 'history', method: 'GET', path: `/v1/namespaces/${namespace}/events?limit=50` };
      },
    }),
  ),
);
const peak = runs[0]?.perSecond ?? 0;
const steadyRate = Math.max(10, Math.floor(peak * 0.7));
runs.push(
  await serviceRun(`70% of peak (${steadyRate}/s, open loop)`, 256, 'low-%', () =>
    openLoop(client, { perSecond: steadyRate, seconds: PLAN.loadSeconds, maxInFlight: 256, next: () => podReview(pick('low', LOW.namespaces)), classify }),
  ),
);

// Over-admission: far more attempts than room, on one namespace and on 100 small ones.
log(`over-admission: ${LIMIT.attempts} attempts against pods: ${LIMIT.hard} (one namespace, ${HOT.clients} clients) and 100 × ${LIMIT.hard / 100}`);
const limitHot = await closedLoop(client, { clients: HOT.clients, seconds: 120, total: LIMIT.attempts, next: () => podReview('limit-hot'), classify });
const limitLow = await closedLoop(client, { clients: LOW.clients, seconds: 120, total: LIMIT.attempts, next: () => podReview(pick('limit-low', 100)), classify });
const perNamespace = (await pool.query<{ namespace: string; n: string }>(`SELECT namespace, count(*) AS n FROM ledger_events WHERE type = 'Reserved' AND namespace LIKE 'limit-%' GROUP BY namespace`))
  .rows;
const overAdmitted = perNamespace.reduce((sum, row) => sum + Math.max(0, Number(row.n) - (row.namespace === 'limit-hot' ? LIMIT.hard : LIMIT.hard / 100)), 0);
const overAnswered = Math.max(0, figuresOf(limitHot, 'admission').ok - LIMIT.hard) + Math.max(0, figuresOf(limitLow, 'admission').ok - LIMIT.hard);
const overAdmission = {
  attempts: 2 * LIMIT.attempts,
  hard: 2 * LIMIT.hard,
  allowed: figuresOf(limitHot, 'admission').ok + figuresOf(limitLow, 'admission').ok,
  reserved: perNamespace.reduce((sum, row) => sum + Number(row.n), 0),
  overAdmitted: overAdmitted + overAnswered,
};

const rss = await rssSamples.stop();
const rssMaxMiB = Math.max(0, ...rss) / 2 ** 20;
const finalLag = await lagProjection.lag();
await pool.end();
await lagSource.destroy();
client.close();
await worker.stop();
await api.stop();
await serviceDb.drop();

// ------------------------------------------------------------------ as-of on a long history

log(`as-of: writing a ${PLAN.historyEvents.toLocaleString('en-US')}-event history and catching the projection up`);
const historyDb = await createDatabase('asof');
migrate(historyDb.url);
const history = await writeLongHistory(historyDb.url, PLAN.historyEvents);
const historyApi = await startApi(historyDb.url, credentials);
const historyClient = new HttpClient(historyApi.base, credentials.token, 1);
const asOfSamples: number[] = [];
for (let i = 0; i < PLAN.asOfQueries; i++) {
  const t0 = performance.now();
  await historyClient.must({ kind: 'asof', method: 'GET', path: `/v1/namespaces/${LONG_NAMESPACE}/usage?at=${encodeURIComponent(instantIn(history))}` });
  asOfSamples.push(performance.now() - t0);
}
const asOf = summarize(asOfSamples);
// The usage chart over the same history: each request samples a random range.
const seriesRangeMs = spanIn(history, SERIES.rangeMs);
const series: { readonly points: number; readonly latency: Latency }[] = [];
for (const points of SERIES.points) {
  log(`usage series: ${PLAN.seriesQueries} requests of ${points} points over ${(seriesRangeMs / 3_600_000).toFixed(1)} h`);
  const samples: number[] = [];
  for (let i = 0; i < PLAN.seriesQueries; i++) {
    const range = rangeIn(history, SERIES.rangeMs);
    const t0 = performance.now();
    const answer = await historyClient.must({
      kind: 'series',
      method: 'GET',
      path: `/v1/namespaces/${LONG_NAMESPACE}/usage/series?since=${encodeURIComponent(range.since)}&until=${encodeURIComponent(range.until)}&points=${points}`,
    });
    samples.push(performance.now() - t0);
    const answered = (JSON.parse(answer.body) as { points: unknown[] }).points.length;
    if (answered !== points) throw new Error(`usage series: asked for ${points} points, got ${answered}`);
  }
  series.push({ points, latency: summarize(samples) });
}
historyClient.close();
await historyApi.stop();
await historyDb.drop();
credentials.remove();

// ------------------------------------------------------------------ the reconciler

log(`reconcile: ${PLAN.reconcileNamespaces} namespaces × 100 objects (seeding through the ledger first)`);
let reconcile: ReconcileFigures | { skipped: string };
try {
  reconcile = await reconcileBench(PLAN.reconcileNamespaces, REDIS_URL);
} catch (error) {
  reconcile = { skipped: error instanceof Error ? error.message : String(error) };
}

// ------------------------------------------------------------------ report

const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const postgresVersion = (await adminQuery<{ server_version: string }>('SHOW server_version'))[0]?.server_version ?? 'unknown';
const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: serviceNodeVersion(), postgres: postgresVersion };

console.log(`Services on Node ${machine.node}, ${machine.cpus} cores`);
console.log('\nBaselines: the admission decision issued straight at PostgreSQL by pgbench (admissions/s)');
console.table(
  baselines.map((b) => ({
    design: `(${b.design}) ${DESIGNS[b.design].script}`,
    namespaces: b.namespaces,
    clients: b.clients,
    'admissions/s': Math.round(b.perSecond),
    'ratio to (a)': ratio(b.perSecond, baselineA(b.namespaces)),
    'mean latency ms': ms(b.latencyMeanMs),
    retried: b.retried,
    failed: b.failed,
  })),
);

console.log(
  `The API's floor: a bare Node http server answering the same reviews (one JSON.parse, a precomputed answer): ${Math.round(floor.perSecond)}/s, CPU ${floor.cpuMsPerRequest.toFixed(3)} ms per answer`,
);
console.log('The service over HTTP (AdmissionReview v1 to /v1/admission/validate, bearer token, keep-alive)');
console.table(
  runs.map((r) => ({
    load: r.label,
    clients: r.clients,
    'admissions/s': Math.round(r.perSecond),
    'ratio to (a)': ratio(r.perSecond, baselineA(r.label === HOT.label ? 1 : 1000)),
    'p50 ms': ms(r.latency.p50),
    'p95 ms': ms(r.latency.p95),
    'p99 ms': ms(r.latency.p99),
    'reads/s': r.reads ? Math.round(r.reads.perSecond) : '',
    'reads p99 ms': r.reads ? ms(r.reads.latency.p99) : '',
    errors: r.errors + (r.reads?.errors ?? 0),
    'lost/unacked': `${r.lost}/${r.unacknowledged}`,
    'lag p99 ms': ms(r.projectionLag.p99),
    'tx/retries': `${r.ledger.transactions}/${r.ledger.retries}`,
    'retried %': ms((100 * r.ledger.retries) / Math.max(1, r.ledger.transactions + r.ledger.retries)),
    'API CPU × floor': ratio(r.cpuMsPerRequest.api, floor.cpuMsPerRequest),
    'CPU ms/req API+PG+worker+gen': `${r.cpuMsPerRequest.api}+${r.cpuMsPerRequest.postgres}+${r.cpuMsPerRequest.worker}+${r.cpuMsPerRequest.loadGenerator}`,
    'WAL bytes/adm db (FPI)/server': `${r.writes.walBytesPerAdmission ?? '?'} (${r.writes.fpiBytesPerAdmission ?? '?'})/${r.writes.serverWalBytesPerAdmission}`,
    'rows/adm': r.writes.rowsPerAdmission ?? '?',
    'index entries/adm': r.writes.indexEntriesPerAdmission ?? '?',
  })),
);
const walMissing = runs.find((r) => r.writes.unavailable)?.writes.unavailable;
if (walMissing) console.log(`(WAL per database, rows and index entries not counted: ${walMissing}; the server's WAL includes other databases' writes)`);
else {
  console.log("Where the writes go: per table, rows / index entries / WAL bytes per admission answered (from this database's WAL; API and projection worker)");
  console.table(whereTheWritesGo(runs.map((r) => ({ label: r.label, writes: r.writes }))));
}

/** The API's share of the CPU one admission costs (API, PostgreSQL, projection worker; not the load generator), in %. */
const apiShare = (r: ServiceRun | undefined): number =>
  r ? (100 * r.cpuMsPerRequest.api) / Math.max(1e-9, r.cpuMsPerRequest.api + r.cpuMsPerRequest.postgres + r.cpuMsPerRequest.worker) : Number.NaN;
const reconcileDone = 'seconds' in reconcile ? reconcile : undefined;
const targets = [
  { target: 'low contention ≥ 0.4 × (a) (moonshot 0.6)', goal: 0.4, value: ratio(runs[0]?.perSecond ?? 0, baselineA(1000)), higherIsBetter: true },
  { target: 'hot namespace ≥ 1.5 × (a)', goal: 1.5, value: ratio(runs[1]?.perSecond ?? 0, baselineA(1)), higherIsBetter: true },
  { target: 'API CPU ≤ 25 % of all CPU per admission (low contention)', goal: 25, value: ms(apiShare(runs[0])), higherIsBetter: false },
  { target: 'over-admission = 0', goal: 0, value: overAdmission.overAdmitted, higherIsBetter: false },
  { target: 'lost + unacknowledged = 0 (every load)', goal: 0, value: runs.reduce((sum, r) => sum + r.lost + r.unacknowledged, 0), higherIsBetter: false },
  { target: 'p99 < 20 ms at 70% of peak', goal: 20, value: ms(runs[3]?.latency.p99 ?? 0), higherIsBetter: false },
  { target: 'projection lag p99 < 500 ms at 70% of peak', goal: 500, value: ms(runs[3]?.projectionLag.p99 ?? 0), higherIsBetter: false },
  { target: 'projection lag p99 < 500 ms, saturated loads', goal: 500, value: ms(Math.max(...runs.slice(0, 3).map((r) => r.projectionLag.p99))), higherIsBetter: false },
  { target: `as-of p99 on ${history.events.toLocaleString('en-US')} events < 10 ms`, goal: 10, value: ms(asOf.p99), higherIsBetter: false },
  ...series.map((s) => {
    const goal = s.points <= 100 ? 100 : 300;
    return { target: `usage series of ${s.points} points p99 < ${goal} ms`, goal, value: ms(s.latency.p99), higherIsBetter: false };
  }),
  { target: 'projection catch-up ≥ 50,000 events/s', goal: 50_000, value: Math.round(history.catchUpPerSecond), higherIsBetter: true },
  {
    target: `reconcile ${PLAN.reconcileNamespaces} × 100 < ${PLAN.reconcileNamespaces === 1000 ? 30 : 3} s`,
    goal: PLAN.reconcileNamespaces === 1000 ? 30 : 3,
    value: reconcileDone ? ms(reconcileDone.seconds) : Number.NaN,
    higherIsBetter: false,
  },
  { target: 'API RSS under load < 250 MB', goal: 250, value: Math.round(rssMaxMiB), higherIsBetter: false },
].map((t) => ({
  ...t,
  met: Number.isNaN(t.value) ? 'not run' : (t.higherIsBetter ? t.value >= t.goal : t.goal === 0 ? t.value === 0 : t.value < t.goal) ? 'met' : 'MISSED',
}));

console.log('Why transactions were rerun, per load (SQLSTATE 40001 serialization failures, lost compare-and-sets on the head, unique-key races)');
console.table(runs.map((r) => ({ load: r.label, transactions: r.ledger.transactions, retries: r.ledger.retries, ...r.ledger.conflicts })));
console.log('Other figures');
console.table({
  'over-admission': {
    value: `${overAdmission.overAdmitted} (attempts ${overAdmission.attempts}, hard ${overAdmission.hard}, allowed ${overAdmission.allowed}, in the ledger ${overAdmission.reserved})`,
  },
  'projection lag': { value: `per load in the table above (sampled every 250 ms); ${finalLag.eventsBehind} events behind once the loads stopped` },
  'as-of usage over HTTP': { value: `p50 ${ms(asOf.p50)} ms, p95 ${ms(asOf.p95)} ms, p99 ${ms(asOf.p99)} ms on ${history.events.toLocaleString('en-US')} events (${asOf.count} random instants)` },
  ...Object.fromEntries(
    series.map((s) => [
      `usage series over HTTP, ${s.points} points`,
      {
        value: `p50 ${ms(s.latency.p50)} ms, p95 ${ms(s.latency.p95)} ms, p99 ${ms(s.latency.p99)} ms over ${(seriesRangeMs / 3_600_000).toFixed(1)} h of ${history.events.toLocaleString('en-US')} events (${s.latency.count} random ranges)`,
      },
    ]),
  ),
  'projection catch-up': { value: `${Math.round(history.catchUpPerSecond).toLocaleString('en-US')} events/s (${history.catchUpSeconds.toFixed(1)} s)` },
  reconcile: {
    value: reconcileDone
      ? `${reconcileDone.seconds.toFixed(1)} s for ${reconcileDone.namespaces} namespaces × 100 objects (${Math.round(reconcileDone.namespacesPerSecond)} namespaces/s; ${reconcileDone.committed} committed, ${reconcileDone.released} released, ${reconcileDone.adopted} adopted, ${reconcileDone.wrong} wrong)`
      : `not run: ${(reconcile as { skipped: string }).skipped}`,
  },
  'API RSS': { value: `max ${Math.round(rssMaxMiB)} MiB during load` },
});
console.log('Targets');
console.table(targets.map(({ target, value, met }) => ({ target, value, met })));

const date = new Date().toISOString().slice(0, 10);
const out = fileURLToPath(new URL(`./results/${date}${quick ? '-quick' : ''}.json`, import.meta.url));
mkdirSync(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      mode: quick ? 'quick' : 'full',
      commit,
      machine,
      plan: { ...PLAN, low: LOW, hot: HOT, mixed: MIXED, limit: LIMIT, series: SERIES },
      baselines,
      floor,
      service: runs.map(({ statuses, ...r }) => ({ ...r, statuses })),
      overAdmission,
      apiRssMaxMiB: Math.round(rssMaxMiB),
      asOf: { events: history.events, latencyMs: asOf, catchUpPerSecond: Math.round(history.catchUpPerSecond) },
      usageSeries: { events: history.events, rangeMs: seriesRangeMs, byPoints: series.map((s) => ({ points: s.points, latencyMs: s.latency })) },
      reconcile,
      targets,
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${out}`);
