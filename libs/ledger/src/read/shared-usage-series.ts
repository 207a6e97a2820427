import { Resources, type RawQuantities, type ResourceList } from '@quota/domain';
import type pg from 'pg';
import type { Query } from './usage-sampler.js';
import type { SharedChange } from './usage-versions.js';

/**
 * A shared quota's usage over time, as a read model (migrations/1795900001400): its total at every
 * instant where what one of its namespaces contributes changed, kept by the usage projection.
 *
 * The total at an instant is, by definition, the sum over the namespaces of what each contributed
 * at its last event recorded at or before the instant (shared-usage-queries.ts). A namespace's
 * contribution changes only at its events, so the sum is a step function of time that moves only
 * at those events' instants: `projected_shared_usage` holds, per shared quota, each such instant
 * and the total from then on (every namespace's contribution, summed; the instant's hard limits
 * mask it when it is read). A row holds up to SHARED_INSTANTS_PER_ROW consecutive instants, keyed
 * by its first, as usage at every version packs versions (usage-versions.ts). A point of a series
 * is then the newest row at or before it and the last of its instants at or before it: one descent
 * of the primary key, whatever the namespaces the quota ever covered.
 *
 * The projection applies each namespace's events in version order, but not all namespaces in
 * time order (a transaction committing late, the sweep): a change at an instant before the last
 * one stored is added to every total from its instant on. A namespace's events are recorded in
 * time order (the head's compare-and-set orders them, on the database's clock); one that is not
 * (an injected clock) cannot be placed so, and marks its shared quotas unordered
 * (`projected_shared_unordered`): their series are summed namespace by namespace, as before.
 *
 * The rows are written in the step that moves `projected_namespaces.version`, so in any snapshot
 * they sum every namespace's events up to its projected version; what a reader finds past that
 * version it adds itself (shared-usage-queries.ts).
 */

/** Instants one row holds at most: fewer rows to write in a catch-up, a short array to scan per point. */
export const SHARED_INSTANTS_PER_ROW = 32;

/** One instant of a shared quota's series: the total from then on. */
export interface SeriesEntry {
  readonly atMs: number;
  readonly total: ResourceList;
}

/** The changes of one projection step, written in its transaction (BatchWrites.flush). */
export class SharedSeriesWrites {
  private readonly deltas = new Map<string, { atMs: number; delta: ResourceList }[]>();
  private readonly unordered = new Set<string>();

  readonly add = (change: SharedChange): void => {
    if ('unordered' in change) {
      this.unordered.add(change.key);
      return;
    }
    const list = this.deltas.get(change.key) ?? [];
    list.push({ atMs: change.atMs, delta: change.delta });
    this.deltas.set(change.key, list);
  };

  /**
   * Per shared quota: its rows from the one holding the step's earliest change on (for a step in
   * time order, the last row alone), merged with the step's changes, written back in rows of
   * SHARED_INSTANTS_PER_ROW. Three statements for all the shared quotas a step moved.
   */
  async flush(client: pg.ClientBase): Promise<void> {
    if (this.unordered.size > 0)
      await client.query(`INSERT INTO projected_shared_unordered (key) SELECT unnest($1::text[]) ON CONFLICT (key) DO NOTHING`, [
        [...this.unordered],
      ]);
    if (this.deltas.size === 0) return;
    const keys = [...this.deltas.keys()];
    const earliest = keys.map((key) => Math.min(...(this.deltas.get(key) ?? []).map((d) => d.atMs)));
    const { rows } = await client.query<{ key: string; at_ms: number; ats_ms: number[]; totals: RawQuantities[] }>(
      `SELECT r.key, (extract(epoch from r.at) * 1000)::float8 AS at_ms,
              ARRAY(SELECT (extract(epoch from a) * 1000)::float8 FROM unnest(r.ats) AS a) AS ats_ms, r.totals
         FROM unnest($1::text[], $2::float8[]) AS k(key, earliest)
         JOIN projected_shared_usage r ON r.key = k.key
          AND r.at >= coalesce((SELECT max(p.at) FROM projected_shared_usage p WHERE p.key = k.key AND p.at <= to_timestamp(k.earliest / 1000.0)), '-infinity')
        ORDER BY r.key, r.at`,
      [keys, earliest],
    );
    const stored = new Map<string, SeriesEntry[]>();
    const firstRow = new Map<string, number>();
    for (const row of rows) {
      if (!firstRow.has(row.key)) firstRow.set(row.key, row.at_ms);
      const entries = stored.get(row.key) ?? [];
      row.ats_ms.forEach((atMs, i) => entries.push({ atMs, total: Resources.resourceList(row.totals[i] ?? {}) }));
      stored.set(row.key, entries);
    }
    const written: string[] = [];
    for (const key of keys) {
      const merged = mergeChanges(stored.get(key) ?? [], this.deltas.get(key) ?? []);
      for (let i = 0; i < merged.length; i += SHARED_INSTANTS_PER_ROW)
        written.push(rowJson(key, merged.slice(i, i + SHARED_INSTANTS_PER_ROW)));
    }
    // The rows read are replaced: their instants may be regrouped, and each total moved.
    await client.query(
      `DELETE FROM projected_shared_usage r USING unnest($1::text[], $2::float8[]) AS k(key, first_ms)
        WHERE r.key = k.key AND r.at >= to_timestamp(k.first_ms / 1000.0)`,
      [[...firstRow.keys()], [...firstRow.values()]],
    );
    await client.query(
      `INSERT INTO projected_shared_usage (key, at, ats, totals)
       SELECT r.key, to_timestamp((r.ats_ms ->> 0)::float8 / 1000.0),
              ARRAY(SELECT to_timestamp(a::float8 / 1000.0) FROM jsonb_array_elements_text(r.ats_ms) WITH ORDINALITY AS x(a, n) ORDER BY n), r.totals
         FROM jsonb_to_recordset($1::jsonb) AS r(key text, ats_ms jsonb, totals jsonb)`,
      [`[${written.join(',')}]`],
    );
  }
}

