import {
  assert,
  EVENT_SCHEMA_VERSION,
  LIVE_PER_OBJECT_MAX,
  evolve,
  type LedgerEvent,
  type NamespaceState,
  type RecordedEvent,
  type ReleaseReason,
  type Reservation,
} from '@quota/domain';
import type pg from 'pg';
import { EMPTY_HEAD, headOf, reservationFromJson, reservationToJson, stateOf, type HeadJson, type ReservationJson } from './head.js';
import type { AdmissionResult, AdmissionSource, ReservationView } from './ledger.types.js';
import { VersionConflict } from './postgres-errors.js';

/**
 * One namespace's batch: the head read by key, reservations and earlier answers read by key
 * as commands ask for them, and every write buffered until `flush`, which sends them in a
 * single statement guarded by the head's version (see `open`). Commands of a batch run one after the
 * other on the evolving state; a command that fails is rolled back to its mark without
 * touching the others.
 */

/** A reservation row as stored (released rows included). */
export interface ReservationRecord {
  readonly json: ReservationJson;
  readonly status: 'reserved' | 'committed' | 'released';
  readonly releasedAt?: number;
  readonly releaseReason?: ReleaseReason;
  readonly eventVersions: readonly number[];
  readonly requestId?: string;
}

/** An earlier answer found by its request key. */
export interface StoredDecision {
  readonly id: string | undefined;
  readonly result: AdmissionResult;
  /** What the key was used for (request-digest.ts); undefined for decisions stored before digests. */
  readonly digest: string | undefined;
}

export interface DecisionInput {
  readonly source: AdmissionSource;
  readonly requestKey?: string;
  /** With a request key: the digest of the request it answers. */
  readonly requestDigest?: string;
  readonly operation: string;
  readonly resource: string;
  readonly kind?: string;
  readonly name?: string;
  readonly objectUid?: string;
  readonly requester: string;
  readonly onBehalfOf?: string;
  readonly dryRun: boolean;
  readonly result: AdmissionResult;
}

/** Filled with the decision's id once the batch is written. */
export interface DecisionHandle {
  id?: string;
}

export interface EventMeta {
  readonly actor: string;
  readonly onBehalfOf?: string;
  readonly requestId?: string;
}

export interface Prefetch {
  readonly requestKeys: readonly string[];
  readonly uids: readonly string[];
  readonly reservationIds: readonly string[];
}

interface PendingEvent {
  readonly version: number;
  readonly type: string;
  readonly data: unknown;
  readonly request_id: string | null;
  readonly actor: string;
  readonly on_behalf_of: string | null;
  readonly at: number;
}

interface Mark {
  readonly state: NamespaceState;
  readonly events: number;
  readonly decisions: number;
  readonly touched: Map<string, ReservationRecord>;
  readonly exists: boolean;
}

export interface RawReservationRow {
  reservation_id: string;
  status: ReservationRecord['status'];
  data: ReservationJson;
  released_at_ms: number | null;
  release_reason: ReleaseReason | null;
  event_versions: (string | number)[];
  request_id: string | null;
}

export const RESERVATION_COLUMNS = `reservation_id, status, data, (extract(epoch from released_at) * 1000)::float8 AS released_at_ms,
  release_reason, event_versions, request_id`;

export function recordOf(row: RawReservationRow): ReservationRecord {
  return {
    json: row.data,
    status: row.status,
    ...(row.released_at_ms === null ? {} : { releasedAt: Math.round(row.released_at_ms) }),
    ...(row.release_reason === null ? {} : { releaseReason: row.release_reason }),
    eventVersions: row.event_versions.map(Number),
    ...(row.request_id === null ? {} : { requestId: row.request_id }),
  };
}

export class NamespaceTx {
  private state: NamespaceState;
  private exists: boolean;
  private readonly baseVersion: number;
  private readonly headExisted: boolean;
  private allLoaded = false;
  /** Rows read from the database, by reservation id (live ones are also in `state`). */
  private readonly rows = new Map<string, ReservationRecord | null>();
  /** Uids whose live reservations have all been read. */
  private readonly uidsLoaded = new Set<string>();
  /** Rows this transaction changes, as they will be written. */
  private touched = new Map<string, ReservationRecord>();
  private readonly events: PendingEvent[] = [];
  private readonly decisions: { input: DecisionInput; handle: DecisionHandle }[] = [];
  private readonly storedDecisions = new Map<string, StoredDecision | null>();

