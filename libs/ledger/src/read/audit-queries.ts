import { Quantity } from '@quota/domain';
import type { DataSource } from 'typeorm';
import { byteBoundedSql, HISTORY_PAGE_MAX_BYTES, pageCutShort, type ByteBoundedColumns } from './byte-bounded.js';
import { coveringShared, type HeadJson } from '../head.js';
import type {
  CoveringSharedQuota,
  DecisionQuery,
  DecisionView,
  EventView,
  Page,
  ReservationState,
  ReservationView,
} from '../ledger.types.js';
import {
  DECISION_COLUMNS,
  EVENT_COLUMNS,
  RESERVATION_COLUMNS,
  recordOf,
  type DecisionRow,
  type EventRow,
  type ReservationRow,
} from '../rows.js';
import { select } from '../sql.js';
import { decisionViewOf, eventView, reservationViewOf } from './views.js';

/**
 * Read-only audit queries: the event stream, the decisions log, reservations (one with its
 * history, or by state and age), and the overview of namespaces with their quotas. Nothing
 * here writes or takes a lock. Every page is bounded in bytes as well as rows (byte-bounded.ts):
 * one cut short by its budget still has a `next`.
 */

/** Largest page a list answers. */
export const AUDIT_PAGE_MAX = 1000;

/** Where a page of `limit` ends: its last item's cursor when more rows follow, by count or by bytes. */
function pageOf<R extends ByteBoundedColumns, T>(rows: readonly R[], items: readonly T[], cursor: (last: R) => string): Page<T> {
  const last = rows.at(-1);
  return last && pageCutShort(rows) ? { items, next: cursor(last) } : { items };
}

const clampLimit = (limit: number): number => Math.max(1, Math.min(AUDIT_PAGE_MAX, Math.floor(limit)));

// ------------------------------------------------------------------------ public shapes

/** Where a reservation listing resumes: the last row's reservation time (microseconds) and id. */
export interface ReservationCursor {
  /** `reserved_at` in UTC with microseconds, e.g. `2026-01-02T03:04:05.123456Z`. */
  readonly reservedAt: string;
  readonly id: string;
}

export interface ReservationListQuery {
  readonly state?: ReservationState;
  /** RFC 3339: only reservations made before this instant. */
  readonly olderThan?: string;
  readonly after?: ReservationCursor;
  /** At most this many (1..1000). */
  readonly limit: number;
}

/** Webhook reservations of one resource that no reconcile has settled (`unsettledReservations`). */
export interface UnsettledReservations {
  /** Kubernetes' spelling: `widgets.example.com`. */
  readonly resource: string;
  readonly count: number;
  readonly namespaces: number;
}

// ------------------------------------------------------------------------ the queries

export class AuditQueries {
  constructor(private readonly dataSource: DataSource) {}

  /** The namespace's stream, by position, paged (a keyed range of its (namespace, position) index). */
  async readEvents(namespace: string, page: { readonly after?: string; readonly limit: number }): Promise<Page<EventView>> {
    const limit = clampLimit(page.limit);
    const rows = await select<EventRow & ByteBoundedColumns>(
      this.dataSource,
      byteBoundedSql({
        candidates: `SELECT ${EVENT_COLUMNS}, e.position AS page_key, pg_column_size(e.data) AS stored_bytes FROM ledger_events e
                      WHERE e.namespace = $1 AND e.position > $2::bigint ORDER BY e.position LIMIT ${limit + 1}`,
        order: 'c.page_key',
        rowsMax: limit,
        bytesMax: HISTORY_PAGE_MAX_BYTES,
      }),
      [namespace, page.after ?? '0'],
    );
    return pageOf(rows, rows.map(eventView), (last) => last.position);
  }

