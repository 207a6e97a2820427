/**
 * The writes that read a whole head table inside their SERIALIZABLE transaction (they must not
 * starve beside admissions), under the admission load of `bench:admission --only=shared`:
 * 1,000 namespaces in 100 tenants of 10, each tenant under a ClusterResourceQuota, and 16
 * clients admitting pods in-process. The first 100 namespaces are also under a wide
 * ClusterResourceQuota. Beside that load, one writer loops (a pause of 50 ms between writes) on one kind of write:
 *
 * - relabel: a Namespace moved to another tenant (putNamespace reads every shared quota's head);
 * - quota: a tenant's ClusterResourceQuota changed (putSharedQuota reads every namespace's head
 *   and locks its 10 namespaces' heads);
 * - wide: the wide ClusterResourceQuota changed (the same, locking 100 busy heads).
 *
 * Prints, per scenario, the admissions (per second, as a ratio to the run without cluster
 * writes, latency, retries) and the cluster writes (per second, latency, retries per write,
 * failures after all retries). Asserts nothing.
 *
 *   npm run bench:cluster-writes [-- --quick] [--only=none|relabel|quota|wide]
 */
import { DataSource } from 'typeorm';
import type { SharedQuotaDefinition } from '@quota/domain';
import { buildDataSourceOptions, ClusterWriter, LedgerCommands, runMigrationsLocked } from '@quota/ledger';
import { createDatabase } from './lib/postgres.js';
import { podAdmission } from './lib/review.js';
import { ms, ratio, summarize } from './lib/stats.js';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 4 : 10;
const NAMESPACES = 1000;
const TENANTS = 100;
const WIDE = 100;
const CLIENTS = 16;
const PAUSE_MS = 50;
const actor = { actor: 'bench' };

type Scenario = 'none' | 'relabel' | 'quota' | 'wide';

const labelsOf = (i: number, tenant = i % TENANTS): Record<string, string> => ({
  tenant: `t-${tenant}`,
  ...(i < WIDE ? { wide: 'yes' } : {}),
});
const crq = (name: string, labels: Record<string, string>, pods: number): SharedQuotaDefinition => ({
  ref: { kind: 'ClusterResourceQuota', name },
  spec: { hard: { pods: String(pods), 'requests.cpu': '1000000' } },
  selector: { labels: { matchLabels: labels } },
});

async function setUp(dataSource: DataSource, ledger: LedgerCommands, writer: ClusterWriter): Promise<void> {
  await Promise.all(
    Array.from({ length: NAMESPACES }, (_, i) =>
      ledger.putQuota(`ns-${i}`, { name: 'compute', spec: { hard: { pods: '1000000', 'requests.cpu': '1000000' } } }, actor),
    ),
  );
  for (let i = 0; i < NAMESPACES; i++) await writer.putNamespace({ name: `ns-${i}`, metadata: { labels: labelsOf(i) } }, actor);
  for (let t = 0; t < TENANTS; t++) await writer.putSharedQuota(crq(`t-${t}`, { tenant: `t-${t}` }, 1_000_000), actor);
  await writer.putSharedQuota(crq('wide', { wide: 'yes' }, 1_000_000), actor);
  await dataSource.query('ANALYZE');
}

/** The cluster write a scenario loops on, the n-th. */
function clusterWrite(writer: ClusterWriter, scenario: Exclude<Scenario, 'none'>, n: number): Promise<unknown> {
  const i = Math.floor(Math.random() * NAMESPACES);
  if (scenario === 'relabel')
    return writer.putNamespace({ name: `ns-${i}`, metadata: { labels: labelsOf(i, (i + n + 1) % TENANTS) } }, actor);
  if (scenario === 'quota') return writer.putSharedQuota(crq(`t-${i % TENANTS}`, { tenant: `t-${i % TENANTS}` }, 1_000_000 + n), actor);
  return writer.putSharedQuota(crq('wide', { wide: 'yes' }, 1_000_000 + n), actor);
}

