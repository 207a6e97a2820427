import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { assert, fold, initialState, isSharedQuotaKey, type NamespaceState } from '@quota/domain';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { headOf, reservationFromJson, reservationToJson, stateOf, type HeadJson, type ReservationJson } from '../head.js';
import { FOLD_START, forgetRetentionHorizon } from './retention.js';
import { decodeEvent, FOLD_COLUMNS, type FoldRow } from '../rows.js';
import { ident } from '../sql.js';
import { exportRows, readBack, syncDirectory } from './archive-file.js';

export type { ArchivedEvent } from './archive-file.js';

/**
 * The archive path of `ledger_events` (`npm run ledger:archive`; README, "Retention and
 * archiving"). Whole monthly partitions older than a cutoff leave the ledger, oldest first, each
 * in one REPEATABLE READ transaction:
 *
 * 1. `LOCK TABLE <partition> IN SHARE MODE`, before the snapshot: a writer still inserting into
 *    that month (its transaction read the clock before the month ended) is waited for, and none
 *    can start, so the snapshot holds the partition's final rows. Writers into other months
 *    never touch the partition's lock.
 * 2. Refuses the partition while the projection has not applied all of it (below).
 * 3. Writes its rows, by position, as NDJSON to `<dir>/<partition>.ndjson.partial`; checks the
 *    line count against `count(*)` in the same snapshot; fsyncs; renames to `<partition>.ndjson`.
 * 4. Writes each stream's state at its last event in the partition (`ledger_horizon_states`), so
 *    usage from the new horizon on stays exact.
 * 5. DETACH PARTITION. Not CONCURRENTLY: PostgreSQL refuses it while a DEFAULT partition exists,
 *    and it cannot run inside the transaction that records the archive. It takes the ledger's
 *    ACCESS EXCLUSIVE lock for a catalog change, under `lock_timeout` so that admissions never
 *    queue long behind it (a timeout is retried a few times, then the run fails, changing nothing).
 *    The detached table is renamed `archived_<partition>` and gets the row triggers the detach
 *    removed (UPDATE and DELETE stay refused; its TRUNCATE trigger was its own).
 * 6. Records it in `ledger_retention`; commits. Only with `drop`, and only after reading the file
 *    back against the recorded count and digest, is the detached table dropped.
 *
 * Reservations still live are no reason to keep a month: every real namespace holds long-lived
 * objects (ConfigMaps, Secrets, PVCs), and a month that had to wait for all of them would never
 * go. Each horizon state carries its stream's live reservations as the fold left them, so the
 * projection reads one whose making (or Terminated) event was archived from there
 * (projection-horizon.ts), a rebuild starts each namespace at its horizon state, and as-of folds
 * start there too (retention.ts FOLD_START). A partition is refused only while the projection has
 * not applied all of it: the horizon state must not be ahead of what the read models hold.
 */

export interface ArchiveOptions {
  /** RFC 3339: every monthly partition whose range ends at or before it; at most the start of the current UTC month. */
  readonly before: string;
  /** Where the NDJSON files are written (made if missing). */
  readonly directory: string;
  /** Drops each detached table once its file reads back right, and those earlier runs left. */
  readonly drop?: boolean;
  /** Reports what would be archived and changes nothing. */
  readonly dryRun?: boolean;
  readonly log?: (message: string) => void;
}

export interface PartitionRange {
  readonly partition: string;
  readonly rangeStart: string;
  readonly rangeEnd: string;
  readonly events: number;
}

export interface PartitionArchive extends PartitionRange {
  readonly file: string;
  readonly sha256: string;
  /** Streams whose state at the horizon was written. */
  readonly streams: number;
}

export interface ArchiveReport {
  /** With `dryRun`: what would be archived. */
  readonly planned: readonly PartitionRange[];
  readonly archived: readonly PartitionArchive[];
  /** Detached tables dropped (this run's and earlier runs'). */
  readonly dropped: readonly string[];
  /** The retention horizon after the run (undefined: nothing was ever archived). */
  readonly horizon?: string;
  /** Events in DEFAULT recorded before the horizon: no partition held them, so no archive does; they stay in the ledger. */
  readonly defaultBeforeHorizon: number;
}

/** The archive refused to go on: the message says why and what to do; nothing was changed by the step that refused. */
export class ArchiveRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveRefused';
  }
}

