/**
 * Where one admission's writes go: a fixed number of allowed pod admissions through the ledger
 * in-process (no HTTP), then the projection catching up on them, each counted from this
 * database's WAL (bench/lib/writes.ts): WAL bytes, rows and index entries per admission, per
 * table and index. Counts, not times, so a busy shared machine does not move them.
 *
 *   npm run bench:writes [-- --admissions=2000] [--namespaces=100] [--undo=1] [--drop=index_a,index_b] [--explain]
 *
 * `--undo=N` undoes the newest N migrations and `--drop` drops those indexes after migrating,
 * to see what a migration or an index costs. `--explain` prints EXPLAIN (ANALYZE, BUFFERS, WAL)
 * of one admission's flush statement (the last admission's, run in a savepoint that is rolled
 * back before the statement itself runs). Asserts nothing.
 */
import pg from 'pg';
import { LedgerCommands, openDataSource, runMigrationsLocked, UsageProjection } from '@quota/ledger';
import { createDatabase } from './lib/postgres.js';
import { podAdmission } from './lib/review.js';
import { indexEntriesWritten, measureWrites, rowsWritten, writesPerAdmission, type WalMeasure } from './lib/writes.js';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ADMISSIONS = Number(arg('admissions') ?? 2000);
const NAMESPACES = Number(arg('namespaces') ?? 100);
const CLIENTS = 16;
const DROP = (arg('drop') ?? '').split(',').filter(Boolean);
const UNDO = Number(arg('undo') ?? 0);
const EXPLAIN = process.argv.includes('--explain');

/**
 * Until disarmed, the next flush statement (the ledger names them ledger_flush_*) is first run
 * under EXPLAIN ANALYZE in a savepoint, rolled back, and its plan kept.
 */
function explainNextFlush(): { plan(): string | undefined } {
  const original = pg.Client.prototype.query;
  const run = (client: pg.Client, query: string | pg.QueryConfig): Promise<pg.QueryResult<{ 'QUERY PLAN': string }>> =>
    (original as unknown as (q: string | pg.QueryConfig) => Promise<pg.QueryResult<{ 'QUERY PLAN': string }>>).call(client, query);
  let plan: string | undefined;
  const patched = async function (this: pg.Client, config: unknown, ...rest: unknown[]): Promise<unknown> {
    const statement = config as { name?: string; text?: string; values?: unknown[] };
    if (plan === undefined && typeof statement?.name === 'string' && statement.name.startsWith('ledger_flush_') && rest.length === 0) {
      plan = '';
      await run(this, 'SAVEPOINT bench_explain');
      const { rows } = await run(this, {
        text: `EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF, TIMING OFF) ${statement.text}`,
        values: statement.values ?? [],
      });
      await run(this, 'ROLLBACK TO SAVEPOINT bench_explain');
      plan = `${statement.text}\n\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`;
      pg.Client.prototype.query = original;
    }
    return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
  };
  pg.Client.prototype.query = patched as typeof original;
  return { plan: () => plan };
}

const db = await createDatabase('writes');
const dataSource = await openDataSource({ url: db.url, poolSize: 8 });
try {
  await runMigrationsLocked(dataSource);
  for (let i = 0; i < UNDO; i++) await dataSource.undoLastMigration({ transaction: 'each' });
  for (const index of DROP) await dataSource.query(`DROP INDEX ${index.replace(/[^a-z0-9_]/g, '')}`);
  const ledger = new LedgerCommands(dataSource);
  const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `ns-${i}`);
  for (const namespace of namespaces) {
    await ledger.putQuota(
      namespace,
      { name: 'compute', spec: { hard: { pods: '1000000', 'requests.cpu': '1000000' } } },
      { actor: 'bench' },
    );
  }
  const projection = new UsageProjection(dataSource);
  await projection.catchUp();

  let next = 0;
  let allowed = 0;
  let explained: { plan(): string | undefined } | undefined;
  const admit = async (): Promise<void> => {
    for (let n = next++; n < ADMISSIONS; n = next++) {
      if (EXPLAIN && n === ADMISSIONS - 1) explained = explainNextFlush();
      const namespace = namespaces[n % namespaces.length] as string;
      const { result } = await ledger.admit(podAdmission(namespace, n));
      if (result.allowed) allowed++;
    }
  };
  const admissions = await measureWrites(db.url, () => Promise.all(Array.from({ length: CLIENTS }, admit)));
  const batches = ledger.stats.transactions;
  const projected = await measureWrites(db.url, () => projection.catchUp());
  await ledger.close();

  const summary = (label: string, wal: WalMeasure, clusterWalBytes: number): Record<string, string | number> =>
    'unavailable' in wal
      ? { phase: label, 'cluster WAL bytes/adm': Math.round(clusterWalBytes / allowed), 'this database': wal.unavailable }
      : {
          phase: label,
          'cluster WAL bytes/adm': Math.round(clusterWalBytes / allowed),
          'WAL bytes/adm': Math.round(wal.bytes / allowed),
          'of which FPI': Math.round(wal.fpiBytes / allowed),
          'rows/adm': Number((rowsWritten(wal) / allowed).toFixed(2)),
          'index entries/adm': Number((indexEntriesWritten(wal) / allowed).toFixed(2)),
          'commits/adm': Number((wal.commits / allowed).toFixed(2)),
        };
  if (explained?.plan()) console.log(`One admission's flush statement:\n${explained.plan()}\n`);
  console.log(
    `${allowed} of ${ADMISSIONS} admissions allowed over ${NAMESPACES} namespaces, ${CLIENTS} clients, in ${batches} ledger transactions (including setup)${UNDO ? `; newest ${UNDO} migration(s) undone` : ''}${DROP.length ? `; dropped ${DROP.join(', ')}` : ''}`,
  );
  console.table([
    summary('admissions', admissions.wal, admissions.clusterWalBytes),
    summary('projection catch-up', projected.wal, projected.clusterWalBytes),
  ]);
  for (const [label, { wal }] of [
    ['admissions', admissions],
    ['projection catch-up', projected],
  ] as const) {
    if ('unavailable' in wal) continue;
    console.log(`Where the writes go: ${label}, per admission`);
    console.table(writesPerAdmission(wal, allowed));
  }
} finally {
  await dataSource.destroy();
  await db.drop();
}
