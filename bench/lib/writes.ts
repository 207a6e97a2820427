import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import pg from 'pg';

/**
 * What a load wrote, counted from the WAL: bytes, rows (heap tuples inserted, updated or
 * deleted) and index entries, per table and index of one database.
 *
 * Why the WAL and not pg_stat_user_tables or count(*): the server is shared (other runs write
 * to other databases at the same time), so the cluster-wide LSN difference is only an upper
 * bound; pg_stat_user_tables reaches the view up to 10 s late (a backend with pending counts
 * flushes them at most once a second while busy and on an idle timeout of 10 s), and no view
 * counts index entries; count(*) sees neither updates nor rows written by a transaction that
 * was rolled back and rerun. Every tuple and index entry written is one WAL record naming its
 * relation, so `pg_waldump` over the load's LSN range, kept to this database's relations and
 * its transactions' commit records, counts them exactly.
 *
 * Needs the server's pg_wal directory readable and pg_waldump (PG_WALDUMP, else the server
 * version's Debian path); otherwise `walOfDatabase` says why and the bench prints the
 * cluster-wide figure alone.
 */

export interface RelationWrites {
  /** The table, index or TOAST relation written. */
  readonly relation: string;
  readonly kind: 'table' | 'index' | 'toast' | 'other';
  /** The table it belongs to (itself for a table). */
  readonly table: string;
  /** Heap tuples: inserted (MULTI_INSERT counts each), updated (HOT or not), HOT-updated, deleted. */
  readonly inserted: number;
  readonly updated: number;
  readonly hotUpdated: number;
  readonly deleted: number;
  /** B-tree leaf entries written (a leaf split carries its new entry). */
  readonly indexEntries: number;
  readonly records: number;
  /** WAL bytes of its records, of which full-page images. */
  readonly bytes: number;
  readonly fpiBytes: number;
}

export interface DatabaseWal {
  /** This database's records (including its transactions' commit and abort records). */
  readonly bytes: number;
  readonly fpiBytes: number;
  readonly records: number;
  readonly commits: number;
  readonly aborts: number;
  readonly relations: readonly RelationWrites[];
}

export type WalMeasure = DatabaseWal | { readonly unavailable: string };

