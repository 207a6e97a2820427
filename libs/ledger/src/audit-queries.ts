import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { Page, ReservationState, ReservationView } from './ledger.types.js';
import { RESERVATION_COLUMNS, recordOf, reservationViewOf, type RawReservationRow } from './namespace-tx.js';

/**
 * Read-only audit queries over the ledger's tables that the Ledger itself does not answer:
 * reservations by state and age. Nothing here writes or takes a lock.
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
    const { rows } = await this.pool.query<RawReservationRow & { reserved_at_text: string }>(
      `SELECT ${RESERVATION_COLUMNS},
              to_char(reserved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS reserved_at_text
         FROM reservations WHERE ${conditions.join(' AND ')}
        ORDER BY reservations.reserved_at, reservations.reservation_id LIMIT ${limit + 1}`,
      params,
    );
    const page = rows.slice(0, limit);
    const items = page.map((row) => reservationViewOf(namespace, recordOf(row)));
    const last = page[page.length - 1];
    return rows.length > limit && last ? { items, next: encodeReservationCursor({ reservedAt: last.reserved_at_text, id: last.reservation_id }) } : { items };
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
