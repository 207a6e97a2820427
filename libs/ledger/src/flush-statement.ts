import { EVENT_SCHEMA_VERSION } from '@quota/domain';
import type pg from 'pg';
import type { HeadJson } from './head.js';
import type { AdmissionResult, AdmissionSource } from './ledger.types.js';
import type { ReservationRecord } from './rows.js';

/**
 * The one statement that writes a batch: the head (advanced only if it is still at the version
 * the batch read: the compare-and-set), the events, the reservation rows and the decisions.
 * Built by a pure function from what the unit of work buffered, so its shape is tested without
 * a database (flush-statement.spec.ts).
 */

/** An event as it will be inserted. */
export interface PendingEvent {
  readonly version: number;
  readonly type: string;
  readonly data: unknown;
  readonly request_id: string | null;
  readonly actor: string;
  readonly on_behalf_of: string | null;
  readonly at: number;
}

/** A decision for the log. */
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

export interface FlushPlan {
  readonly namespace: string;
  /** The head as the batch read it: its version (0 when there was no row) and whether the row existed. */
  readonly base: { readonly version: number; readonly existed: boolean };
  /** The head after the events (written only with events). */
  readonly head: { readonly version: number; readonly state: HeadJson };
  readonly events: readonly PendingEvent[];
  /** Reservation rows the batch creates, and rows it changes (known by key). */
  readonly created: readonly ReservationRecord[];
  readonly changed: readonly ReservationRecord[];
  readonly decisions: readonly DecisionInput[];
  /** The decisions' time, epoch ms. */
  readonly now: number;
}

/**
 * Every write of a batch that appends events happens only if the head moved from the version
 * the batch read: data-modifying CTEs all run whatever the others did, so each is tied to the
 * head's RETURNING row. (Were the head to stay put, the events' unique (namespace, version)
 * would also refuse them; this makes the rule explicit for every table.)
 */
const HEAD_MOVED = 'EXISTS (SELECT 1 FROM head)';

const RESERVATION_RECORDSET = `AS r(reservation_id text, object_uid text, status text, version bigint, data jsonb, request_id text,
            reserved_at float8, committed_at float8, released_at float8, release_reason text, expires_at float8, event_versions jsonb)`;

/**
 * The statement, or undefined when the batch writes nothing. Its rows: one per decision with
 * its new id (or one NULL row), each with `head_rows` = 1 unless the compare-and-set found the
 * head moved (then nothing at all was written).
 */
export function flushStatement(plan: FlushPlan): pg.QueryConfig | undefined {
  if (plan.events.length === 0 && plan.decisions.length === 0) return undefined;
  const params: unknown[] = [plan.namespace];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const ctes: string[] = [];
  if (plan.events.length > 0) ctes.push(...appendCtes(plan, param));
  let select = `SELECT NULL::text AS id`;
  if (plan.decisions.length > 0) {
    ctes.push(decisionsCte(plan, param));
    select = `SELECT id::text AS id FROM decided`;
  }
  const headCheck = plan.events.length > 0 ? `(SELECT count(*) FROM head)::int AS head_rows` : `1 AS head_rows`;
  const text = `WITH ${ctes.join(',\n')} SELECT ids.id, ${headCheck} FROM (${select}) AS ids`;
  // A handful of shapes (which tables a batch writes), each prepared once per connection.
  return { name: `ledger_flush_${shapeOf(text)}`, text, values: params };
}