/** The WAL insert position now: mark it before and after a load. */
export async function walPosition(client: pg.ClientBase | pg.Pool): Promise<string> {
  return (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn ?? '0/0';
}

/** Bytes of WAL the whole server wrote between two positions (every database). */
export async function walBytesBetween(client: pg.ClientBase | pg.Pool, from: string, to: string): Promise<number> {
  return Number(
    (await client.query<{ n: string }>('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::text AS n', [from, to])).rows[0]?.n ?? 0,
  );
}

interface Mutable {
  inserted: number;
  updated: number;
  hotUpdated: number;
  deleted: number;
  indexEntries: number;
  records: number;
  bytes: number;
  fpiBytes: number;
}

const RECORD = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*(\d+)\/\s*(\d+), tx:\s*(\d+), lsn: [^,]+, prev [^,]+, desc: (.*)$/;
const BLOCK = /blkref #\d+: rel (\d+)\/(\d+)\/(\d+)(?: fork (\w+))?/;

/**
 * This database's WAL between two positions, by relation. `client` is connected to the
 * database measured, as a superuser (data_directory is not shown to others).
 */
export async function walOfDatabase(client: pg.ClientBase | pg.Pool, from: string, to: string): Promise<WalMeasure> {
  const [settings] = (
    await client.query<{ dir: string; major: string; db: string; flushed: boolean }>(
      `SELECT current_setting('data_directory') AS dir, (current_setting('server_version_num')::int / 10000)::text AS major,
              (SELECT oid::text FROM pg_database WHERE datname = current_database()) AS db, pg_current_wal_flush_lsn() >= $1::pg_lsn AS flushed`,
      [to],
    )
  ).rows;
  if (!settings) return { unavailable: 'no settings' };
  const waldump = process.env['PG_WALDUMP'] ?? `/usr/lib/postgresql/${settings.major}/bin/pg_waldump`;
  const walDir = `${settings.dir}/pg_wal`;
  if (!existsSync(waldump)) return { unavailable: `no pg_waldump at ${waldump} (set PG_WALDUMP)` };
  if (!existsSync(walDir)) return { unavailable: `${walDir} is not readable here` };
  // pg_waldump reads the files: wait until the end position is on disk (the WAL writer flushes within wal_writer_delay).
  for (let i = 0; i < 50 && !settings.flushed; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    settings.flushed =
      (await client.query<{ ok: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok', [to])).rows[0]?.ok ?? false;
  }

  const byNode = new Map<string, Mutable>();
  const ours = new Set<string>();
  const total = { bytes: 0, fpiBytes: 0, records: 0, commits: 0, aborts: 0 };
  const child = spawn(waldump, ['-p', walDir, '-s', from, '-e', to], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  for await (const line of createInterface({ input: child.stdout })) {
    const m = RECORD.exec(line);
    if (!m) continue;
    const [, rmgr, rec, tot, tx, desc] = m as unknown as [string, string, string, string, string, string];
    const block = BLOCK.exec(desc);
    const mine = block ? block[2] === settings.db : ours.has(tx) && tx !== '0';
    if (!mine) continue;
    if (tx !== '0') ours.add(tx);
    const bytes = Number(tot);
    const fpi = bytes - Number(rec);
    total.bytes += bytes;
    total.fpiBytes += fpi;
    total.records++;
    if (rmgr === 'Transaction') {
      if (desc.startsWith('COMMIT')) total.commits++;
      else if (desc.startsWith('ABORT')) total.aborts++;
    }
    if (!block) continue;
    const node = block[3] as string;
    const r = byNode.get(node) ?? {
      inserted: 0,
      updated: 0,
      hotUpdated: 0,
      deleted: 0,
      indexEntries: 0,
      records: 0,
      bytes: 0,
      fpiBytes: 0,
    };
    byNode.set(node, r);
    countRecord(r, rmgr, desc, bytes, fpi);
  }
  const code = await new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('close', resolve),
  );
  // pg_waldump exits 1 when the range ends mid-record ("error in WAL record"), having printed everything before it.
  if (code !== 0 && total.records === 0) return { unavailable: `pg_waldump failed (${code}): ${stderr.trim()}` };

  const names = await relationNames(client, [...byNode.keys()]);
  const relations = [...byNode].map(([node, r]): RelationWrites => ({
    ...(names.get(node) ?? { relation: `filenode ${node}`, kind: 'other', table: '?' }),
    ...r,
  }));
  relations.sort((a, b) => a.table.localeCompare(b.table) || kindOrder(a.kind) - kindOrder(b.kind) || a.relation.localeCompare(b.relation));
  return { ...total, relations };
}

/** One WAL record of a relation, counted: its bytes (`fpi` of them full-page images), and the rows or index entries it wrote. */
function countRecord(r: Mutable, rmgr: string, desc: string, bytes: number, fpi: number): void {
  r.records++;
  r.bytes += bytes;
  r.fpiBytes += fpi;
  if (rmgr === 'Heap') {
    if (desc.startsWith('INSERT')) r.inserted++;
    else if (desc.startsWith('HOT_UPDATE')) {
      r.updated++;
      r.hotUpdated++;
    } else if (desc.startsWith('UPDATE')) r.updated++;
    else if (desc.startsWith('DELETE')) r.deleted++;
  } else if (rmgr === 'Heap2' && desc.startsWith('MULTI_INSERT')) {
    r.inserted += Number(/(\d+) tuples/.exec(desc)?.[1] ?? 1);
  } else if (rmgr === 'Btree') {
    if (desc.startsWith('INSERT_LEAF') || desc.startsWith('INSERT_POST') || (desc.startsWith('SPLIT') && /level:? 0\b/.test(desc)))
      r.indexEntries++;
  }
}

const kindOrder = (kind: RelationWrites['kind']): number => ['table', 'toast', 'index', 'other'].indexOf(kind);

async function relationNames(
  client: pg.ClientBase | pg.Pool,
  nodes: readonly string[],
): Promise<Map<string, Pick<RelationWrites, 'relation' | 'kind' | 'table'>>> {
  const { rows } = await client.query<{ node: string; relation: string | null; relkind: string | null; owner: string | null }>(
    `SELECT n.node::text AS node, c.relname AS relation, c.relkind::text AS relkind,
            coalesce(ti.relname, tt.relname, tti.relname, c.relname) AS owner
       FROM unnest($1::oid[]) AS n(node)
       LEFT JOIN pg_class c ON c.oid = pg_filenode_relation(0, n.node)
       LEFT JOIN pg_index i ON i.indexrelid = c.oid
       LEFT JOIN pg_class ti ON ti.oid = i.indrelid AND ti.relkind <> 't'
       LEFT JOIN pg_class tt ON tt.reltoastrelid = c.oid
       LEFT JOIN pg_class tti ON tti.reltoastrelid = i.indrelid`,
    [nodes],
  );
  return new Map(
    rows.map((row) => [
      row.node,
      row.relation === null
        ? { relation: `filenode ${row.node}`, kind: 'other', table: '?' }
        : {
            relation: row.relation,
            kind: row.relation.startsWith('pg_toast') ? 'toast' : row.relkind === 'i' ? 'index' : row.relkind === 'r' ? 'table' : 'other',
            table: row.owner ?? row.relation,
          },
    ]),
  );
}

/** Heap tuples written (inserted, updated, deleted) over every table and TOAST table. */
export function rowsWritten(wal: DatabaseWal): number {
  return wal.relations.reduce((sum, r) => sum + (r.kind === 'index' ? 0 : r.inserted + r.updated + r.deleted), 0);
}

export function indexEntriesWritten(wal: DatabaseWal): number {
  return wal.relations.reduce((sum, r) => sum + r.indexEntries, 0);
}

/** Per relation, per admission: the "where the writes go" table. */
export function writesPerAdmission(wal: DatabaseWal, admissions: number): Record<string, string | number>[] {
  const per = (n: number, digits = 2): number => Number((n / Math.max(1, admissions)).toFixed(digits));
  return wal.relations
    .filter((r) => r.records > 0)
    .map((r) => ({
      table: r.table,
      relation: r.kind === 'table' ? '(rows)' : r.relation,
      'rows/adm': r.kind === 'index' ? '' : per(r.inserted + r.updated + r.deleted),
      'of which ins/upd(HOT)/del': r.kind === 'index' ? '' : `${per(r.inserted)}/${per(r.updated)}(${per(r.hotUpdated)})/${per(r.deleted)}`,
      'index entries/adm': r.kind === 'index' ? per(r.indexEntries) : '',
      'WAL bytes/adm': per(r.bytes, 0),
      'of which FPI': per(r.fpiBytes, 0),
    }));
}

/** Read before and after a load: the WAL positions and a connection to the measured database. */
export async function measureWrites<T>(
  databaseUrl: string,
  load: () => Promise<T>,
): Promise<{ result: T; clusterWalBytes: number; wal: WalMeasure }> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'qlbench-wal' });
  await client.connect();
  try {
    // A temporary replication slot that reserves WAL from now on: a checkpoint during the load
    // would otherwise recycle the segments pg_waldump reads. Dropped with this session.
    await client.query(`SELECT pg_create_physical_replication_slot('qlbench_wal_' || pg_backend_pid(), true, true)`).catch(() => undefined);
    const from = await walPosition(client);
    const result = await load();
    const to = await walPosition(client);
    return { result, clusterWalBytes: await walBytesBetween(client, from, to), wal: await walOfDatabase(client, from, to) };
  } finally {
    await client.end();
  }
}