/** Events read per query while folding a stream to its horizon state. */
const FOLD_PAGE_ROWS = 2000;
/** How long the detach waits for the ledger's lock each time, and how many times it tries. */
const DETACH_LOCK_TIMEOUT_MS = 2_000;
const DETACH_ATTEMPTS_MAX = 5;
/** How long the partition's own lock may take: only a writer still inserting into that month holds it. */
const PARTITION_LOCK_TIMEOUT_MS = 30_000;

const ARCHIVED_PREFIX = 'archived_';

export async function archiveLedger(dataSource: DataSource, options: ArchiveOptions): Promise<ArchiveReport> {
  const log = options.log ?? (() => undefined);
  const before = new Date(options.before);
  if (Number.isNaN(before.getTime())) throw new ArchiveRefused(`--before=${options.before} is not an RFC 3339 instant`);
  const [limits] = await dataSource.query(`SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS this_month`);
  const thisMonth = (limits as { this_month: Date }).this_month;
  if (before.getTime() > thisMonth.getTime()) {
    throw new ArchiveRefused(
      `--before=${options.before} is after the start of the current month (${thisMonth.toISOString()}): the month being written is never archived`,
    );
  }
  const candidates = (await dataSource.query(
    `SELECT partition, range_start, range_end FROM ledger_event_partitions WHERE range_end <= $1::timestamptz ORDER BY range_start`,
    [before.toISOString()],
  )) as { partition: string; range_start: Date; range_end: Date }[];

  if (options.dryRun) {
    const planned: PartitionRange[] = [];
    for (const c of candidates) {
      const [row] = await dataSource.query(`SELECT count(*)::text AS count FROM ${ident(c.partition)}`);
      planned.push({
        partition: c.partition,
        rangeStart: c.range_start.toISOString(),
        rangeEnd: c.range_end.toISOString(),
        events: Number((row as { count: string }).count),
      });
    }
    const horizon = planned.at(-1)?.rangeEnd ?? (await currentHorizon(dataSource));
    return {
      planned,
      archived: [],
      dropped: [],
      ...(horizon ? { horizon } : {}),
      defaultBeforeHorizon: horizon ? await defaultBefore(dataSource, horizon) : 0,
    };
  }

  await mkdir(options.directory, { recursive: true });
  const archived: PartitionArchive[] = [];
  for (const c of candidates) {
    const range = { partition: c.partition, rangeStart: c.range_start.toISOString(), rangeEnd: c.range_end.toISOString() };
    log(`archiving ${range.partition} [${range.rangeStart}, ${range.rangeEnd})`);
    const result = await archivePartition(dataSource, range, options.directory);
    forgetRetentionHorizon(dataSource);
    log(
      `  ${result.events} events → ${result.file} (sha256 ${result.sha256}); ${result.streams} horizon states; detached as ${ARCHIVED_PREFIX}${range.partition}`,
    );
    archived.push(result);
  }
  const dropped = options.drop ? await dropVerified(dataSource, log) : [];
  const horizon = await currentHorizon(dataSource);
  const defaultBeforeHorizon = horizon ? await defaultBefore(dataSource, horizon) : 0;
  if (defaultBeforeHorizon > 0)
    log(
      `note: ${defaultBeforeHorizon} events in ledger_events_default were recorded before ${horizon}; no partition held them, so they stay in the ledger`,
    );
  return { planned: [], archived, dropped, ...(horizon ? { horizon } : {}), defaultBeforeHorizon };
}

