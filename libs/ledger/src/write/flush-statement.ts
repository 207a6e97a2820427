import { EVENT_SCHEMA_VERSION } from '@quota/domain';
import type pg from 'pg';
import type { HeadJson } from '../head.js';
import type { DecisionRequest } from '@quota/api';
import type { AdmissionResult } from '../ledger.types.js';
import type { PendingEvent, ReservationRecord } from '../rows.js';
import type { SharedHeadPlan } from '../shared-heads.js';

/**
 * The one statement that writes a group commit: for every namespace in the group, its head
 * (advanced only if it is still at the version the group read: the compare-and-set), its
 * events, its reservation rows and its decisions. Built by a pure function from what the units
 * of work buffered, so its shape is tested without a database (flush-statement.spec.ts).
 *
 * Every row set travels as one jsonb parameter and is joined back by key, so the statement's
 * text depends only on which tables the group writes (a handful of shapes, each prepared once
 * per connection), not on how many namespaces or rows it holds.
 */

/** A decision for the log: the request as the contract shows it, and the answer. */
export interface DecisionInput extends DecisionRequest {
  /** With a request key: the digest of the request it answers. */
  readonly requestDigest?: string;
  readonly result: AdmissionResult;
}

/** What one namespace of the group writes. */
export interface FlushPlan {
  readonly namespace: string;
  /** The head as the group read it: its version (0 when there was no row) and whether the row existed. */
  readonly base: { readonly version: number; readonly existed: boolean };
  /** The head after the events (written only with events). */
  readonly head: { readonly version: number; readonly state: HeadJson };
  readonly events: readonly PendingEvent[];
  /** Reservation rows the namespace's commands create, and rows they change (known by key). */
  readonly created: readonly ReservationRecord[];
  readonly changed: readonly ReservationRecord[];
  readonly decisions: readonly DecisionInput[];
}

/**
 * The one row the statement returns: the decisions' new ids (ascending, so in the plans' order),
 * how many heads moved, and per stream (a namespace, or a shared quota's key) the positions its
 * events got, in version order: what a write tells its caller to read after (`?minPosition=`).
 */
export interface FlushRow {
  readonly ids: readonly string[] | null;
  readonly head_rows: number;
  readonly positions: Readonly<Record<string, readonly string[]>> | null;
}

/**
 * Every write of a namespace that appends events happens only if its head moved from the
 * version the group read: data-modifying CTEs all run whatever the others did, so each row is
 * tied to its namespace's row in `head` (the heads the compare-and-set advanced). Were a head
 * to stay put, the events' unique (namespace, version) would also refuse them; this makes the
 * rule explicit for every table.
 */
const HEAD_MOVED = (alias: string): string => `${alias}.namespace IN (SELECT namespace FROM head)`;

const RESERVATION_RECORDSET = `AS r(namespace text, reservation_id text, object_uid text, status text, version bigint, data jsonb, request_id text,
            reserved_at float8, committed_at float8, released_at float8, release_reason text, expires_at float8, event_versions jsonb)`;

/** Which tables a group writes: the statement's text depends on this alone. */
interface Shape {
  readonly shared: boolean;
  readonly appending: boolean;
  readonly created: boolean;
  readonly changed: boolean;
  readonly decisions: boolean;
}

/** The text and prepared name of each shape, built once per process: building it per group cost CPU (docs/benchmarks.md, "The API against its floor"). */
const TEXTS = new Map<string, { readonly name: string; readonly text: string }>();

/**
 * The statement for the group, or undefined when it writes nothing. `head_rows` must equal the
 * number of plans that append events plus the shared heads written; if it does not, a head moved
 * and nothing of that namespace was written: the caller rolls the transaction back.
 */
export function flushStatement(
  plans: readonly FlushPlan[],
  now: number,
  shared: readonly SharedHeadPlan[] = [],
): pg.QueryConfig | undefined {
  const appending = plans.filter((p) => p.events.length > 0);
  const decisions = plans.flatMap((p) => p.decisions.map((input) => ({ namespace: p.namespace, appends: p.events.length > 0, input })));
  if (appending.length === 0 && decisions.length === 0 && shared.length === 0) return undefined;
  const created = appending.flatMap((p) => p.created.map((r) => reservationRow(p.namespace, r)));
  const changed = appending.flatMap((p) => p.changed.map((r) => reservationRow(p.namespace, r)));
  const shape: Shape = {
    shared: shared.length > 0,
    appending: appending.length > 0,
    created: created.length > 0,
    changed: changed.length > 0,
    decisions: decisions.length > 0,
  };
  const key = `${+shape.shared}${+shape.appending}${+shape.created}${+shape.changed}${+shape.decisions}`;
  let statement = TEXTS.get(key);
  if (!statement) {
    const text = statementText(shape);
    statement = { name: `ledger_flush_${shapeOf(text)}`, text };
    TEXTS.set(key, statement);
  }
  // The values in the order statementText numbers its parameters.
  const values: unknown[] = [];
  if (shape.shared || shape.appending) values.push(...appendValues(appending, shared, created, changed));
  if (shape.decisions) values.push(now, JSON.stringify(decisionRows(decisions)));
  return { name: statement.name, text: statement.text, values };
}

