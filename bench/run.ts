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
import { measureHistoryReads } from './lib/history-reads.js';
import { closedLoop, HttpClient, openLoop, type LoadResult } from './lib/load.js';
import { adminQuery, createDatabase, REDIS_URL } from './lib/postgres.js';
import { reconcileBench, type ReconcileFigures } from './lib/reconcile.js';
import { classifyReview, podReview, quotaPut } from './lib/review.js';
import {
  benchCredentials,
  builtAppsMissing,
  migrate,
  sampler,
  serviceNodeVersion,
  startApi,
  startProjectionWorker,
} from './lib/service.js';
import { figuresOf, measureServiceRun, type ServiceRun, type ServiceUnderLoad } from './lib/service-run.js';
import { ms, ratio } from './lib/stats.js';
import { benchTargets } from './lib/targets.js';
import { whereTheWritesGo } from './lib/writes.js';

const quick = process.argv.includes('--quick');
const PLAN = quick
  ? {
      baselineSeconds: 3,
      loadSeconds: 4,
      warmupSeconds: 1,
      historyEvents: 100_000,
      reconcileNamespaces: 100,
      asOfQueries: 100,
      seriesQueries: 10,
    }
  : {
      baselineSeconds: 15,
      loadSeconds: 15,
      warmupSeconds: 3,
      historyEvents: 1_000_000,
      reconcileNamespaces: 1000,
      asOfQueries: 200,
      seriesQueries: 20,
    };
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
    log(
      `baseline (${design}) ${scenario.label}: pgbench ${DESIGNS[design].script}, ${scenario.namespaces} namespace(s), ${scenario.clients} clients, ${PLAN.baselineSeconds} s`,
    );
    baselines.push(await runBaseline(design, scenario.namespaces, scenario.clients, PLAN.baselineSeconds));
  }
}
log(`baseline: the API's floor (bare Node http server, precomputed answer), ${LOW.clients} clients, ${PLAN.baselineSeconds} s`);
const floor = await measureFloor(PLAN.baselineSeconds, LOW.clients);
const baselineA = (namespaces: number): number => baselines.find((b) => b.design === 'a' && b.namespaces === namespaces)?.perSecond ?? 0;

// ------------------------------------------------------------------ the service over HTTP

const classify = classifyReview;

const pick = (prefix: string, count: number): string => `${prefix}-${String(Math.floor(Math.random() * count)).padStart(4, '0')}`;
const names = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);