  private constructor(
    private readonly client: pg.PoolClient,
    readonly namespace: string,
    readonly now: number,
    head: { version: number; state: HeadJson } | undefined,
  ) {
    this.baseVersion = head?.version ?? 0;
    this.headExisted = head !== undefined;
    this.exists = this.headExisted;
    this.state = stateOf(this.baseVersion, head?.state ?? EMPTY_HEAD);
  }

  /**
   * Reads what the batch needs in one statement (one snapshot): the head row by primary key,
   * the earlier answers and reservations the commands said they will look up (by request key,
   * reservation id, object uid; one index lookup per key), and the server's clock. Nothing is
   * locked and no transaction stays open: `flush` writes everything in one statement that
   * advances the head only `WHERE version = <the version read here>` and writes nothing else
   * when it does not. That compare-and-set is the whole concurrency control, and it is enough
   * because every change to a namespace's quotas, limit ranges or reservations advances its
   * head: a batch commits only if nothing it read (here, or lazily later) changed meanwhile,
   * so the namespace's decisions form one sequence, each made on exactly the state the one
   * before left. (An earlier design wrapped this in a SERIALIZABLE transaction: five round
   * trips per batch and SSI's predicate locks for a guarantee the compare-and-set already
   * gives; see the issue 6 note.) A decision stored meanwhile by a concurrent denial (which
   * does not advance the head) makes our insert of the same key fail on its unique index,
   * and the retry finds it.
   */
  static async open(client: pg.PoolClient, namespace: string, prefetch: Prefetch, clock?: () => number): Promise<NamespaceTx> {
    const { rows } = await client.query<{
      head_version: string | null;
      head_state: HeadJson | null;
      now_ms: number;
      decisions: { request_key: string; id: string; result: AdmissionResult; digest: string | null }[] | null;
      reservations: RawReservationRow[] | null;
    }>({
      // Named: prepared once per connection, so PostgreSQL does not plan it per batch.
      name: 'ledger_read',
      text: `SELECT h.version AS head_version, h.state AS head_state,
              (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms,
              (SELECT json_agg(json_build_object('request_key', d.request_key, 'id', d.id::text, 'result', d.result, 'digest', d.request_digest))
                 FROM unnest($2::text[]) AS k(key)
                 CROSS JOIN LATERAL (SELECT * FROM admission_decisions d
                                      WHERE d.namespace = $1 AND d.request_key = k.key LIMIT 1) d) AS decisions,
              (SELECT json_agg(r) FROM (
                 -- One index lookup per key (LATERAL ... LIMIT), whatever the statistics say:
                 -- a scan of the namespace's rows would grow with its history.
                 SELECT ${RESERVATION_COLUMNS} FROM unnest($4::text[]) AS k(id)
                   CROSS JOIN LATERAL (SELECT * FROM reservations t
                                        WHERE t.namespace = $1 AND t.reservation_id = k.id LIMIT 1) t
                 UNION ALL
                 SELECT ${RESERVATION_COLUMNS} FROM unnest($3::text[]) AS k(uid)
                   CROSS JOIN LATERAL (SELECT * FROM reservations t
                                        WHERE t.namespace = $1 AND t.object_uid = k.uid AND t.status <> 'released'
                                        ORDER BY t.version DESC LIMIT ${LIVE_PER_OBJECT_MAX}) t
                 UNION ALL
                 -- The live reservations of the same object as each reservation asked for by id:
                 -- what its commit replaces or its release takes along (loadLiveOf), in this read.
                 SELECT ${RESERVATION_COLUMNS} FROM unnest($4::text[]) AS k(id)
                   CROSS JOIN LATERAL (SELECT o.object_uid FROM reservations o
                                        WHERE o.namespace = $1 AND o.reservation_id = k.id AND o.object_uid IS NOT NULL LIMIT 1) o
                   CROSS JOIN LATERAL (SELECT * FROM reservations t
                                        WHERE t.namespace = $1 AND t.object_uid = o.object_uid AND t.status <> 'released'
                                        ORDER BY t.version DESC LIMIT ${LIVE_PER_OBJECT_MAX}) t) r) AS reservations
             FROM (SELECT 1) AS one LEFT JOIN namespace_heads h ON h.namespace = $1`,
      values: [namespace, prefetch.requestKeys, prefetch.uids, prefetch.reservationIds],
    });
    const row = rows[0];
    assert(row, 'the read returns one row');
    const now = clock ? clock() : Math.floor(row.now_ms);
    const head = row.head_version === null || row.head_state === null ? undefined : { version: Number(row.head_version), state: row.head_state };
    const tx = new NamespaceTx(client, namespace, now, head);
    for (const key of prefetch.requestKeys) tx.storedDecisions.set(key, null);
    for (const d of row.decisions ?? []) tx.storedDecisions.set(d.request_key, { id: d.id, result: d.result, digest: d.digest ?? undefined });
    for (const id of prefetch.reservationIds) tx.rows.set(id, null);
    tx.addRows(row.reservations ?? []);
    for (const uid of prefetch.uids) tx.uidsLoaded.add(uid);
    for (const id of prefetch.reservationIds) {
      const uid = tx.rows.get(id)?.json.object.uid;
      if (uid !== undefined) tx.uidsLoaded.add(uid);
    }
    return tx;
  }