/** The statement's text for one shape, its parameters numbered in the order flushStatement pushes their values. */
export function statementText(shape: Shape): string {
  let count = 0;
  const param = (): string => `$${++count}`;
  const ctes: string[] = [];
  const moves = shape.appending || shape.shared;
  if (moves) ctes.push(...appendCtes(shape, param));
  if (shape.decisions) ctes.push(decisionsCte(shape.appending, param));
  // One row, whatever the number of decisions and events: each aggregate is sent once.
  const ids = shape.decisions ? `(SELECT array_agg(id::text ORDER BY id) FROM decided) AS ids` : `NULL::text[] AS ids`;
  const headCheck = moves ? `(SELECT count(*) FROM head)::int AS head_rows` : `0 AS head_rows`;
  const positions = moves
    ? `(SELECT jsonb_object_agg(p.namespace, p.positions) FROM (SELECT namespace, jsonb_agg(position::text ORDER BY version) AS positions FROM events GROUP BY namespace) AS p) AS positions`
    : `NULL::jsonb AS positions`;
  return `WITH ${ctes.join(',\n')} SELECT ${ids}, ${headCheck}, ${positions}`;
}

function appendValues(
  plans: readonly FlushPlan[],
  shared: readonly SharedHeadPlan[],
  created: readonly unknown[],
  changed: readonly unknown[],
): unknown[] {
  const heads = plans.map((p) => ({
    namespace: p.namespace,
    base: p.base.version,
    existed: p.base.existed,
    version: p.head.version,
    state: p.head.state,
  }));
  // A shared quota's definition events are its own stream, keyed like its head.
  const events = [
    ...plans.flatMap((p) => p.events.map((e) => ({ namespace: p.namespace, ...e }))),
    ...shared.flatMap((h) => h.events.map((e) => ({ namespace: h.key, ...e }))),
  ];
  const values: unknown[] = [];
  if (shared.length > 0)
    values.push(
      JSON.stringify(
        shared.map((h) => ({
          key: h.key,
          base: h.base.revision,
          existed: h.base.existed,
          revision: h.revision,
          version: h.version,
          state: h.state,
        })),
      ),
    );
  values.push(JSON.stringify(heads), JSON.stringify(events));
  if (created.length > 0) values.push(JSON.stringify(created));
  if (changed.length > 0) values.push(JSON.stringify(changed));
  return values;
}