const credentials = benchCredentials();
const serviceDb = await createDatabase('svc');
migrate(serviceDb.url);
const api = await startApi(serviceDb.url, credentials);
const worker = startProjectionWorker(serviceDb.url);
const client = new HttpClient(api.base, credentials.token, 256);
const pool = new pg.Pool({ connectionString: serviceDb.url, max: 2 });
const reservedIn = async (pattern: string): Promise<number> =>
  Number(
    (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ledger_events WHERE type = 'Reserved' AND namespace LIKE $1`, [pattern]))
      .rows[0]?.n,
  );

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

const service: ServiceUnderLoad = {
  api,
  worker,
  lagProjection,
  databaseUrl: serviceDb.url,
  reservedIn,
  loadSeconds: PLAN.loadSeconds,
  log,
};
const serviceRun = (label: string, clients: number, pattern: string, load: () => Promise<LoadResult>): Promise<ServiceRun> =>
  measureServiceRun(service, label, clients, pattern, load);

const runs: ServiceRun[] = [];
runs.push(
  await serviceRun(LOW.label, LOW.clients, 'low-%', () =>
    closedLoop(client, { clients: LOW.clients, seconds: PLAN.loadSeconds, next: () => podReview(pick('low', LOW.namespaces)), classify }),
  ),
);
runs.push(
  await serviceRun(HOT.label, HOT.clients, 'hot', () =>
    closedLoop(client, { clients: HOT.clients, seconds: PLAN.loadSeconds, next: () => podReview('hot'), classify }),
  ),
);
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
    openLoop(client, {
      perSecond: steadyRate,
      seconds: PLAN.loadSeconds,
      maxInFlight: 256,
      next: () => podReview(pick('low', LOW.namespaces)),
      classify,
    }),
  ),
);

// Over-admission: far more attempts than room, on one namespace and on 100 small ones.
log(
  `over-admission: ${LIMIT.attempts} attempts against pods: ${LIMIT.hard} (one namespace, ${HOT.clients} clients) and 100 × ${LIMIT.hard / 100}`,
);
const limitHot = await closedLoop(client, {
  clients: HOT.clients,
  seconds: 120,
  total: LIMIT.attempts,
  next: () => podReview('limit-hot'),
  classify,
});
const limitLow = await closedLoop(client, {
  clients: LOW.clients,
  seconds: 120,
  total: LIMIT.attempts,
  next: () => podReview(pick('limit-low', 100)),
  classify,
});
const perNamespace = (
  await pool.query<{ namespace: string; n: string }>(
    `SELECT namespace, count(*) AS n FROM ledger_events WHERE type = 'Reserved' AND namespace LIKE 'limit-%' GROUP BY namespace`,
  )
).rows;
const overAdmitted = perNamespace.reduce(
  (sum, row) => sum + Math.max(0, Number(row.n) - (row.namespace === 'limit-hot' ? LIMIT.hard : LIMIT.hard / 100)),
  0,
);
const overAnswered =
  Math.max(0, figuresOf(limitHot, 'admission').ok - LIMIT.hard) + Math.max(0, figuresOf(limitLow, 'admission').ok - LIMIT.hard);
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

const { history, asOf, seriesRangeMs, series } = await measureHistoryReads(credentials, PLAN, SERIES, log);
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
const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: serviceNodeVersion(),
  postgres: postgresVersion,
};

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
if (walMissing)
  console.log(`(WAL per database, rows and index entries not counted: ${walMissing}; the server's WAL includes other databases' writes)`);
else {
  console.log(
    "Where the writes go: per table, rows / index entries / WAL bytes per admission answered (from this database's WAL; API and projection worker)",
  );
  console.table(whereTheWritesGo(runs.map((r) => ({ label: r.label, writes: r.writes }))));
}

const reconcileDone = 'seconds' in reconcile ? reconcile : undefined;
const targets = benchTargets({
  runs,
  baselineA,
  overAdmitted: overAdmission.overAdmitted,
  history,
  asOf,
  series,
  reconcileNamespaces: PLAN.reconcileNamespaces,
  reconcileDone,
  rssMaxMiB,
});

console.log(
  'Why transactions were rerun, per load (SQLSTATE 40001 serialization failures, lost compare-and-sets on the head, unique-key races)',
);
console.table(runs.map((r) => ({ load: r.label, transactions: r.ledger.transactions, retries: r.ledger.retries, ...r.ledger.conflicts })));
console.log('Other figures');
console.table({
  'over-admission': {
    value: `${overAdmission.overAdmitted} (attempts ${overAdmission.attempts}, hard ${overAdmission.hard}, allowed ${overAdmission.allowed}, in the ledger ${overAdmission.reserved})`,
  },
  'projection lag': {
    value: `per load in the table above (sampled every 250 ms); ${finalLag.eventsBehind} events behind once the loads stopped`,
  },
  'as-of usage over HTTP': {
    value: `p50 ${ms(asOf.p50)} ms, p95 ${ms(asOf.p95)} ms, p99 ${ms(asOf.p99)} ms on ${history.events.toLocaleString('en-US')} events (${asOf.count} random instants)`,
  },
  ...Object.fromEntries(
    series.map((s) => [
      `usage series over HTTP, ${s.points} points`,
      {
        value: `p50 ${ms(s.latency.p50)} ms, p95 ${ms(s.latency.p95)} ms, p99 ${ms(s.latency.p99)} ms over ${(seriesRangeMs / 3_600_000).toFixed(1)} h of ${history.events.toLocaleString('en-US')} events (${s.latency.count} random ranges)`,
      },
    ]),
  ),
  'projection catch-up': {
    value: `${Math.round(history.catchUpPerSecond).toLocaleString('en-US')} events/s (${history.catchUpSeconds.toFixed(1)} s)`,
  },
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
      usageSeries: {
        events: history.events,
        rangeMs: seriesRangeMs,
        byPoints: series.map((s) => ({ points: s.points, latencyMs: s.latency })),
      },
      reconcile,
      targets,
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${out}`);
