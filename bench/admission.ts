/**
 * The admission decision against PostgreSQL, in-process (no HTTP): the ledger's batched
 * compare-and-set design next to the direct-SQL baseline (a) of bench/baseline (a conditional
 * UPDATE of a counter row + INSERT, one statement, run by pgbench). `npm run bench` measures
 * the service over HTTP; this isolates the ledger. Prints
 * admissions/s, latency percentiles, retries and the mean batch size, and the ratio to the
 * baseline measured in the same run. Asserts nothing.
 *
 *   npm run bench:admission [-- --quick] [--only=hot|low|shared]
 *
 * `shared` is the low-contention load with every admission also charging a shared quota:
 * 1,000 namespaces in 100 tenants of 10, each tenant under one ClusterResourceQuota.
 */
import { DataSource } from 'typeorm';
import { loadConfig } from '@quota/config';
import { buildDataSourceOptions, ClusterWriter, LedgerCommands, runMigrationsLocked } from '@quota/ledger';
import { runBaseline } from './lib/baselines.js';
import { createDatabase } from './lib/postgres.js';
import { podAdmission } from './lib/review.js';
import { summarize } from './lib/stats.js';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 4 : 10;
const NAMESPACES = 1000;

interface Figures {
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
  allowed: number;
  denied: number;
  unavailable: number;
  retries: number;
  serialization: number;
  meanBatch: number;
  /** Share of head updates PostgreSQL made HOT (no index entry written). */
  headsHotPercent: number;
}

async function ledgerRun(namespaces: number, clients: number, poolSize: number, tenants = 0): Promise<Figures> {
  const db = await createDatabase('ledger');
  const dataSource = new DataSource(buildDataSourceOptions({ url: db.url, poolSize }));
  await dataSource.initialize();
  await runMigrationsLocked(dataSource);
  if (process.env['HEADS_FILLFACTOR'])
    await dataSource.query(`ALTER TABLE namespace_heads SET (fillfactor = ${Number(process.env['HEADS_FILLFACTOR'])})`);
  // As the service runs it by default: near-limit warnings computed on every allowed admission,
  // the default admission plugins (QUOTA_WARNING_PERCENT=0 measures without the warnings).
  const defaults = loadConfig({ QUOTA_WARNING_PERCENT: process.env['QUOTA_WARNING_PERCENT'] ?? '90' });
  const ledger = new LedgerCommands(dataSource, { quotaWarningPercent: defaults.quotaWarningPercent });
  try {
    await Promise.all(
      Array.from({ length: namespaces }, (_, i) =>
        ledger.putQuota(`ns-${i}`, { name: 'compute', spec: { hard: { pods: '1000000', 'requests.cpu': '1000000' } } }, { actor: 'bench' }),
      ),
    );
    if (tenants > 0) await defineTenants(dataSource, namespaces, tenants);
    const start = { ...ledger.stats, conflicts: { ...ledger.stats.conflicts } };
    const latencies: number[] = [];
    let allowed = 0;
    let denied = 0;
    let unavailable = 0;
    let seq = 0;
    const deadline = performance.now() + SECONDS * 1000;
    const worker = async (): Promise<void> => {
      while (performance.now() < deadline) {
        const n = seq++;
        const namespace = `ns-${Math.floor(Math.random() * namespaces)}`;
        const t0 = performance.now();
        try {
          const { result } = await ledger.admit(podAdmission(namespace, n));
          if (result.allowed) allowed++;
          else denied++;
        } catch {
          unavailable++;
        }
        latencies.push(performance.now() - t0);
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: clients }, worker));
    const elapsed = (performance.now() - t0) / 1000;
    const latency = summarize(latencies);
    const transactions = ledger.stats.transactions - start.transactions;
    // The statistics collector reports a moment late; what it has is enough for a share.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const [heads] = await dataSource.query(
      `SELECT n_tup_upd::float8 AS upd, n_tup_hot_upd::float8 AS hot FROM pg_stat_user_tables WHERE relname = 'namespace_heads'`,
    );
    return {
      perSecond: allowed / elapsed,
      p50: latency.p50,
      p95: latency.p95,
      p99: latency.p99,
      allowed,
      denied,
      unavailable,
      retries: ledger.stats.retries - start.retries,
      serialization: ledger.stats.conflicts.serialization - start.conflicts.serialization,
      headsHotPercent: heads && heads.upd > 0 ? (100 * heads.hot) / heads.upd : 0,
      meanBatch: transactions === 0 ? 0 : (ledger.stats.commands - start.commands) / transactions,
    };
  } finally {
    await ledger.close();
    await dataSource.destroy();
    await db.drop();
  }
}

/** Every namespace labelled into one of `tenants` tenants, each under a ClusterResourceQuota of its own. */
async function defineTenants(dataSource: DataSource, namespaces: number, tenants: number): Promise<void> {
  const writer = new ClusterWriter(dataSource);
  try {
    for (let i = 0; i < namespaces; i++)
      await writer.putNamespace({ name: `ns-${i}`, metadata: { labels: { tenant: `t-${i % tenants}` } } }, { actor: 'bench' });
    for (let t = 0; t < tenants; t++) {
      await writer.putSharedQuota(
        {
          ref: { kind: 'ClusterResourceQuota', name: `t-${t}` },
          spec: { hard: { pods: '1000000', 'requests.cpu': '1000000' } },
          selector: { labels: { matchLabels: { tenant: `t-${t}` } } },
        },
        { actor: 'bench' },
      );
    }
  } finally {
    await writer.close();
  }
}

const scenarios = [
  { key: 'low', label: `${NAMESPACES} namespaces, 16 clients`, namespaces: NAMESPACES, clients: 16, baselineNs: 1000, tenants: 0 },
  {
    key: 'shared',
    label: `${NAMESPACES} namespaces, 16 clients, each admission also charging its tenant's ClusterResourceQuota (100 of 10 namespaces)`,
    namespaces: NAMESPACES,
    clients: 16,
    baselineNs: 1000,
    tenants: 100,
  },
  { key: 'hot', label: '1 hot namespace, 64 clients', namespaces: 1, clients: 64, baselineNs: 1, tenants: 0 },
];

const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const rows: Record<string, string | number>[] = [];
for (const s of scenarios.filter((x) => !only || x.key === only)) {
  const base = (await runBaseline('a', s.baselineNs, 16, SECONDS)).perSecond;
  const run = await ledgerRun(s.namespaces, s.clients, Number(process.env['BENCH_POOL_SIZE'] ?? 8), s.tenants);
  rows.push({
    scenario: s.label,
    'baseline (a) /s': Math.round(base),
    'ledger /s': Math.round(run.perSecond),
    ratio: Number((run.perSecond / base).toFixed(2)),
    'p50 ms': Number(run.p50.toFixed(1)),
    'p95 ms': Number(run.p95.toFixed(1)),
    'p99 ms': Number(run.p99.toFixed(1)),
    'mean batch': Number(run.meanBatch.toFixed(1)),
    retries: run.retries,
    'of which 40001': run.serialization,
    'heads HOT %': Math.round(run.headsHotPercent),
    unavailable: run.unavailable,
  });
}
console.table(rows);
console.log(
  `(${SECONDS} s per run; baseline (a) = pgbench cu1.sql at 16 clients; ledger = LedgerCommands.admit in-process, pool 8, one pod per admission)`,
);