  /** The batch writes events (the head moves when it commits). */
  get appends(): boolean {
    return this.events.length > 0;
  }

  /** The namespace has a stream (a quota or limit range was defined here, ever). */
  get known(): boolean {
    return this.exists;
  }

  /** The state as far as it has been read; live reservations only where loaded. */
  get current(): NamespaceState {
    return this.state;
  }

  private addRows(raw: readonly RawReservationRow[]): void {
    const live: Reservation[] = [];
    for (const r of raw) {
      if (this.rows.get(r.reservation_id) || this.touched.has(r.reservation_id)) continue;
      const record = recordOf(r);
      this.rows.set(r.reservation_id, record);
      if (record.status !== 'released') live.push(reservationFromJson(record.json));
    }
    if (live.length === 0) return;
    const reservations = [...this.state.reservations.values(), ...live];
    this.state = { ...this.state, ...withLive(reservations) };
  }

  /** A reservation's row, live or released, or undefined when it never existed. */
  async reservation(id: string): Promise<ReservationRecord | undefined> {
    const touched = this.touched.get(id);
    if (touched) return touched;
    if (!this.rows.has(id)) {
      const { rows } = await this.client.query<RawReservationRow>(
        `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE namespace = $1 AND reservation_id = $2`,
        [this.namespace, id],
      );
      this.rows.set(id, null);
      this.addRows(rows);
    }
    return this.rows.get(id) ?? undefined;
  }

  /**
   * Loads the live reservations of an object (by uid) into the state: what an admission, a
   * commit or a release of it is decided on. At most LIVE_PER_OBJECT_MAX, newest first (the
   * domain refuses more changes than that).
   */
  async loadLiveOf(uid: string): Promise<void> {
    if (this.uidsLoaded.has(uid) || this.allLoaded) return;
    const { rows } = await this.client.query<RawReservationRow>(
      `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE namespace = $1 AND object_uid = $2 AND status <> 'released'
        ORDER BY version DESC LIMIT ${LIVE_PER_OBJECT_MAX}`,
      [this.namespace, uid],
    );
    this.addRows(rows);
    this.uidsLoaded.add(uid);
  }

  /** Every live reservation: needed before a quota is defined or changed (usage is recounted). */
  async loadAllLive(): Promise<void> {
    if (this.allLoaded) return;
    const { rows } = await this.client.query<RawReservationRow>(
      `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE namespace = $1 AND status <> 'released'`,
      [this.namespace],
    );
    this.addRows(rows);
    this.allLoaded = true;
  }

  /**
   * Of these object uids, those whose reservation was released at or after `since` (epoch
   * ms), in an earlier transaction or earlier in this batch. A release after this read moves
   * the head, so the batch is decided again.
   */
  async uidsReleasedSince(uids: readonly string[], since: number): Promise<Set<string>> {
    const found = new Set<string>();
    for (const record of this.touched.values()) {
      const uid = record.json.object.uid;
      if (uid !== undefined && record.status === 'released' && (record.releasedAt ?? 0) >= since && uids.includes(uid)) found.add(uid);
    }
    if (uids.length === 0) return found;
    const { rows } = await this.client.query<{ object_uid: string }>(
      `SELECT DISTINCT object_uid FROM reservations
        WHERE namespace = $1 AND object_uid = ANY($2::text[]) AND status = 'released' AND released_at >= to_timestamp($3 / 1000.0)`,
      [this.namespace, uids, since],
    );
    for (const row of rows) found.add(row.object_uid);
    return found;
  }

