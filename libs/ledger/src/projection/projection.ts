import { fold, isSharedQuotaKey, type NamespaceState, type RecordedEvent } from '@quota/domain';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import {
  feedDrained,
  feedRead,
  payloadBytes,
  PROJECTION_STEP_MAX_BYTES,
  versionsRead,
  type BoundedFeedRow,
  type FeedRow,
} from './projection-feed.js';
import { decodeEvent } from '../rows.js';
import { stateOf } from '../head.js';
import { StateCache } from './projection-cache.js';
import { projectionLag, type ProjectionLag } from './projection-lag.js';
import { headJsonOf, type NamespaceRow } from './projection-rows.js';
import { horizonStarts } from './projection-horizon.js';
import { loadReservations } from './projection-reservations.js';
import { BatchWrites, keepHorizonReservations } from './projection-writes.js';
import { SnapshotWriter, type DueSnapshot } from './snapshot-writer.js';
import { VersionRecorder } from '../read/usage-versions.js';

export type { ProjectionLag } from './projection-lag.js';

/**
 * The usage projection: follows the ledger and keeps the read models of
 * migrations/1795500000000-CreateProjections and 1795900000900-UsageVersions (usage per
 * namespace and quota, live reservations, usage at every version for as-of queries, and the
 * snapshots that start folds of what those do not cover yet).
 *
 * It follows each namespace's versions, which are gap-free by construction: a namespace's
 * version v+1 is written only by a transaction that saw v committed (the head's
 * compare-and-set), so whatever of a namespace is visible is a prefix of its stream, and the
 * projection applies a namespace's events only from its projected version + 1 on.
 * Two ways find what is new, and neither waits for any other transaction:
 *
 * - the feed: events above the checkpoint's position, in position order (cheap, the usual path);
 * - the sweep: namespaces whose head (namespace_heads.version, written with their events) is
 *   ahead of their projected version. It finds what the feed passed while its transaction was
 *   still open (an event whose transaction took its position first but committed last), and a
 *   gap ahead of a feed event is filled from the (namespace, version) key. The sweep runs when
 *   the feed is drained, at most every SWEEP_EVERY_MS (and always at the end of catchUp).
 *
 * It used to read only below the cluster-wide `pg_snapshot_xmin`: one long transaction in
 * any database of the same server (or a long read-only snapshot in this one) held every
 * projection back. Each step moves the read models and the checkpoint in one transaction;
 * steps of several workers serialize on the checkpoint row. The full snapshots a step reaches
 * are written after it commits, beside the next steps (snapshot-writer.ts): they grow with a
 * namespace's live reservations, and inside the step they held every later event back.
 */

export interface ProjectionOptions {
  /** Events applied per transaction. */
  readonly batchSize?: number;
  /** Bytes of event payloads one step reads at most (one event always): PROJECTION_STEP_MAX_BYTES. */
  readonly stepBytesMax?: number;
  /** A namespace gets a full snapshot once this many events have passed since its last one. */
  readonly snapshotEvery?: number;
  /** Checkpoint name (one per projection). */
  readonly name?: string;
  /** Told about a snapshot that could not be written (they are written after their step: snapshot-writer.ts). */
  readonly onError?: (error: unknown) => void;
}

/** Event types that change a namespace's definitions (and so its projected_definitions row). */
const DEFINING: ReadonlySet<string> = new Set([
  'QuotaDefined',
  'QuotaChanged',
  'QuotaRemoved',
  'LimitRangeDefined',
  'LimitRangeChanged',
  'LimitRangeRemoved',
]);

const DEFAULTS = { batchSize: 1000, snapshotEvery: 10_000, name: 'usage' };

/** Snapshots a catch-up lets wait to be written before it waits for them. */
const CATCH_UP_SNAPSHOTS_AHEAD = 4;
/** How often, at most, a step looks for namespaces whose head is ahead of their projection (the feed being drained). */
const SWEEP_EVERY_MS = 200;
/** Namespaces one sweep takes on. */
const SWEEP_NAMESPACES_MAX = 200;

