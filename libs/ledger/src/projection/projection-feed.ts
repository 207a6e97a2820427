import type pg from 'pg';
import { byteBoundedSql, pageCutShort, type ByteBoundedColumns } from '../read/byte-bounded.js';
import type { FoldRow } from '../rows.js';

/**
 * What a projection step reads of the ledger: the feed (events above the checkpoint, by position)
 * and the sweep (each namespace's events above its projected version). Both stop at a number of
 * events and at a number of bytes of their payloads, whichever comes first, and always take at
 * least one: a catch-up over events with multi-MB names took the worker to 806 MB, past
 * its 512Mi limit, and as the same step ran again after each restart, it crash-looped.
 */

/** An event as the feed reads it: what a fold needs (rows.ts) and where it sits in the feed. */
export interface FeedRow extends FoldRow {
  readonly position: string;
  readonly namespace: string;
}

/** An event of a bounded read, which also says how many it had before its bounds. */
export type BoundedFeedRow = FeedRow & ByteBoundedColumns;

/** The bytes of events one step reads at most (the feed's and the sweep's together; one event always). */
export const PROJECTION_STEP_MAX_BYTES = 8 * 1024 * 1024;

const FEED_COLUMNS = `e.position::text AS position, e.namespace, e.version::text AS version, e.type, e.schema_version, e.data,
                (extract(epoch from e.recorded_at) * 1000)::float8 AS at_ms`;

/** Events above the checkpoint, in position order: at most `max`, and at most `bytesMax` of payload (one always). */
export function feedRead(checkpoint: string, max: number, bytesMax: number): pg.QueryConfig {
  return {
    text: byteBoundedSql({
      candidates: `SELECT ${FEED_COLUMNS}, e.position AS page_key, pg_column_size(e.data) AS stored_bytes FROM ledger_events e WHERE e.position > $1::bigint ORDER BY e.position LIMIT $2`,
      order: 'c.page_key',
      rowsMax: max,
      bytesMax,
    }),
    values: [checkpoint, max],
  };
}

export interface VersionRange {
  readonly namespace: string;
  readonly after: string;
  readonly upTo: string;
}

/**
 * Events of each namespace with after < version <= upTo, in (namespace, version) order: with
 * `bounds`, at most that many and that many bytes of payload (one always), so each namespace's
 * are a prefix of its range; without, all of them (a gap ahead of events already read).
 */
export function versionsRead(
  ranges: readonly VersionRange[],
  bounds?: { readonly max: number; readonly bytesMax: number },
): pg.QueryConfig {
  const values = [ranges.map((r) => r.namespace), ranges.map((r) => r.after), ranges.map((r) => r.upTo)];
  const all = `SELECT ${FEED_COLUMNS}
                 FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS k(ns, after, up_to)
                 JOIN ledger_events e ON e.namespace = k.ns AND e.version > k.after AND e.version <= k.up_to`;
  if (!bounds) return { text: `${all} ORDER BY e.namespace, e.version`, values };
  const max = Math.max(1, Math.floor(bounds.max));
  return {
    text: byteBoundedSql({
      candidates: `SELECT ${FEED_COLUMNS}, e.namespace AS page_namespace, e.version AS page_version, pg_column_size(e.data) AS stored_bytes
                     FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS k(ns, after, up_to)
                     JOIN ledger_events e ON e.namespace = k.ns AND e.version > k.after AND e.version <= k.up_to
                    ORDER BY e.namespace, e.version LIMIT ${max}`,
      order: 'c.page_namespace, c.page_version',
      rowsMax: max,
      bytesMax: bounds.bytesMax,
    }),
    values,
  };
}

/** Whether the feed read everything there was above the checkpoint (then the sweep may run): neither bound stopped it. */
export function feedDrained(rows: readonly BoundedFeedRow[], max: number): boolean {
  return rows.length < max && !pageCutShort(rows);
}

/** The bytes of rows read (as the bound counts them). */
export const payloadBytes = (rows: readonly BoundedFeedRow[]): number => rows.reduce((sum, row) => sum + Number(row.row_bytes), 0);