interface Run {
  readonly admissions: { perSecond: number; p50: number; p99: number; retries: number; serialization: number; unavailable: number };
  readonly writes: { count: number; p50: number; p99: number; max: number; retries: number; serialization: number; failed: number };
}

async function run(scenario: Scenario): Promise<Run> {
  const db = await createDatabase('cluster');
  const dataSource = new DataSource(buildDataSourceOptions({ url: db.url, poolSize: 8 }));
  await dataSource.initialize();
  await runMigrationsLocked(dataSource);
  const ledger = new LedgerCommands(dataSource);
  const writer = new ClusterWriter(dataSource);
  try {
    await setUp(dataSource, ledger, writer);
    const admissions = { ...ledger.stats, conflicts: { ...ledger.stats.conflicts } };
    const writes = { ...writer.stats, conflicts: { ...writer.stats.conflicts } };
    const deadline = performance.now() + SECONDS * 1000;
    const admitted: number[] = [];
    const written: number[] = [];
    let unavailable = 0;
    let failed = 0;
    let seq = 0;
    const admit = async (): Promise<void> => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await ledger.admit(podAdmission(`ns-${Math.floor(Math.random() * NAMESPACES)}`, seq++));
        } catch {
          unavailable++;
        }
        admitted.push(performance.now() - t0);
      }
    };
    const write = async (): Promise<void> => {
      if (scenario === 'none') return;
      for (let n = 0; performance.now() < deadline; n++) {
        const t0 = performance.now();
        try {
          await clusterWrite(writer, scenario, n);
          written.push(performance.now() - t0);
        } catch {
          failed++;
        }
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
    };
    const t0 = performance.now();
    await Promise.all([...Array.from({ length: CLIENTS }, admit), write()]);
    const elapsed = (performance.now() - t0) / 1000;
    const a = summarize(admitted);
    const w = summarize(written);
    return {
      admissions: {
        perSecond: a.count / elapsed,
        p50: a.p50,
        p99: a.p99,
        retries: ledger.stats.retries - admissions.retries,
        serialization: ledger.stats.conflicts.serialization - admissions.conflicts.serialization,
        unavailable,
      },
      writes: {
        count: w.count,
        p50: w.p50,
        p99: w.p99,
        max: w.max,
        retries: writer.stats.retries - writes.retries,
        serialization: writer.stats.conflicts.serialization - writes.conflicts.serialization,
        failed,
      },
    };
  } finally {
    await writer.close();
    await ledger.close();
    await dataSource.destroy();
    await db.drop();
  }
}

const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const scenarios = (['none', 'relabel', 'quota', 'wide'] as const).filter((s) => !only || s === only || s === 'none');
const rows: Record<string, string | number>[] = [];
let base: Run | undefined;
for (const scenario of scenarios) {
  const result = await run(scenario);
  base ??= result;
  const { admissions: a, writes: w } = result;
  rows.push({
    'cluster writes': scenario,
    'admissions /s': Math.round(a.perSecond),
    'ratio to none': ratio(a.perSecond, base.admissions.perSecond),
    'adm p50 ms': ms(a.p50),
    'adm p99 ms': ms(a.p99),
    'adm p99 ratio': ratio(a.p99, base.admissions.p99),
    'adm retries': a.retries,
    'adm 40001': a.serialization,
    'adm 503': a.unavailable,
    writes: w.count,
    'write p50 ms': ms(w.p50),
    'write p99 ms': ms(w.p99),
    'write max ms': ms(w.max),
    'retries/write': w.count + w.failed > 0 ? Number((w.retries / (w.count + w.failed)).toFixed(2)) : 0,
    'write 40001': w.serialization,
    'write failed': w.failed,
  });
}
console.table(rows);
console.log(
  `(${SECONDS} s per run; ${NAMESPACES} namespaces in ${TENANTS} tenants under a ClusterResourceQuota each, the first ${WIDE} also under a wide one; ` +
    `${CLIENTS} clients admitting in-process, pool 8; one cluster writer, ${PAUSE_MS} ms between writes; "failed": the write gave up after its retries)`,
);