/**
 * The stored entries (in time order) with the step's changes: each change is added to every total
 * from its instant on, and an instant not stored yet gets the total before it plus the changes up
 * to it. Before the first stored instant the total is nothing.
 */
export function mergeChanges(
  stored: readonly SeriesEntry[],
  deltas: readonly { readonly atMs: number; readonly delta: ResourceList }[],
): SeriesEntry[] {
  const changes = [...deltas].sort((a, b) => a.atMs - b.atMs);
  const out: SeriesEntry[] = [];
  let carry: ResourceList = Resources.EMPTY;
  let before: ResourceList = Resources.EMPTY;
  let s = 0;
  let c = 0;
  while (s < stored.length || c < changes.length) {
    const storedAt = stored[s]?.atMs ?? Infinity;
    const changeAt = changes[c]?.atMs ?? Infinity;
    const at = Math.min(storedAt, changeAt);
    for (; c < changes.length && (changes[c] as { atMs: number }).atMs === at; c++)
      carry = Resources.add(carry, (changes[c] as { delta: ResourceList }).delta);
    if (storedAt === at) before = (stored[s++] as SeriesEntry).total;
    out.push({ atMs: at, total: Resources.add(before, carry) });
  }
  return out;
}

function rowJson(key: string, entries: readonly SeriesEntry[]): string {
  return `{"key":${JSON.stringify(key)},"ats_ms":[${entries.map((e) => e.atMs).join(',')}],"totals":[${entries.map((e) => JSON.stringify(Resources.canonicalResourceList(e.total))).join(',')}]}`;
}

/** What a series read finds in the model, in one statement (one snapshot). */
export interface ModelledSeries {
  /** Per instant, the total of every namespace's contribution as far as each is projected; undefined before the first. */
  readonly totals: readonly (ResourceList | undefined)[];
  /** The namespaces the quota was applied to that the projection has not caught up with: their projected version, and when their next event was recorded (null: unknown). */
  readonly lagging: readonly { readonly namespace: string; readonly projected: number; readonly nextAt: string | null }[];
  /** The quota's total cannot be kept by instant (SharedSeriesWrites): sum the namespaces instead. */
  readonly unordered: boolean;
}

/**
 * The model's total at each instant, and, in the same snapshot, which namespaces the projection
 * has not caught up with among those the quota was applied to up to the last instant: what the
 * model holds of such a namespace may be short of its events (joining, leaving or charging), in
 * the range or before it (a namespace that left before the range, its leaving not projected yet,
 * still counts in the model). The applied ones are found on the index of SharedQuotaApplied
 * (key, time, namespace), and those whose events before the retention horizon were archived by
 * their horizon state.
 */
export async function modelledSeries(query: Query, key: string, instants: readonly string[]): Promise<ModelledSeries> {
  const last = new Date(Math.max(...instants.map((at) => Date.parse(at)))).toISOString();
  const [row] = await query<{
    totals: (RawQuantities | null)[] | null;
    lagging: { namespace: string; projected: number; next_at: string | null }[] | null;
    unordered: boolean;
  }>(
    `SELECT (SELECT jsonb_agg(u.total ORDER BY i.ord)
               FROM unnest($2::timestamptz[]) WITH ORDINALITY AS i(at, ord)
               LEFT JOIN LATERAL (
                 SELECT r.totals -> (SELECT max(n) - 1 FROM generate_subscripts(r.ats, 1) AS n WHERE r.ats[n] <= i.at) AS total
                   FROM projected_shared_usage r WHERE r.key = $1 AND r.at <= i.at ORDER BY r.at DESC LIMIT 1) u ON true) AS totals,
            (SELECT jsonb_agg(jsonb_build_object('namespace', c.namespace, 'projected', coalesce(p.version, 0),
                      'next_at', (SELECT e.recorded_at FROM ledger_events e WHERE e.namespace = c.namespace AND e.version = coalesce(p.version, 0) + 1)))
               FROM (SELECT e.namespace FROM ledger_events e WHERE e.type = 'SharedQuotaApplied' AND e.data->>'key' = $1 AND e.recorded_at <= $3::timestamptz
                     UNION
                     SELECT z.namespace FROM ledger_horizon_states z WHERE z.state->'shared' @> jsonb_build_array(jsonb_build_object('key', $1::text))) AS c(namespace)
               JOIN namespace_heads h ON h.namespace = c.namespace
               LEFT JOIN projected_namespaces p ON p.namespace = c.namespace
              WHERE h.version > coalesce(p.version, 0)) AS lagging,
            EXISTS (SELECT 1 FROM projected_shared_unordered WHERE key = $1) AS unordered`,
    [key, instants, last],
  );
  return {
    totals: (row?.totals ?? instants.map(() => null)).map((total) => (total ? Resources.resourceList(total) : undefined)),
    lagging: (row?.lagging ?? []).map((l) => ({ namespace: l.namespace, projected: Number(l.projected), nextAt: l.next_at })),
    unordered: row?.unordered ?? false,
  };
}