  /** The answer already given to this request key, in an earlier transaction or earlier in this batch. */
  async decisionFor(requestKey: string): Promise<StoredDecision | undefined> {
    if (!this.storedDecisions.has(requestKey)) {
      const { rows } = await this.client.query<{ id: string; result: AdmissionResult; digest: string | null }>(
        `SELECT id::text AS id, result, request_digest AS digest FROM admission_decisions WHERE namespace = $1 AND request_key = $2 LIMIT 1`,
        [this.namespace, requestKey],
      );
      const row = rows[0];
      this.storedDecisions.set(requestKey, row ? { id: row.id, result: row.result, digest: row.digest ?? undefined } : null);
    }
    return this.storedDecisions.get(requestKey) ?? undefined;
  }

  mark(): Mark {
    return { state: this.state, events: this.events.length, decisions: this.decisions.length, touched: new Map(this.touched), exists: this.exists };
  }

  restore(mark: Mark): void {
    this.state = mark.state;
    this.events.length = mark.events;
    for (const { input } of this.decisions.splice(mark.decisions)) {
      if (input.requestKey !== undefined) this.storedDecisions.set(input.requestKey, null);
    }
    this.touched = mark.touched;
    this.exists = mark.exists;
  }

  /**
   * Appends events to the stream (buffered), applying each to the state with the domain's
   * `evolve`, so the head written at the end is exactly the fold of the stream.
   */
  append(events: readonly LedgerEvent[], meta: EventMeta): RecordedEvent[] {
    const recorded: RecordedEvent[] = [];
    for (const event of events) {
      if (event.type === 'QuotaDefined' || event.type === 'QuotaChanged') {
        assert(this.allLoaded, 'a quota definition recounts usage: load every live reservation first');
      }
      const before = this.state;
      const version = before.version + 1;
      const record = { ...event, version, at: this.now } as RecordedEvent;
      this.state = evolve(before, record);
      this.events.push({ version, type: event.type, data: event.data, request_id: meta.requestId ?? null, actor: meta.actor, on_behalf_of: meta.onBehalfOf ?? null, at: this.now });
      this.track(before, record, meta);
      recorded.push(record);
    }
    this.exists = true;
    return recorded;
  }

  private track(before: NamespaceState, event: RecordedEvent, meta: EventMeta): void {
    switch (event.type) {
      case 'Reserved':
      case 'Adopted': {
        const id = event.data.reservationId;
        const live = this.state.reservations.get(id);
        assert(live, `reservation ${id} is live after ${event.type}`);
        this.touched.set(id, {
          json: reservationToJson(live),
          status: live.status,
          eventVersions: [event.version],
          ...(meta.requestId === undefined ? {} : { requestId: meta.requestId }),
        });
        return;
      }
      case 'Committed': {
        const id = event.data.reservationId;
        const previous = this.touched.get(id) ?? this.rows.get(id);
        const live = this.state.reservations.get(id);
        assert(previous && live, `reservation ${id} was loaded before its commit`);
        this.touched.set(id, { ...previous, json: reservationToJson(live), status: 'committed', eventVersions: [...previous.eventVersions, event.version] });
        return;
      }
      case 'Released': {
        const id = event.data.reservationId;
        const previous = this.touched.get(id) ?? this.rows.get(id);
        const live = before.reservations.get(id);
        assert(previous && live, `reservation ${id} was loaded before its release`);
        this.touched.set(id, {
          ...previous,
          json: reservationToJson(live),
          status: 'released',
          releasedAt: this.now,
          releaseReason: event.data.reason,
          eventVersions: [...previous.eventVersions, event.version],
        });
        return;
      }
      default:
        return;
    }
  }

  /** Records an answer in the decisions log (written with the batch). */
  recordDecision(input: DecisionInput): DecisionHandle {
    const handle: DecisionHandle = {};
    this.decisions.push({ input, handle });
    if (input.requestKey !== undefined) this.storedDecisions.set(input.requestKey, { id: undefined, result: input.result, digest: input.requestDigest });
    return handle;
  }

  /** The batch's answers for repeated keys point at the first decision once it has an id. */
  handleFor(requestKey: string): DecisionHandle | undefined {
    return this.decisions.find((d) => d.input.requestKey === requestKey)?.handle;
  }