  async listDecisions(namespace: string, query: DecisionQuery): Promise<Page<DecisionView>> {
    const conditions = ['namespace = $1'];
    const params: unknown[] = [namespace];
    const add = (sql: string, value: unknown): void => {
      params.push(value);
      conditions.push(sql.replace('?', `$${params.length}`));
    };
    if (query.allowed !== undefined) add('allowed = ?', query.allowed);
    if (query.dryRun !== undefined) add('dry_run = ?', query.dryRun);
    if (query.since !== undefined) add('decided_at >= ?::timestamptz', query.since);
    if (query.until !== undefined) add('decided_at < ?::timestamptz', query.until);
    if (query.requester !== undefined) add('requester = ?', query.requester);
    if (query.after !== undefined) add(query.newestFirst ? 'id < ?::bigint' : 'id > ?::bigint', query.after);
    const limit = clampLimit(query.limit);
    const order = query.newestFirst ? 'DESC' : 'ASC';
    const rows = await select<DecisionRow & ByteBoundedColumns>(
      this.dataSource,
      byteBoundedSql({
        candidates: `SELECT ${DECISION_COLUMNS}, d.id AS page_key,
                            pg_column_size(d.result) + coalesce(pg_column_size(d.name), 0) AS stored_bytes FROM admission_decisions d
                      WHERE ${conditions.join(' AND ')} ORDER BY d.id ${order} LIMIT ${limit + 1}`,
        order: `c.page_key ${order}`,
        rowsMax: limit,
        bytesMax: HISTORY_PAGE_MAX_BYTES,
      }),
      params,
    );
    return pageOf(
      rows,
      rows.map((row) => decisionViewOf(namespace, row)),
      (last) => last.id,
    );
  }

  /** One decision of the log, with its explanation; undefined when the namespace has no such id. */
  async getDecision(namespace: string, id: string): Promise<DecisionView | undefined> {
    const rows = await select<DecisionRow>(
      this.dataSource,
      `SELECT ${DECISION_COLUMNS} FROM admission_decisions WHERE namespace = $1 AND id = $2::bigint`,
      [namespace, id],
    );
    return rows[0] && decisionViewOf(namespace, rows[0]);
  }

  /** A reservation with its history (its events, oldest first) and who asked for it. */
  async getReservation(namespace: string, id: string): Promise<ReservationView | undefined> {
    const rows = await select<ReservationRow>(
      this.dataSource,
      `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE namespace = $1 AND reservation_id = $2`,
      [namespace, id],
    );
    const row = rows[0];
    if (!row) return undefined;
    const record = recordOf(row);
    const events = await select<EventRow>(
      this.dataSource,
      `SELECT ${EVENT_COLUMNS} FROM ledger_events WHERE namespace = $1 AND version = ANY($2::bigint[]) ORDER BY ledger_events.version`,
      [namespace, record.eventVersions],
    );
    const history = events.map(eventView);
    // Who asked is the actor of its Reserved or Adopted event; an archived one names nobody (not the releaser).
    // (Queued, for one admitted from the queue: its Reserved is the freeing command's.)
    const first = history.find((event) => event.type === 'Queued' || event.type === 'Reserved' || event.type === 'Adopted');
    return {
      ...reservationViewOf(namespace, record),
      ...(first ? { requester: first.actor } : {}),
      ...(first?.onBehalfOf ? { onBehalfOf: first.onBehalfOf } : {}),
      history,
    };
  }