function appendCtes(plan: FlushPlan, param: (value: unknown) => string): string[] {
  const version = param(plan.head.version);
  const state = param(JSON.stringify(plan.head.state));
  const ctes = [
    plan.base.existed
      ? `head AS (UPDATE namespace_heads SET version = ${version}, state = ${state}::jsonb, updated_at = clock_timestamp()
           WHERE namespace = $1 AND version = ${param(plan.base.version)} RETURNING 1)`
      : `head AS (INSERT INTO namespace_heads (namespace, version, state) VALUES ($1, ${version}, ${state}::jsonb) RETURNING 1)`,
    `events AS (INSERT INTO ledger_events (namespace, version, type, schema_version, data, request_id, actor, on_behalf_of, recorded_at)
        SELECT $1, e.version, e.type, ${EVENT_SCHEMA_VERSION}, e.data, e.request_id, e.actor, e.on_behalf_of, to_timestamp(e.at / 1000.0)
          FROM jsonb_to_recordset(${param(JSON.stringify(plan.events))}::jsonb)
            AS e(version bigint, type text, data jsonb, request_id text, actor text, on_behalf_of text, at float8)
         WHERE ${HEAD_MOVED})`,
  ];
  // New rows are inserted and known rows updated by key: no ON CONFLICT probe, whose index
  // reads would add predicate locks.
  if (plan.created.length > 0) {
    ctes.push(`created_reservations AS (INSERT INTO reservations (namespace, reservation_id, object_uid, status, version, data, request_id,
            reserved_at, committed_at, released_at, release_reason, expires_at, event_versions)
          SELECT $1, r.reservation_id, r.object_uid, r.status, r.version, r.data, r.request_id,
                 to_timestamp(r.reserved_at / 1000.0), to_timestamp(r.committed_at / 1000.0), to_timestamp(r.released_at / 1000.0),
                 r.release_reason, to_timestamp(r.expires_at / 1000.0),
                 ARRAY(SELECT jsonb_array_elements_text(r.event_versions)::bigint)
            FROM jsonb_to_recordset(${param(JSON.stringify(plan.created.map(reservationRow)))}::jsonb) ${RESERVATION_RECORDSET}
           WHERE ${HEAD_MOVED})`);
  }
  if (plan.changed.length > 0) {
    ctes.push(`changed_reservations AS (UPDATE reservations AS t SET
            status = r.status, data = r.data, committed_at = to_timestamp(r.committed_at / 1000.0),
            released_at = to_timestamp(r.released_at / 1000.0), release_reason = r.release_reason,
            event_versions = ARRAY(SELECT jsonb_array_elements_text(r.event_versions)::bigint)
            FROM jsonb_to_recordset(${param(JSON.stringify(plan.changed.map(reservationRow)))}::jsonb) ${RESERVATION_RECORDSET}
           WHERE t.namespace = $1 AND t.reservation_id = r.reservation_id AND ${HEAD_MOVED})`);
  }
  return ctes;
}

function decisionsCte(plan: FlushPlan, param: (value: unknown) => string): string {
  const rows = plan.decisions.map((input, ord) => ({
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
    reason: input.result.denial?.kind ?? (input.result.allowed ? null : (input.result.stage ?? null)),
    reservation_id: input.result.reservationId ?? null,
    result: input.result,
  }));
  return `decided AS (INSERT INTO admission_decisions (namespace, request_key, request_digest, source, operation, resource, kind, name, object_uid,
            requester, on_behalf_of, dry_run, allowed, code, reason, reservation_id, result, decided_at)
          SELECT $1, d.request_key, d.request_digest, d.source, d.operation, d.resource, d.kind, d.name, d.object_uid,
                 d.requester, d.on_behalf_of, d.dry_run, d.allowed, d.code, d.reason, d.reservation_id, d.result, to_timestamp(${param(plan.now)} / 1000.0)
            FROM jsonb_to_recordset(${param(JSON.stringify(rows))}::jsonb)
              AS d(ord int, request_key text, request_digest text, source text, operation text, resource text, kind text, name text, object_uid text,
                   requester text, on_behalf_of text, dry_run boolean, allowed boolean, code smallint, reason text, reservation_id text, result jsonb)
          ${plan.events.length > 0 ? `WHERE ${HEAD_MOVED}` : ''}
           ORDER BY d.ord
          RETURNING id)`;
}

function reservationRow(r: ReservationRecord): Record<string, unknown> {
  return {
    reservation_id: r.id,
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
  };
}

/** A short, stable name for one shape of the statement. */
function shapeOf(sql: string): string {
  let hash = 2166136261;
  for (let i = 0; i < sql.length; i++) hash = Math.imul(hash ^ sql.charCodeAt(i), 16777619);
  return (hash >>> 0).toString(36);
}
