/**
 * The admission decision against PostgreSQL, in-process (no HTTP): the ledger's batched
 * SERIALIZABLE design next to the direct-SQL baseline (a) of ../shared/bench-baseline (a
 * conditional UPDATE of a counter row + INSERT, one statement, run by pgbench). Prints
 * admissions/s, latency percentiles, retries and the mean batch size, and the ratio to the
 * baseline measured in the same run. Asserts nothing.
 *
 *   npm run bench:admission [-- --quick] [--only=hot|low]
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { Pod } from '@quota/domain';
import { buildDataSourceOptions, Ledger } from '@quota/ledger';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 4 : 10;
const ADMIN_URL = process.env['BENCH_DATABASE_ADMIN_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NAMESPACES = 1000;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function urlOf(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** pgbench's tps for the baseline script, on its own database. */
async function baseline(nns: number, clients: number): Promise<number> {
  const name = `bench_base_${randomBytes(3).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  try {
    const url = new URL(urlOf(name));
    const common = ['-h', url.hostname, '-p', url.port || '5432', '-U', url.username || 'postgres'];
    const dir = new URL('../../shared/bench-baseline/', import.meta.url).pathname;
    const schema = spawnSync('psql', [...common, '-q', '-d', name, '-f', `${dir}schema.sql`], { encoding: 'utf8' });
    if (schema.status !== 0) throw new Error(schema.stderr);
    const run = spawnSync(
      'pgbench',
      [...common, '-n', '-M', 'extended', '-f', `${dir}cu1.sql`, '-D', `nns=${nns}`, '-c', String(clients), '-j', '2', '-T', String(SECONDS), name],
      { encoding: 'utf8' },
    );
    const tps = /tps = ([0-9.]+) \(without initial connection time\)/.exec(run.stdout)?.[1];
    if (!tps) throw new Error(`pgbench printed no tps: ${run.stdout}${run.stderr}`);
    return Number(tps);
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

interface Figures {
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
  allowed: number;
  denied: number;
  unavailable: number;
  retries: number;
  meanBatch: number;
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function ledgerRun(namespaces: number, clients: number, poolSize: number): Promise<Figures> {
  const name = `bench_ledger_${randomBytes(3).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const dataSource = new DataSource(buildDataSourceOptions({ url: urlOf(name), poolSize }));
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  const ledger = new Ledger(dataSource);
  try {
    await Promise.all(
      Array.from({ length: namespaces }, (_, i) =>
        ledger.putQuota(`ns-${i}`, { name: 'compute', spec: { hard: { pods: '1000000', 'requests.cpu': '1000000' } } }, { actor: 'bench' }),
      ),
    );
    const start = { ...ledger.stats };
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
        const object: Pod = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `p${n}`, uid: `u${n}` },
          spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '1m' } } }] },
        };
        const t0 = performance.now();
        try {
          const { result } = await ledger.admit({
            namespace,
            source: 'webhook',
            request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name: `p${n}`, object },
            requestKey: `review:${n}`,
            dryRun: false,
            requester: 'bench',
          });
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
    const sorted = latencies.sort((a, b) => a - b);
    const transactions = ledger.stats.transactions - start.transactions;
    return {
      perSecond: allowed / elapsed,
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      p99: percentile(sorted, 99),
      allowed,
      denied,
      unavailable,
      retries: ledger.stats.retries - start.retries,
      meanBatch: transactions === 0 ? 0 : (ledger.stats.commands - start.commands) / transactions,
    };
  } finally {
    await ledger.close();
    await dataSource.destroy();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

const scenarios = [
  { label: `${NAMESPACES} namespaces, 16 clients`, namespaces: NAMESPACES, clients: 16, baselineNs: 1000 },
  { label: '1 hot namespace, 64 clients', namespaces: 1, clients: 64, baselineNs: 1 },
];

const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const rows: Record<string, string | number>[] = [];
for (const s of scenarios.filter((x) => !only || (only === 'hot' ? x.namespaces === 1 : x.namespaces > 1))) {
  const base = await baseline(s.baselineNs, 16);
  const run = await ledgerRun(s.namespaces, s.clients, 8);
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
    unavailable: run.unavailable,
  });
}
console.table(rows);
console.log(`(${SECONDS} s per run; baseline (a) = pgbench cu1.sql at 16 clients; ledger = Ledger.admit in-process, pool 8, one pod per admission)`);