  /**
   * Writes everything in one statement: the head (only if it is still at the version read:
   * the optimistic guard), the events, the reservation rows and the decisions.
   */
  /**
   * Writes the batch in one statement, which is its commit (autocommit: there is no open
   * transaction to end). Throws VersionConflict, having written nothing, if the head moved.
   */
  async flush(): Promise<void> {
    if (this.events.length === 0 && this.decisions.length === 0) return;
    const ctes: string[] = [];
    const params: unknown[] = [this.namespace];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (this.events.length > 0) {
      const version = param(this.state.version);
      const state = param(JSON.stringify(headOf(this.state)));
      ctes.push(
        this.headExisted
          ? `head AS (UPDATE namespace_heads SET version = ${version}, state = ${state}::jsonb, updated_at = clock_timestamp()
               WHERE namespace = $1 AND version = ${param(this.baseVersion)} RETURNING 1)`
          : `head AS (INSERT INTO namespace_heads (namespace, version, state) VALUES ($1, ${version}, ${state}::jsonb) RETURNING 1)`,
      );
      ctes.push(`events AS (INSERT INTO ledger_events (namespace, version, type, schema_version, data, request_id, actor, on_behalf_of, recorded_at)
        SELECT $1, e.version, e.type, ${EVENT_SCHEMA_VERSION}, e.data, e.request_id, e.actor, e.on_behalf_of, to_timestamp(e.at / 1000.0)
          FROM jsonb_to_recordset(${param(JSON.stringify(this.events))}::jsonb)
            AS e(version bigint, type text, data jsonb, request_id text, actor text, on_behalf_of text, at float8)
         WHERE ${HEAD_MOVED})`);
      const toRow = ([id, r]: [string, ReservationRecord]) => ({
        reservation_id: id,
        object_uid: r.json.object.uid ?? null,
        status: r.status,
        version: r.json.version,
        data: r.json,
        request_id: r.requestId ?? null,
        reserved_at: r.json.reservedAt,
        committed_at: r.json.committedAt ?? null,
        released_at: r.releasedAt ?? null,
        release_reason: r.releaseReason ?? null,
        expires_at: r.json.expiresAt ?? null,
        event_versions: r.eventVersions,
      });
      const RECORDSET = `AS r(reservation_id text, object_uid text, status text, version bigint, data jsonb, request_id text,
            reserved_at float8, committed_at float8, released_at float8, release_reason text, expires_at float8, event_versions jsonb)`;
      // New rows are inserted and known rows updated by key: no ON CONFLICT probe, whose
      // index reads would add predicate locks.
      const created = [...this.touched.entries()].filter(([id]) => !this.rows.get(id)).map(toRow);
      const changed = [...this.touched.entries()].filter(([id]) => this.rows.get(id)).map(toRow);
      if (created.length > 0) {
        ctes.push(`created_reservations AS (INSERT INTO reservations (namespace, reservation_id, object_uid, status, version, data, request_id,
            reserved_at, committed_at, released_at, release_reason, expires_at, event_versions)
          SELECT $1, r.reservation_id, r.object_uid, r.status, r.version, r.data, r.request_id,
                 to_timestamp(r.reserved_at / 1000.0), to_timestamp(r.committed_at / 1000.0), to_timestamp(r.released_at / 1000.0),
                 r.release_reason, to_timestamp(r.expires_at / 1000.0),
                 ARRAY(SELECT jsonb_array_elements_text(r.event_versions)::bigint)
            FROM jsonb_to_recordset(${param(JSON.stringify(created))}::jsonb) ${RECORDSET}
           WHERE ${HEAD_MOVED})`);
      }
      if (changed.length > 0) {
        ctes.push(`changed_reservations AS (UPDATE reservations AS t SET
            status = r.status, data = r.data, committed_at = to_timestamp(r.committed_at / 1000.0),
            released_at = to_timestamp(r.released_at / 1000.0), release_reason = r.release_reason,
            event_versions = ARRAY(SELECT jsonb_array_elements_text(r.event_versions)::bigint)
            FROM jsonb_to_recordset(${param(JSON.stringify(changed))}::jsonb) ${RECORDSET}
           WHERE t.namespace = $1 AND t.reservation_id = r.reservation_id AND ${HEAD_MOVED})`);
      }
    }
    let select = `SELECT NULL::text AS id`;
    if (this.decisions.length > 0) {
      const rows = this.decisions.map(({ input }, ord) => ({
        ord,
        request_key: input.requestKey ?? null,
        request_digest: input.requestDigest ?? null,
        source: input.source,
        operation: input.operation,
        resource: input.resource,
        kind: input.kind ?? null,
        name: input.name ?? null,
        object_uid: input.objectUid ?? null,
        requester: input.requester,
        on_behalf_of: input.onBehalfOf ?? null,
        dry_run: input.dryRun,
        allowed: input.result.allowed,
        code: input.result.code,
        reason: input.result.denial?.kind ?? (input.result.allowed ? null : input.result.stage ?? null),
        reservation_id: input.result.reservationId ?? null,
        result: input.result,
      }));
      ctes.push(`decided AS (INSERT INTO admission_decisions (namespace, request_key, request_digest, source, operation, resource, kind, name, object_uid,
            requester, on_behalf_of, dry_run, allowed, code, reason, reservation_id, result, decided_at)
          SELECT $1, d.request_key, d.request_digest, d.source, d.operation, d.resource, d.kind, d.name, d.object_uid,
                 d.requester, d.on_behalf_of, d.dry_run, d.allowed, d.code, d.reason, d.reservation_id, d.result, to_timestamp(${param(this.now)} / 1000.0)
            FROM jsonb_to_recordset(${param(JSON.stringify(rows))}::jsonb)
              AS d(ord int, request_key text, request_digest text, source text, operation text, resource text, kind text, name text, object_uid text,
                   requester text, on_behalf_of text, dry_run boolean, allowed boolean, code smallint, reason text, reservation_id text, result jsonb)
          ${this.events.length > 0 ? `WHERE ${HEAD_MOVED}` : ''}
           ORDER BY d.ord
          RETURNING id)`);
      select = `SELECT id::text AS id FROM decided`;
    }
    const headCheck = this.events.length > 0 ? `, (SELECT count(*) FROM head)::int AS head_rows` : `, 1 AS head_rows`;
    const sql = `WITH ${ctes.join(',\n')} SELECT ids.id${headCheck} FROM (${select}) AS ids`;
    // A handful of shapes (which tables a batch writes), each prepared once per connection.
    const { rows } = await this.client.query<{ id: string | null; head_rows: number }>({ name: `ledger_flush_${shapeOf(sql)}`, text: sql, values: params });
    if ((rows[0]?.head_rows ?? 0) !== 1) throw new VersionConflict(this.namespace, this.baseVersion);
    // Identity values are drawn in insertion order, which follows ORDER BY ord.
    const ids = rows.map((r) => r.id).filter((id): id is string => id !== null).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    assert(ids.length === this.decisions.length, 'every decision got an id');
    this.decisions.forEach((d, i) => (d.handle.id = ids[i]));
  }
}