  /** Reservations of a namespace, oldest first (by reservation time, then id), optionally of one state and older than an instant. */
  async listReservations(namespace: string, query: ReservationListQuery): Promise<Page<ReservationView>> {
    const limit = clampLimit(query.limit);
    const conditions = ['namespace = $1'];
    const params: unknown[] = [namespace];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (query.state !== undefined) conditions.push(`status = ${param(query.state)}`);
    if (query.olderThan !== undefined) conditions.push(`reserved_at < ${param(query.olderThan)}::timestamptz`);
    if (query.after !== undefined) {
      conditions.push(`(reserved_at, reservation_id) > (${param(query.after.reservedAt)}::timestamptz, ${param(query.after.id)}::text)`);
    }
    // The requester is the actor of the reservation's first event (Reserved or Adopted).
    const rows = await select<
      ReservationRow & ByteBoundedColumns & { reserved_at_text: string; requester: string | null; on_behalf_of: string | null }
    >(
      this.dataSource,
      byteBoundedSql({
        candidates: `SELECT ${RESERVATION_COLUMNS}, reservations.reserved_at AS page_at, reservations.reservation_id AS page_id,
                            to_char(reserved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS reserved_at_text,
                            first.actor AS requester, first.on_behalf_of, pg_column_size(reservations.data) AS stored_bytes
                       FROM (SELECT * FROM reservations WHERE ${conditions.join(' AND ')}
                              ORDER BY reservations.reserved_at, reservations.reservation_id LIMIT ${limit + 1}) AS reservations
                       LEFT JOIN LATERAL (SELECT e.actor, e.on_behalf_of FROM ledger_events e
                                           WHERE e.namespace = reservations.namespace AND e.version = reservations.event_versions[1]) AS first ON true
                      ORDER BY reservations.reserved_at, reservations.reservation_id LIMIT ${limit + 1}`,
        order: 'c.page_at, c.page_id',
        rowsMax: limit,
        bytesMax: HISTORY_PAGE_MAX_BYTES,
      }),
      params,
    );
    const items = rows.map((row) => ({
      ...reservationViewOf(namespace, recordOf(row)),
      ...(row.requester ? { requester: row.requester } : {}),
      ...(row.on_behalf_of ? { onBehalfOf: row.on_behalf_of } : {}),
    }));
    return pageOf(rows, items, (last) => encodeReservationCursor({ reservedAt: last.reserved_at_text, id: last.reservation_id }));
  }

  /**
   * Webhook reservations (of an object, with a uid) reserved before `olderThan` and never
   * committed nor released, counted by resource over every namespace: what no reconcile settles,
   * because no inventory lists the kind or no reconciler runs. At most 20 resources;
   * with `namespace`, only its reservations (read through its live-by-age index).
   */
  async unsettledReservations(olderThan: string, namespace?: string): Promise<UnsettledReservations[]> {
    const rows = await select<{ grp: string; resource: string; count: string; namespaces: string }>(
      this.dataSource,
      `SELECT coalesce(data->'object'->>'group', '') AS grp, data->'object'->>'resource' AS resource,
              count(*)::text AS count, count(DISTINCT namespace)::text AS namespaces
         FROM reservations
        WHERE status = 'reserved' AND object_uid IS NOT NULL AND reserved_at < $1::timestamptz
          AND ($2::text IS NULL OR namespace = $2::text)
        GROUP BY 1, 2 ORDER BY count(*) DESC, 1, 2 LIMIT 20`,
      [olderThan, namespace ?? null],
    );
    return rows.map((r) => ({
      resource: r.grp === '' ? r.resource : `${r.resource}.${r.grp}`,
      count: Number(r.count),
      namespaces: Number(r.namespaces),
    }));
  }