async function archivePartition(
  dataSource: DataSource,
  range: Omit<PartitionRange, 'events'>,
  directory: string,
): Promise<PartitionArchive> {
  const runner = dataSource.createQueryRunner();
  const file = path.resolve(directory, `${range.partition}.ndjson`);
  const partial = `${file}.partial`;
  try {
    const client = (await runner.connect()) as pg.PoolClient;
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    let committing = false;
    try {
      await client.query(`SET LOCAL lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`);
      // Taken before the first query, so the snapshot begins after every writer into the month.
      await client.query(`LOCK TABLE ${ident(range.partition)} IN SHARE MODE`);
      await refuseWhileProjectionNeedsIt(client, range.partition);
      const exported = await exportRows(client, range.partition, partial);
      const [counted] = (await client.query<{ count: string }>(`SELECT count(*)::text AS count FROM ${ident(range.partition)}`)).rows;
      if (Number(counted?.count) !== exported.events) {
        throw new Error(`${range.partition}: wrote ${exported.events} lines but the partition holds ${counted?.count} rows`);
      }
      await rename(partial, file);
      await syncDirectory(directory);
      const streams = await writeHorizonStates(client, range.partition, range.rangeEnd);
      await detach(client, range.partition);
      await client.query(
        `INSERT INTO ledger_retention (partition, range_start, range_end, events, first_position, last_position, file, sha256, detached_as)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          range.partition,
          range.rangeStart,
          range.rangeEnd,
          exported.events,
          exported.firstPosition,
          exported.lastPosition,
          file,
          exported.sha256,
          `${ARCHIVED_PREFIX}${range.partition}`,
        ],
      );
      committing = true;
      await client.query('COMMIT');
      return { ...range, events: exported.events, file, sha256: exported.sha256, streams };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      // No file stays for a month that was not archived; but a COMMIT that failed may have
      // committed, and then ledger_retention names the file.
      await rm(partial, { force: true }).catch(() => undefined);
      if (!committing) await rm(file, { force: true }).catch(() => undefined);
      throw error;
    }
  } finally {
    await runner.release();
  }
}

/**
 * The projection's need (see the header): every namespace's events of the partition applied, so
 * that no event the archive takes is still to be read by the worker.
 */
async function refuseWhileProjectionNeedsIt(client: pg.PoolClient, partition: string): Promise<void> {
  const last = `SELECT namespace, max(version) AS version FROM ${ident(partition)} GROUP BY namespace`;
  const { rows: behind } = await client.query<{ namespace: string; version: string; projected: string }>(
    `SELECT l.namespace, l.version::text AS version, coalesce(p.version, 0)::text AS projected
       FROM (${last}) AS l LEFT JOIN projected_namespaces p ON p.namespace = l.namespace
      WHERE coalesce(p.version, 0) < l.version`,
  );
  const lagging = behind.filter((row) => !isSharedQuotaKey(row.namespace));
  const first = lagging[0];
  if (first) {
    throw new ArchiveRefused(
      `${partition} is not archived: the projection has not applied all of it (${lagging.length} namespaces behind, e.g. "${first.namespace}" at version ${first.projected} of ${first.version}); start the projection worker and run again`,
    );
  }
}

/**
 * Each stream's state at its last event in the partition, folded as `usage?at=` folds: from the
 * newest of its earlier horizon state and its snapshots at or below that version, over the
 * events in between (read from the whole ledger: the partition is still attached). A shared
 * quota's stream gets its last event's type and data (`definition`: what it was defined as
 * then, copied in SQL so that its numbers stay as written). Returns how many streams it wrote.
 */
async function writeHorizonStates(client: pg.PoolClient, partition: string, horizon: string): Promise<number> {
  const { rows: lasts } = await client.query<{ namespace: string; version: string; position: string; recorded_at: Date }>(
    `SELECT DISTINCT ON (e.namespace) e.namespace, e.version::text AS version, e.position::text AS position, e.recorded_at
       FROM ${ident(partition)} AS e ORDER BY e.namespace, e.version DESC`,
  );
  for (const last of lasts) {
    const version = Number(last.version);
    if (isSharedQuotaKey(last.namespace)) {
      await client.query(
        `INSERT INTO ledger_horizon_states (namespace, version, position, recorded_at, definition, horizon)
         SELECT e.namespace, e.version, e.position, e.recorded_at, jsonb_build_object('type', e.type, 'data', e.data), $3
           FROM ${ident(partition)} AS e WHERE e.namespace = $1 AND e.version = $2`,
        [last.namespace, version, horizon],
      );
      continue;
    }
    const folded = await foldTo(client, last.namespace, version);
    const state: HeadJson = headOf(folded);
    const reservations: ReservationJson[] = [...folded.reservations.values()].map(reservationToJson);
    await client.query(
      `INSERT INTO ledger_horizon_states (namespace, version, position, recorded_at, state, reservations, horizon) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [last.namespace, version, last.position, last.recorded_at, JSON.stringify(state), JSON.stringify(reservations), horizon],
    );
  }
  return lasts.length;
}

async function foldTo(client: pg.PoolClient, namespace: string, version: number): Promise<NamespaceState> {
  const { rows: starts } = await client.query<{ version: string; state: HeadJson; reservations: ReservationJson[] }>(
    `SELECT f.version::text AS version, f.state, f.reservations FROM (${FOLD_START('$2')}) AS f`,
    [namespace, version],
  );
  const start = starts[0];
  let state = start ? stateOf(Number(start.version), start.state, start.reservations.map(reservationFromJson)) : initialState();
  while (state.version < version) {
    const { rows } = await client.query<FoldRow>(
      `SELECT ${FOLD_COLUMNS} FROM ledger_events WHERE namespace = $1 AND version > $2 AND version <= $3 ORDER BY ledger_events.version LIMIT ${FOLD_PAGE_ROWS}`,
      [namespace, state.version, version],
    );
    const events = rows.map(decodeEvent);
    // A gap would fold a wrong state and present it as exact: a stream's versions are gap-free.
    events.forEach((event, i) =>
      assert(event.version === state.version + i + 1, `stream ${namespace} lacks version ${state.version + i + 1} below ${version}`),
    );
    assert(events.length > 0, `stream ${namespace} lacks version ${state.version + 1} below ${version}`);
    state = fold(events, state);
  }
  return state;
}

/**
 * DETACH PARTITION under a short lock_timeout, tried again a few times: while it waits for the
 * ledger's lock, every later admission queues behind it, so it never waits long.
 */
async function detach(client: pg.PoolClient, partition: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await client.query('SAVEPOINT detach');
    try {
      await client.query(`SET LOCAL lock_timeout = ${DETACH_LOCK_TIMEOUT_MS}`);
      await client.query(`ALTER TABLE ledger_events DETACH PARTITION ${ident(partition)}`);
      break;
    } catch (error) {
      await client.query('ROLLBACK TO SAVEPOINT detach');
      // 55P03 lock_not_available (lock_timeout), 40P01 deadlock (a writer into the month behind the partition's lock).
      const code = (error as { code?: string }).code;
      if ((code !== '55P03' && code !== '40P01') || attempt >= DETACH_ATTEMPTS_MAX) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
  const archivedName = `${ARCHIVED_PREFIX}${partition}`;
  await client.query(`ALTER TABLE ${ident(partition)} RENAME TO ${ident(archivedName)}`);
  // Detaching removed the row triggers cloned from the ledger: until it is dropped, the archived
  // table stays as immutable as the ledger was.
  await client.query(
    `CREATE TRIGGER ledger_events_no_update_delete BEFORE UPDATE OR DELETE ON ${ident(archivedName)} FOR EACH ROW EXECUTE FUNCTION ledger_events_append_only()`,
  );
}

/** Drops the detached tables not dropped yet, each once its file reads back with the recorded line count and digest. */
async function dropVerified(dataSource: DataSource, log: (message: string) => void): Promise<string[]> {
  const pending = (await dataSource.query(
    `SELECT partition, detached_as, file, events::text AS events, sha256 FROM ledger_retention WHERE dropped_at IS NULL ORDER BY range_start`,
  )) as {
    partition: string;
    detached_as: string;
    file: string;
    events: string;
    sha256: string;
  }[];
  const dropped: string[] = [];
  for (const p of pending) {
    const read = await readBack(p.file).catch((error: unknown) => {
      throw new ArchiveRefused(
        `${p.detached_as} is not dropped: its archive ${p.file} cannot be read (${error instanceof Error ? error.message : String(error)})`,
      );
    });
    if (read.lines !== Number(p.events) || read.sha256 !== p.sha256) {
      throw new ArchiveRefused(
        `${p.detached_as} is not dropped: ${p.file} holds ${read.lines} lines (sha256 ${read.sha256}), the archive recorded ${p.events} (sha256 ${p.sha256})`,
      );
    }
    await dataSource.transaction(async (manager) => {
      await manager.query(`DROP TABLE ${ident(p.detached_as)}`);
      await manager.query(`UPDATE ledger_retention SET dropped_at = clock_timestamp() WHERE partition = $1`, [p.partition]);
    });
    log(`dropped ${p.detached_as} (its events are in ${p.file})`);
    dropped.push(p.detached_as);
  }
  return dropped;
}

async function currentHorizon(dataSource: DataSource): Promise<string | undefined> {
  const [row] = await dataSource.query(`SELECT max(range_end) AS horizon FROM ledger_retention`);
  return (row as { horizon: Date | null } | undefined)?.horizon?.toISOString();
}

async function defaultBefore(dataSource: DataSource, horizon: string): Promise<number> {
  const [row] = await dataSource.query(`SELECT count(*)::int AS count FROM ledger_events_default WHERE recorded_at < $1::timestamptz`, [
    horizon,
  ]);
  return (row as { count: number }).count;
}