export class UsageProjection {
  readonly name: string;
  private readonly batchSize: number;
  private readonly stepBytesMax: number;
  private readonly snapshotEvery: number;
  private sweptAt = 0;
  private readonly cache = new StateCache();
  private readonly snapshots: SnapshotWriter;

  constructor(
    private readonly dataSource: DataSource,
    options: ProjectionOptions = {},
  ) {
    this.name = options.name ?? DEFAULTS.name;
    this.batchSize = options.batchSize ?? DEFAULTS.batchSize;
    this.stepBytesMax = options.stepBytesMax ?? PROJECTION_STEP_MAX_BYTES;
    this.snapshotEvery = options.snapshotEvery ?? DEFAULTS.snapshotEvery;
    this.snapshots = new SnapshotWriter(dataSource, options.onError);
  }

  /**
   * Applies the next events (at most `limit`, at most the batch size and at most stepBytesMax of
   * payloads, but always one, plus a gap's fill): the feed's, then, when the feed is drained, the
   * sweep's (`sweep: 'force'` sweeps whatever the time). Returns how many events it took on (0: nothing new).
   */
  async step(limit = this.batchSize, sweep: 'auto' | 'force' = 'auto'): Promise<number> {
    const max = Math.max(1, Math.min(limit, this.batchSize));
    // The states this step leaves, remembered once it has committed (a rolled-back step's never are).
    const left = new Map<string, NamespaceState>();
    // The snapshots it reached, written once it has committed (snapshot-writer.ts).
    const due: DueSnapshot[] = [];
    const taken = await this.inTransaction(async (client) => {
      await client.query(`INSERT INTO projection_checkpoints (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [this.name]);
      const { rows: checkpoints } = await client.query<{ position: string }>(
        `SELECT position::text AS position FROM projection_checkpoints WHERE name = $1 FOR UPDATE`,
        [this.name],
      );
      const checkpoint = checkpoints[0]?.position ?? '0';
      const { rows } = await client.query<BoundedFeedRow>(feedRead(checkpoint, max, this.stepBytesMax));
      let swept: FeedRow[] = [];
      let archived = 0;
      if (feedDrained(rows, max) && (sweep === 'force' || Date.now() - this.sweptAt >= SWEEP_EVERY_MS)) {
        this.sweptAt = Date.now();
        archived = await this.archivedOnly(client, left);
        swept = await this.behind(client, max - rows.length, this.stepBytesMax - payloadBytes(rows));
      }
      const applied = (await this.apply(client, [...rows, ...swept], left, due)) + archived;
      const last = rows.at(-1);
      if (!last && applied === 0) return 0;
      const lastApplied = [...rows, ...swept].reduce((at, row) => Math.max(at, row.at_ms), 0);
      await client.query(
        `UPDATE projection_checkpoints
            SET position = $2::bigint, events_applied = events_applied + $3,
                last_event_at = greatest(last_event_at, to_timestamp($4::float8 / 1000)), updated_at = clock_timestamp()
          WHERE name = $1`,
        [this.name, last?.position ?? checkpoint, applied, lastApplied],
      );
      return Math.max(rows.length, applied);
    });
    for (const [namespace, state] of left) this.cache.set(namespace, state);
    for (const snapshot of due) this.snapshots.add(snapshot);
    return taken;
  }

  /**
   * The sweep: events of namespaces whose head is ahead of their projected version, each
   * namespace's from its projected version + 1 on, at most `limit` in all (each namespace's a prefix).
   */
  private async behind(client: pg.PoolClient, limit: number, bytesMax: number): Promise<FeedRow[]> {
    const { rows: ahead } = await client.query<{ namespace: string; done: string; head: string }>(
      `SELECT h.namespace, coalesce(p.version, 0)::text AS done, h.version::text AS head
         FROM namespace_heads h LEFT JOIN projected_namespaces p ON p.namespace = h.namespace
        WHERE h.version > coalesce(p.version, 0)
          AND (p.namespace IS NOT NULL OR NOT EXISTS (SELECT 1 FROM ledger_horizon_states z WHERE z.namespace = h.namespace AND z.version = h.version))
        LIMIT ${SWEEP_NAMESPACES_MAX}`,
    );
    if (ahead.length === 0) return [];
    const ranges = ahead.map((a) => ({ namespace: a.namespace, after: a.done, upTo: a.head }));
    return (await client.query<FeedRow>(versionsRead(ranges, { max: limit, bytesMax }))).rows;
  }

  /**
   * Namespaces the projection has no row of whose every event was archived (a rebuild after
   * `ledger:archive` of a namespace idle since before the horizon): projected as their horizon
   * state, which no event of the feed or the sweep would ever bring. Returns how many.
   */
  private async archivedOnly(client: pg.PoolClient, left: Map<string, NamespaceState>): Promise<number> {
    const { rows } = await client.query<{ namespace: string }>(
      `SELECT h.namespace FROM namespace_heads h
         JOIN LATERAL (SELECT z.version FROM ledger_horizon_states z WHERE z.namespace = h.namespace AND z.state IS NOT NULL
                        ORDER BY z.version DESC LIMIT 1) z ON z.version = h.version
        WHERE EXISTS (SELECT 1 FROM ledger_horizon_states)
          AND NOT EXISTS (SELECT 1 FROM projected_namespaces p WHERE p.namespace = h.namespace)
        LIMIT ${SWEEP_NAMESPACES_MAX}`,
    );
    if (rows.length === 0) return 0;
    const starts = await horizonStarts(
      client,
      rows.map((r) => r.namespace),
    );
    const out = new BatchWrites([]);
    for (const [namespace, { state, position, atMs }] of starts) {
      out.start(namespace, state);
      for (const reservation of state.reservations.values()) out.insertReservation(namespace, reservation, undefined);
      out.namespace(namespace, state, { position, at_ms: atMs } as FeedRow, state.version, true);
      left.set(namespace, state);
    }
    await out.flush(client);
    return starts.size;
  }

  /**
   * Runs `work` in one READ COMMITTED transaction on a connection of its own (a TypeORM query
   * runner): committed when it returns, rolled back when it throws. A connection that cannot
   * even roll back is broken, and the driver's error event makes TypeORM destroy it.
   */
  private async inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const client = (await runner.connect()) as pg.PoolClient;
      await runner.startTransaction();
      const result = await work(client);
      await runner.commitTransaction();
      return result;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  /** Resolves once the snapshots of the steps so far are written (throws the first that failed since the last call). */
  snapshotsWritten(): Promise<void> {
    return this.snapshots.drain();
  }

  /** Steps until nothing is left, the sweep included, and the snapshots are written; returns how many events were taken on. */
  async catchUp(): Promise<number> {
    let total = 0;
    for (;;) {
      const applied = await this.step(this.batchSize, 'force');
      total += applied;
      // Steps outrunning the snapshot writes wait for them, so a catch-up does not drop snapshots
      // for falling behind (only past the writer's bound on waiting reservations).
      if (applied > 0 && this.snapshots.backlog < CATCH_UP_SNAPSHOTS_AHEAD) continue;
      await this.snapshotsWritten();
      if (applied === 0) return total;
    }
  }

  /**
   * Empties every read model and the checkpoint in one transaction; the next steps replay
   * the whole ledger. Until they have, reads show an older state (their version says so).
   */
  async reset(): Promise<void> {
    this.cache.clear();
    this.snapshots.clear();
    // One being written is let finish (its failure was told already): the truncate removes it.
    await this.snapshots.drain().catch(() => undefined);
    await this.inTransaction(async (client) => {
      await client.query(`INSERT INTO projection_checkpoints (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [this.name]);
      await client.query(`SELECT 1 FROM projection_checkpoints WHERE name = $1 FOR UPDATE`, [this.name]);
      await client.query(
        `TRUNCATE projected_namespaces, projected_definitions, projected_reservations, usage_snapshots, projected_used_versions, projected_quota_versions, projected_shared_usage, projected_shared_unordered`,
      );
      await client.query(
        `UPDATE projection_checkpoints SET transaction_id = '0'::xid8, position = 0, events_applied = 0, last_event_at = NULL, updated_at = clock_timestamp() WHERE name = $1`,
        [this.name],
      );
    });
  }

  /** Rebuilds every read model from the first event. */
  async rebuild(): Promise<number> {
    await this.reset();
    return this.catchUp();
  }

  /** How far it is behind the ledger. */
  async lag(): Promise<ProjectionLag> {
    return projectionLag(this.dataSource, this.name);
  }

  // ------------------------------------------------------------------ applying a batch

  /**
   * Applies events of any namespaces, in any order and possibly twice (the feed and the sweep
   * overlap): each namespace's are taken from its projected version + 1 on, in version order,
   * and a gap ahead of them (an event the feed passed while its transaction was open) is read
   * from the (namespace, version) key first. Returns how many events were applied.
   */
  private async apply(
    client: pg.PoolClient,
    rows: readonly FeedRow[],
    left: Map<string, NamespaceState>,
    due: DueSnapshot[],
  ): Promise<number> {
    const byNamespace = new Map<string, FeedRow[]>();
    for (const row of rows) {
      // A shared quota's stream holds its definition only; its usage is in its head.
      if (isSharedQuotaKey(row.namespace)) continue;
      const list = byNamespace.get(row.namespace);
      if (list) list.push(row);
      else byNamespace.set(row.namespace, [row]);
    }
    if (byNamespace.size === 0) return 0;
    const { rows: heads } = await client.query<NamespaceRow>(
      `SELECT p.namespace, p.version::text AS version, p.used, p.released_count::text AS released_count, p.snapshot_version::text AS snapshot_version,
              p.head_rest, d.state AS definitions, (extract(epoch from p.last_event_at) * 1000)::float8 AS last_at_ms
         FROM projected_namespaces p LEFT JOIN projected_definitions d ON d.namespace = p.namespace
        WHERE p.namespace = ANY($1::text[]) FOR UPDATE OF p`,
      [[...byNamespace.keys()]],
    );
    const headOfNamespace = new Map(heads.map((h) => [h.namespace, h]));
    const starts = new Map(
      [
        ...(await horizonStarts(
          client,
          [...byNamespace.keys()].filter((namespace) => !headOfNamespace.has(namespace)),
        )),
      ].map(([ns, s]) => [ns, s.state]),
    );
    const gaps: { namespace: string; after: string; upTo: string }[] = [];
    for (const [namespace, events] of byNamespace) {
      const done = Number(headOfNamespace.get(namespace)?.version ?? starts.get(namespace)?.version ?? 0);
      // One row per version not applied yet, in version order (the feed and the sweep overlap).
      const byVersion = new Map(events.filter((e) => Number(e.version) > done).map((e) => [Number(e.version), e] as const));
      const fresh = [...byVersion.keys()].sort((a, b) => a - b).map((version) => byVersion.get(version) as FeedRow);
      if (fresh.length === 0) byNamespace.delete(namespace);
      else byNamespace.set(namespace, fresh);
      const first = fresh[0];
      if (first && Number(first.version) > done + 1) gaps.push({ namespace, after: String(done), upTo: String(Number(first.version) - 1) });
    }
    // A gap's events come in (namespace, version) order and all precede the namespace's fresh ones.
    const filled = new Map<string, FeedRow[]>();
    for (const row of gaps.length > 0 ? (await client.query<FeedRow>(versionsRead(gaps))).rows : [])
      filled.set(row.namespace, [...(filled.get(row.namespace) ?? []), row]);
    for (const [namespace, rows] of filled) byNamespace.set(namespace, [...rows, ...(byNamespace.get(namespace) ?? [])]);
    if (byNamespace.size === 0) return 0;
    const cached = new Map<string, NamespaceState>();
    for (const namespace of byNamespace.keys()) {
      const state = this.cache.get(namespace, Number(headOfNamespace.get(namespace)?.version ?? -1));
      if (state) cached.set(namespace, state);
      // Taken by this step: it is remembered again only if the step commits.
      this.cache.delete(namespace);
    }
    const { loaded, wantsAll } = await loadReservations(client, byNamespace, headOfNamespace, cached, this.snapshotEvery);
    const out = new BatchWrites(due);
    let applied = 0;
    for (const [namespace, events] of byNamespace) {
      const head = headOfNamespace.get(namespace);
      const start = head ? undefined : starts.get(namespace);
      const from = cached.get(namespace) ?? start ?? stateOf(Number(head?.version ?? 0), headJsonOf(head), loaded.get(namespace) ?? []);
      if (start) out.start(namespace, start);
      const after = this.project(out, namespace, events, head, from, wantsAll.has(namespace));
      if (start) keepHorizonReservations(out, namespace, start, after);
      // Complete when it started from a remembered state, from every reservation, or from nothing.
      if (cached.has(namespace) || wantsAll.has(namespace) || !head) left.set(namespace, after);
      applied += events.length;
    }
    await out.flush(client);
    return applied;
  }

  /** Folds one namespace's events onto its projected state (`before`) and queues the writes; returns the state it leaves. */
  private project(
    out: BatchWrites,
    namespace: string,
    events: readonly FeedRow[],
    head: NamespaceRow | undefined,
    before: NamespaceState,
    wantsAll: boolean,
  ): NamespaceState {
    const recorded = events.map(recordedOf);
    const versions = new VersionRecorder(
      { ...before, lastEventAt: before.lastEventAt ?? head?.last_at_ms ?? undefined },
      (row) => out.version(namespace, row),
      out.sharedChange,
    );
    // Fold in chunks that end where a snapshot is due, so snapshots land every
    // `snapshotEvery` events however large the step.
    let after = before;
    let snapshotVersion = Number(head?.snapshot_version ?? 0);
    let from = 0;
    for (let i = 0; i < recorded.length; i++) {
      const event = recorded[i] as RecordedEvent;
      const due = wantsAll && event.version - snapshotVersion >= this.snapshotEvery;
      if (!due && i < recorded.length - 1) continue;
      after = fold(recorded.slice(from, i + 1), after, versions.observe);
      from = i + 1;
      if (due) {
        out.snapshot(namespace, after, events[i] as FeedRow);
        snapshotVersion = after.version;
      }
    }
    // Each reservation the events name, as the step leaves it: new rows for those made in
    // this step, the commit instant for older ones committed in it, gone when released.
    const made = new Set<string>();
    const touched = new Set<string>();
    const terminatedAt = new Map<string, number>();
    for (const event of recorded) {
      if (!('reservationId' in event.data)) continue;
      touched.add(event.data.reservationId);
      if (event.type === 'Reserved' || event.type === 'Adopted') made.add(event.data.reservationId);
      else if (event.type === 'Terminated') terminatedAt.set(event.data.reservationId, event.version);
    }
    for (const id of touched) {
      const reservation = after.reservations.get(id);
      if (!reservation) out.deleteReservation(namespace, id);
      else if (made.has(id)) out.insertReservation(namespace, reservation, terminatedAt.get(id));
      else {
        if (reservation.committedAt !== undefined && reservation.operation !== 'ADOPT') out.commitReservation(namespace, reservation);
        const terminated = terminatedAt.get(id);
        if (terminated !== undefined) out.terminateReservation(namespace, id, terminated);
      }
    }
    const definitionsChanged = !head?.definitions || events.some((e) => DEFINING.has(e.type));
    out.namespace(namespace, after, events.at(-1) as FeedRow, snapshotVersion, definitionsChanged);
    return after;
  }
}

const recordedOf = (row: FeedRow): RecordedEvent => decodeEvent(row);