/** A load's writes per admission, as the bench prints and stores them. */
export interface WriteFigures {
  /** The whole server's WAL over the load (pg_wal_lsn_diff): includes other databases' writes on a shared server. */
  readonly serverWalBytesPerAdmission: number;
  /** This database's alone (undefined when pg_waldump could not be run: then `unavailable` says why). */
  readonly walBytesPerAdmission?: number;
  readonly fpiBytesPerAdmission?: number;
  readonly rowsPerAdmission?: number;
  readonly indexEntriesPerAdmission?: number;
  readonly commitsPerAdmission?: number;
  /** Per table: rows, index entries and WAL bytes per admission. */
  readonly byTable?: Record<string, { readonly rows: number; readonly indexEntries: number; readonly walBytes: number }>;
  /** Per relation (tables, their TOAST and indexes), as writesPerAdmission prints it. */
  readonly byRelation?: readonly RelationWrites[];
  readonly unavailable?: string;
}

export function writeFigures(wal: WalMeasure, serverWalBytes: number, admissions: number): WriteFigures {
  const per = (n: number, digits = 2): number => Number((n / Math.max(1, admissions)).toFixed(digits));
  const serverWalBytesPerAdmission = per(serverWalBytes, 0);
  if ('unavailable' in wal) return { serverWalBytesPerAdmission, unavailable: wal.unavailable };
  const byTable: Record<string, { rows: number; indexEntries: number; walBytes: number }> = {};
  for (const r of wal.relations) {
    const t = (byTable[r.table] ??= { rows: 0, indexEntries: 0, walBytes: 0 });
    if (r.kind !== 'index') t.rows += r.inserted + r.updated + r.deleted;
    t.indexEntries += r.indexEntries;
    t.walBytes += r.bytes;
  }
  return {
    serverWalBytesPerAdmission,
    walBytesPerAdmission: per(wal.bytes, 0),
    fpiBytesPerAdmission: per(wal.fpiBytes, 0),
    rowsPerAdmission: per(rowsWritten(wal)),
    indexEntriesPerAdmission: per(indexEntriesWritten(wal)),
    commitsPerAdmission: per(wal.commits),
    byTable: Object.fromEntries(
      Object.entries(byTable)
        .filter(([, t]) => t.rows + t.indexEntries > 0)
        .map(([table, t]) => [table, { rows: per(t.rows), indexEntries: per(t.indexEntries), walBytes: per(t.walBytes, 0) }]),
    ),
    byRelation: wal.relations,
  };
}

/** "Where the writes go": one row per table, one column per load, each cell rows / index entries / WAL bytes per admission. */
export function whereTheWritesGo(
  loads: readonly { readonly label: string; readonly writes: WriteFigures }[],
): Record<string, Record<string, string>> {
  const tables = [...new Set(loads.flatMap((l) => Object.keys(l.writes.byTable ?? {})))].sort();
  const cell = (t: { rows: number; indexEntries: number; walBytes: number } | undefined): string =>
    t ? `${t.rows} / ${t.indexEntries} / ${t.walBytes}` : '';
  return Object.fromEntries(
    tables.map((table) => [table, Object.fromEntries(loads.map((l) => [l.label, cell(l.writes.byTable?.[table])]))]),
  );
}