  /**
   * Namespaces with a stream, by name, each with its quotas' hard and used as the head holds
   * them (what admission decides on) and its tightest resource: the dashboard's list.
   */
  async listNamespaces(query: NamespaceListQuery): Promise<Page<NamespaceSummary>> {
    const limit = clampLimit(query.limit);
    const rows = await select<{
      namespace: string;
      version: string;
      quotas: { definition: { name: string; spec: { hard?: Record<string, string> } }; used: Record<string, string> }[] | null;
      shared: HeadJson['shared'] | null;
    }>(
      this.dataSource,
      `SELECT namespace, version::text AS version, state->'quotas' AS quotas, state->'shared' AS shared FROM namespace_heads
        WHERE namespace > $1 AND ($2::text IS NULL OR strpos(namespace, $2) > 0)
        ORDER BY namespace LIMIT $3`,
      [query.after ?? '', query.contains ?? null, limit + 1],
    );
    const items = rows.slice(0, limit).map((row): NamespaceSummary => {
      const quotas = (row.quotas ?? []).map((q): QuotaSummary => {
        const hard = q.definition.spec.hard ?? {};
        let tightest: QuotaSummary['tightest'];
        for (const [resource, limitValue] of Object.entries(hard)) {
          const ratio = usageRatio(q.used[resource], limitValue);
          if (!tightest || ratio > tightest.ratio) tightest = { resource, ratio };
        }
        return { name: q.definition.name, hard, used: q.used, ...(tightest ? { tightest } : {}) };
      });
      let tightest: NamespaceSummary['tightest'];
      for (const q of quotas)
        if (q.tightest && (!tightest || q.tightest.ratio > tightest.ratio)) tightest = { quota: q.name, ...q.tightest };
      const shared = coveringShared(row.shared ?? undefined);
      return {
        namespace: row.namespace,
        version: Number(row.version),
        quotas,
        ...(tightest ? { tightest } : {}),
        ...(shared.length > 0 ? { shared } : {}),
      };
    });
    const last = items.at(-1);
    return rows.length > limit && last ? { items, next: last.namespace } : { items };
  }
}

// ------------------------------------------------------------------------ pure helpers

/** The `next` of a reservation listing: opaque to clients (base64url of JSON). */
export function encodeReservationCursor(cursor: ReservationCursor): string {
  return Buffer.from(JSON.stringify([cursor.reservedAt, cursor.id]), 'utf8').toString('base64url');
}

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A cursor this server issued, or undefined for anything else. */
export function decodeReservationCursor(text: string): ReservationCursor | undefined {
  if (text.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  const [reservedAt, id] = parsed as unknown[];
  if (typeof reservedAt !== 'string' || !CURSOR_TIME.test(reservedAt) || Number.isNaN(Date.parse(reservedAt))) return undefined;
  if (typeof id !== 'string' || id.length === 0 || id.length > 253) return undefined;
  return { reservedAt, id };
}

// ------------------------------------------------------------------------ namespace overview

/** One quota of a namespace as its head holds it now (exact, not the projection). */
export interface QuotaSummary {
  readonly name: string;
  readonly hard: Readonly<Record<string, string>>;
  readonly used: Readonly<Record<string, string>>;
  /** The resource closest to (or furthest over) its hard limit, and used / hard (1 = at the limit). */
  readonly tightest?: { readonly resource: string; readonly ratio: number };
}

export interface NamespaceSummary {
  readonly namespace: string;
  /** The stream's version: what the numbers are as of. */
  readonly version: number;
  readonly quotas: readonly QuotaSummary[];
  /** The shared quotas covering it (absent: none), with this namespace's part of their use: a namespace with no ResourceQuota may still be limited. */
  readonly shared?: readonly CoveringSharedQuota[];
  /** The tightest resource over all its quotas (absent without quotas). */
  readonly tightest?: { readonly quota: string; readonly resource: string; readonly ratio: number };
}

export interface NamespaceListQuery {
  /** Only namespaces whose name contains this (case-sensitive, as names are lower case). */
  readonly contains?: string;
  /** The `next` of a previous page: the last namespace name it held. */
  readonly after?: string;
  readonly limit: number;
}

/**
 * used / hard as a number for display, from exact quantities; a hard limit of 0 counts as
 * full (nothing more can be admitted), used over hard as more than 1.
 */
export function usageRatio(used: string | undefined, hard: string): number {
  const h = Quantity.parse(hard).nanos;
  const u = used === undefined ? 0n : Quantity.parse(used).nanos;
  if (h <= 0n) return u > 0n ? Number.MAX_SAFE_INTEGER : 1;
  return Number((u * 1_000_000n) / h) / 1_000_000;
}