/** The live-reservation maps of a state holding exactly these reservations. */
function withLive(reservations: readonly Reservation[]): Pick<NamespaceState, 'reservations' | 'reservationsByUid'> {
  const live = new Map<string, Reservation>();
  const byUid = new Map<string, string>();
  for (const r of [...reservations].sort((a, b) => a.version - b.version)) {
    live.set(r.id, r);
    if (r.object.uid !== undefined) byUid.set(r.object.uid, r.id);
  }
  return { reservations: live, reservationsByUid: byUid };
}

/**
 * Every write of a batch that appends events happens only if the head moved from the version
 * the batch read: data-modifying CTEs all run whatever the others did, so each is tied to the
 * head's RETURNING row. (Were the head to stay put, the events' unique (namespace, version)
 * would also refuse them; this makes the rule explicit for every table.)
 */
const HEAD_MOVED = 'EXISTS (SELECT 1 FROM head)';

/** A short, stable name for one shape of the flush statement. */
function shapeOf(sql: string): string {
  let hash = 2166136261;
  for (let i = 0; i < sql.length; i++) hash = Math.imul(hash ^ sql.charCodeAt(i), 16777619);
  return (hash >>> 0).toString(36);
}

const isoOf = (ms: number): string => new Date(ms).toISOString();

/** A reservation row as the API shows it (without its history). */
export function reservationViewOf(namespace: string, record: ReservationRecord): ReservationView {
  const r = record.json;
  return {
    id: r.id,
    namespace,
    state: record.status,
    operation: r.operation,
    object: r.object,
    charged: r.contribution,
    reservedAt: isoOf(r.reservedAt),
    ...(r.committedAt === undefined ? {} : { committedAt: isoOf(r.committedAt) }),
    ...(record.releasedAt === undefined ? {} : { releasedAt: isoOf(record.releasedAt) }),
    ...(record.releaseReason === undefined ? {} : { releaseReason: record.releaseReason }),
    ...(r.expiresAt === undefined ? {} : { expiresAt: isoOf(r.expiresAt) }),
    ...(record.requestId === undefined ? {} : { requestId: record.requestId }),
  };
}
