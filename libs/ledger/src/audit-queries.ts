import { Quantity } from '@quota/domain';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { Page, ReservationState, ReservationView } from './ledger.types.js';
import { RESERVATION_COLUMNS, recordOf, reservationViewOf, type RawReservationRow } from './namespace-tx.js';

/**
 * Read-only audit queries over the ledger's tables that the Ledger itself does not answer:
 * reservations by state and age, and the overview of namespaces with their quotas. Nothing
 * here writes or takes a lock.
 */

/** Largest page a list answers. */
export const AUDIT_PAGE_MAX = 1000;

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

// ------------------------------------------------------------------------ the queries

export class AuditQueries {
  private readonly pool: pg.Pool;

  /** From the pool itself, or from an initialized PostgreSQL data source (its pool, as the Ledger takes it). */
  constructor(source: pg.Pool | DataSource) {
    if ('driver' in source) {
      const pool = (source.driver as unknown as { master?: pg.Pool }).master;
      if (!pool) throw new Error('the audit queries need an initialized PostgreSQL data source');
      this.pool = pool;
    } else {
      this.pool = source;
    }
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
    const { rows } = await this.pool.query<RawReservationRow & { reserved_at_text: string; requester: string | null; on_behalf_of: string | null }>(
      `SELECT ${RESERVATION_COLUMNS},
              to_char(reserved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS reserved_at_text,
              first.actor AS requester, first.on_behalf_of
         FROM (SELECT * FROM reservations WHERE ${conditions.join(' AND ')}
                ORDER BY reservations.reserved_at, reservations.reservation_id LIMIT ${limit + 1}) AS reservations
         LEFT JOIN LATERAL (SELECT e.actor, e.on_behalf_of FROM ledger_events e
                             WHERE e.namespace = reservations.namespace AND e.version = reservations.event_versions[1]) AS first ON true
        ORDER BY reservations.reserved_at, reservations.reservation_id LIMIT ${limit + 1}`,
      params,
    );
    const page = rows.slice(0, limit);
    const items = page.map((row) => ({
      ...reservationViewOf(namespace, recordOf(row)),
      ...(row.requester ? { requester: row.requester } : {}),
      ...(row.on_behalf_of ? { onBehalfOf: row.on_behalf_of } : {}),
    }));
    const last = page[page.length - 1];
    return rows.length > limit && last ? { items, next: encodeReservationCursor({ reservedAt: last.reserved_at_text, id: last.reservation_id }) } : { items };
  }

  /**
   * Namespaces with a stream, by name, each with its quotas' hard and used as the head holds
   * them (what admission decides on) and its tightest resource: the dashboard's list.
   */
  async listNamespaces(query: NamespaceListQuery): Promise<Page<NamespaceSummary>> {
    const limit = clampLimit(query.limit);
    const { rows } = await this.pool.query<{ namespace: string; version: string; quotas: { definition: { name: string; spec: { hard?: Record<string, string> } }; used: Record<string, string> }[] | null }>(
      `SELECT namespace, version::text AS version, state->'quotas' AS quotas FROM namespace_heads
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
      for (const q of quotas) if (q.tightest && (!tightest || q.tightest.ratio > tightest.ratio)) tightest = { quota: q.name, ...q.tightest };
      return { namespace: row.namespace, version: Number(row.version), quotas, ...(tightest ? { tightest } : {}) };
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
