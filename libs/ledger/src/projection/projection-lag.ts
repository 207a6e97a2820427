import type { DataSource } from 'typeorm';
import { select } from '../sql.js';

/** How far a projection is behind the ledger (GET /v1/projections, the projection_lag metrics). */
export interface ProjectionLag {
  readonly name: string;
  /** The last position applied ("0" before the first). */
  readonly position: string;
  /** The newest position in the ledger. */
  readonly headPosition: string;
  /** Events committed or in flight beyond the checkpoint. */
  readonly eventsBehind: number;
  /** Age of the oldest event not yet applied, in ms (0 when caught up). */
  readonly lagMs: number;
  readonly eventsApplied: number;
  readonly updatedAt: string;
}

export async function projectionLag(dataSource: DataSource, name: string): Promise<ProjectionLag> {
  const rows = await select<{
    position: string | null;
    events_applied: string | null;
    updated_at: Date | null;
    head_position: string | null;
    behind: string;
    oldest_ms: number | null;
  }>(
    dataSource,
    // Behind: each namespace's head against its projected version (what the projection has
    // still to apply; a shared quota's stream is never projected), and the oldest such event.
    `WITH c AS (SELECT position, events_applied, updated_at FROM projection_checkpoints WHERE name = $1),
          ahead AS (
            SELECT h.namespace, coalesce(p.version, 0) AS done, h.version AS head
              FROM namespace_heads h LEFT JOIN projected_namespaces p ON p.namespace = h.namespace
             WHERE h.version > coalesce(p.version, 0)),
          pending AS (
            SELECT coalesce(sum(a.head - a.done), 0) AS behind,
                   (SELECT min(e.recorded_at) FROM ahead b JOIN ledger_events e ON e.namespace = b.namespace AND e.version = b.done + 1) AS oldest
              FROM ahead a)
     SELECT (SELECT position::text FROM c) AS position, (SELECT events_applied::text FROM c) AS events_applied,
            (SELECT updated_at FROM c) AS updated_at, (SELECT max(position)::text FROM ledger_events) AS head_position,
            pending.behind::text AS behind,
            (extract(epoch from clock_timestamp() - pending.oldest) * 1000)::float8 AS oldest_ms
       FROM pending`,
    [name],
  );
  const row = rows[0];
  return {
    name,
    position: row?.position ?? '0',
    headPosition: row?.head_position ?? '0',
    eventsBehind: Number(row?.behind ?? 0),
    lagMs: Math.max(0, Math.round(row?.oldest_ms ?? 0)),
    eventsApplied: Number(row?.events_applied ?? 0),
    updatedAt: (row?.updated_at ?? new Date(0)).toISOString(),
  };
}