function appendCtes(shape: Shape, param: () => string): string[] {
  const sharedCtes = !shape.shared
    ? []
    : [
        `shared_in AS (SELECT * FROM jsonb_to_recordset(${param()}::jsonb)
        AS s(key text, base bigint, existed boolean, revision bigint, version bigint, state jsonb))`,
        `updated_shared AS (UPDATE shared_quota_heads AS t SET revision = s.revision, version = s.version, state = s.state, updated_at = clock_timestamp()
        FROM shared_in AS s WHERE s.existed AND t.key = s.key AND t.revision = s.base RETURNING t.key)`,
        `inserted_shared AS (INSERT INTO shared_quota_heads (key, revision, version, state)
        SELECT s.key, s.revision, s.version, s.state FROM shared_in AS s WHERE NOT s.existed RETURNING key)`,
      ];
  const ctes = [
    `heads_in AS (SELECT * FROM jsonb_to_recordset(${param()}::jsonb)
        AS h(namespace text, base bigint, existed boolean, version bigint, state jsonb))`,
    `updated_heads AS (UPDATE namespace_heads AS t SET version = h.version, state = h.state, updated_at = clock_timestamp()
        FROM heads_in AS h WHERE h.existed AND t.namespace = h.namespace AND t.version = h.base RETURNING t.namespace)`,
    `inserted_heads AS (INSERT INTO namespace_heads (namespace, version, state)
        SELECT h.namespace, h.version, h.state FROM heads_in AS h WHERE NOT h.existed RETURNING namespace)`,
    ...sharedCtes,
    `head AS (SELECT namespace FROM updated_heads UNION ALL SELECT namespace FROM inserted_heads${
      !shape.shared ? '' : ' UNION ALL SELECT key FROM updated_shared UNION ALL SELECT key FROM inserted_shared'
    })`,
    `events AS (INSERT INTO ledger_events (namespace, version, type, schema_version, data, request_id, actor, on_behalf_of, recorded_at)
        SELECT e.namespace, e.version, e.type, ${EVENT_SCHEMA_VERSION}, e.data, e.request_id, e.actor, e.on_behalf_of, to_timestamp(e.at / 1000.0)
          FROM jsonb_to_recordset(${param()}::jsonb)
            AS e(namespace text, version bigint, type text, data jsonb, request_id text, actor text, on_behalf_of text, at float8)
         WHERE ${HEAD_MOVED('e')}
         ORDER BY e.namespace, e.version
        RETURNING namespace, version, position)`,
  ];
  // New rows are inserted and known rows updated by key: no ON CONFLICT probe, whose index
  // reads would add predicate locks.
  if (shape.created) {
    ctes.push(`created_reservations AS (INSERT INTO reservations (namespace, reservation_id, object_uid, status, version, data, request_id,
            reserved_at, committed_at, released_at, release_reason, expires_at, event_versions)
          SELECT r.namespace, r.reservation_id, r.object_uid, r.status, r.version, r.data, r.request_id,
                 to_timestamp(r.reserved_at / 1000.0), to_timestamp(r.committed_at / 1000.0), to_timestamp(r.released_at / 1000.0),
                 r.release_reason, to_timestamp(r.expires_at / 1000.0),
                 ARRAY(SELECT jsonb_array_elements_text(r.event_versions)::bigint)
            FROM jsonb_to_recordset(${param()}::jsonb) ${RESERVATION_RECORDSET}
           WHERE ${HEAD_MOVED('r')})`);
  }
  if (shape.changed) {
    ctes.push(`changed_reservations AS (UPDATE reservations AS t SET
            status = r.status, data = r.data, committed_at = to_timestamp(r.committed_at / 1000.0),
            released_at = to_timestamp(r.released_at / 1000.0), release_reason = r.release_reason,
            event_versions = ARRAY(SELECT jsonb_array_elements_text(r.event_versions)::bigint)
            FROM jsonb_to_recordset(${param()}::jsonb) ${RESERVATION_RECORDSET}
           WHERE t.namespace = r.namespace AND t.reservation_id = r.reservation_id AND ${HEAD_MOVED('r')})`);
  }
  return ctes;
}

interface GroupDecision {
  readonly namespace: string;
  /** Its namespace appends events in this group: the decision is written only if that head moved. */
  readonly appends: boolean;
  readonly input: DecisionInput;
}

function decisionRows(decisions: readonly GroupDecision[]): Record<string, unknown>[] {
  return decisions.map(({ namespace, appends, input }, ord) => ({
    ord,
    namespace,
    appends,
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
}

function decisionsCte(anyAppends: boolean, param: () => string): string {
  const now = param();
  return `decided AS (INSERT INTO admission_decisions (namespace, request_key, request_digest, source, operation, resource, kind, name, object_uid,
            requester, on_behalf_of, dry_run, allowed, code, reason, reservation_id, result, decided_at)
          SELECT d.namespace, d.request_key, d.request_digest, d.source, d.operation, d.resource, d.kind, d.name, d.object_uid,
                 d.requester, d.on_behalf_of, d.dry_run, d.allowed, d.code, d.reason, d.reservation_id, d.result, to_timestamp(${now} / 1000.0)
            FROM jsonb_to_recordset(${param()}::jsonb)
              AS d(ord int, namespace text, appends boolean, request_key text, request_digest text, source text, operation text, resource text, kind text,
                   name text, object_uid text, requester text, on_behalf_of text, dry_run boolean, allowed boolean, code smallint, reason text,
                   reservation_id text, result jsonb)
          ${anyAppends ? `WHERE NOT d.appends OR ${HEAD_MOVED('d')}` : ''}
           ORDER BY d.ord
          RETURNING id)`;
}

function reservationRow(namespace: string, r: ReservationRecord): Record<string, unknown> {
  return {
    namespace,
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
