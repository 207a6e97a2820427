/**
 * Where one admission's writes go: a fixed number of allowed pod admissions through the ledger
 * in-process (no HTTP), then the projection catching up on them, each counted from this
 * database's WAL (bench/lib/writes.ts): WAL bytes, rows and index entries per admission, per
 * table and index. Counts, not times, so a busy shared machine does not move them.
 *
 *   npm run bench:writes [-- --admissions=2000] [--namespaces=100] [--drop=index_a,index_b]
 *
 * `--drop` drops those indexes after migrating, to see what each one costs. Asserts nothing.
 */
import { type Pod } from '@quota/domain';
import { LedgerCommands, openDataSource, runMigrationsLocked, UsageProjection } from '@quota/ledger';
import { createDatabase } from './lib/postgres.js';
import { indexEntriesWritten, measureWrites, rowsWritten, writesPerAdmission, type WalMeasure } from './lib/writes.js';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ADMISSIONS = Number(arg('admissions') ?? 2000);
const NAMESPACES = Number(arg('namespaces') ?? 100);
const CLIENTS = 16;
const DROP = (arg('drop') ?? '').split(',').filter(Boolean);

const db = await createDatabase('writes');
const dataSource = await openDataSource({ url: db.url, poolSize: 8 });
try {
  await runMigrationsLocked(dataSource);
  for (const index of DROP) await dataSource.query(`DROP INDEX ${index.replace(/[^a-z0-9_]/g, '')}`);
  const ledger = new LedgerCommands(dataSource);
  const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `ns-${i}`);
  for (const namespace of namespaces) {
    await ledger.putQuota(namespace, { name: 'compute', spec: { hard: { pods: '1000000', 'requests.cpu': '1000000' } } }, { actor: 'bench' });
  }
  const projection = new UsageProjection(dataSource);
  await projection.catchUp();

  let next = 0;
  let allowed = 0;
  const admit = async (): Promise<void> => {
    for (let n = next++; n < ADMISSIONS; n = next++) {
      const namespace = namespaces[n % namespaces.length] as string;
      const object: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p${n}`, uid: `u${n}`, namespace },
        spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '1m' } } }] },
      };
      const { result } = await ledger.admit({
        namespace,
        source: 'webhook',
        request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name: `p${n}`, object },
        requestKey: `review:${n}`,
        dryRun: false,
        requester: 'bench',
      });
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
  console.log(`${allowed} of ${ADMISSIONS} admissions allowed over ${NAMESPACES} namespaces, ${CLIENTS} clients, in ${batches} ledger transactions (including setup)${DROP.length ? `; dropped ${DROP.join(', ')}` : ''}`);
  console.table([summary('admissions', admissions.wal, admissions.clusterWalBytes), summary('projection catch-up', projected.wal, projected.clusterWalBytes)]);
  for (const [label, { wal }] of [['admissions', admissions], ['projection catch-up', projected]] as const) {
    if ('unavailable' in wal) continue;
    console.log(`Where the writes go: ${label}, per admission`);
    console.table(writesPerAdmission(wal, allowed));
  }
} finally {
  await dataSource.destroy();
  await db.drop();
}
