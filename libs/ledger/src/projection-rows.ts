import { evolve, initialState, type NamespaceState, type RawQuantities, type RecordedEvent, type Reservation } from '@quota/domain';
import type pg from 'pg';
import { headRestOf, reservationFromJson, stateOf, type HeadJson, type ReservationJson } from './head.js';
import { decodeEvent, type FoldRow } from './rows.js';

/**
 * The usage projection's rows as it reads them back (projection.ts): a namespace's projected
 * row, a live reservation's keys, a horizon state; and the states and reservations they make.
 */

/** A namespace as projected_namespaces and projected_definitions hold it (migrations/1795900000500). */
export interface NamespaceRow {
  namespace: string;
  version: string;
  /** Usage per quota (canonical), as of `version`. */
  used: Record<string, RawQuantities>;
  released_count: string;
  snapshot_version: string;
  /** The rest of the head (HeadRest), or null when it has none. */
  head_rest: HeadRest | null;
  /** The definitions (quotas without usage, limit ranges); written only when they change. */
  definitions: Definitions | null;
}

export type Definitions = Pick<HeadJson, 'limitRanges'> & { readonly quotas: readonly Omit<HeadJson['quotas'][number], 'used'>[] };

/**
 * What of the head the other columns do not hold (head.ts headRestOf): the fold needs the
 * Namespace object to take the namespace up again (a Namespace change needs the object it
 * changes), and usage at every version records the shared-quota contributions.
 */
export type HeadRest = ReturnType<typeof headRestOf>;

/**
 * A live reservation as projected_reservations keeps it: where its Reserved or Adopted event is,
 * when it was committed, and its Terminated event if it has one. When that event was archived
 * (`ledger:archive`), its columns are null and the reservation comes from the newest horizon
 * state that holds it (its state at the retention horizon).
 */
export interface ReservationKeyRow extends NullableFields<FoldRow> {
  readonly namespace: string;
  readonly reservation_id: string;
  readonly committed_at: string | null;
  readonly terminated_version: string | null;
  readonly terminated_schema_version: number | null;
  readonly terminated_data: unknown;
  readonly terminated_at_ms: number | null;
  readonly horizon_version: string | null;
  readonly horizon_reservation: ReservationJson | null;
}

export type NullableFields<T> = { readonly [K in keyof T]: T[K] | null };

/** The head a namespace's projected rows describe (its lastEventAt is not kept: the next event folded sets it). */
export function headJsonOf(head: NamespaceRow | undefined): HeadJson {
  const definitions = head?.definitions ?? { quotas: [], limitRanges: [] };
  return {
    quotas: definitions.quotas.map((q) => ({ ...q, used: head?.used[q.definition.name] ?? {} })),
    limitRanges: definitions.limitRanges,
    releasedCount: Number(head?.released_count ?? 0),
    ...head?.head_rest,
  };
}

/**
 * A live reservation from its Reserved or Adopted event and its commit instant, by the
 * domain's own fold (on a state without quotas, so nothing is counted).
 */
export function reservationOf(row: ReservationKeyRow): Reservation {
  let state: NamespaceState;
  if (row.version !== null && row.type !== null && row.schema_version !== null && row.at_ms !== null) {
    const event = decodeEvent({ version: row.version, type: row.type, schema_version: row.schema_version, data: row.data, at_ms: row.at_ms });
    state = evolve({ ...initialState(), version: event.version - 1 }, event);
  } else if (row.horizon_reservation !== null && row.horizon_version !== null) {
    state = stateOf(Number(row.horizon_version), EMPTY_HEAD, [reservationFromJson(row.horizon_reservation)]);
  } else {
    throw new Error(`projected reservation ${row.namespace}/${row.reservation_id}: its making event was archived and no horizon state holds it`);
  }
  if (row.committed_at !== null && state.reservations.get(row.reservation_id)?.committedAt === undefined) {
    state = evolve(state, { type: 'Committed', data: { reservationId: row.reservation_id }, version: state.version + 1, at: Number(row.committed_at) } as RecordedEvent);
  }
  // A Terminated event the archive took is in the horizon state's reservation already.
  if (row.terminated_version !== null && row.terminated_data !== null) {
    const terminated = decodeEvent({
      version: row.terminated_version,
      type: 'Terminated',
      schema_version: Number(row.terminated_schema_version),
      data: row.terminated_data,
      at_ms: Number(row.terminated_at_ms),
    });
    state = evolve(state, { ...terminated, version: state.version + 1 });
  }
  const reservation = state.reservations.get(row.reservation_id);
  if (!reservation) throw new Error(`projected reservation ${row.namespace}/${row.reservation_id} is not made by the event at version ${row.version}`);
  return reservation;
}

const EMPTY_HEAD: HeadJson = { quotas: [], limitRanges: [], releasedCount: 0 };

/**
 * Each namespace's newest horizon state (retention.ts), for namespaces the projection has no
 * row of: their events up to it were archived, so a projection rebuilt after `ledger:archive`
 * starts them there, not from the empty state.
 */
export async function horizonStarts(client: pg.PoolClient, namespaces: readonly string[]): Promise<Map<string, HorizonStart>> {
  const starts = new Map<string, HorizonStart>();
  if (namespaces.length === 0) return starts;
  const { rows } = await client.query<{ namespace: string; version: string; position: string; at_ms: number; state: HeadJson; reservations: ReservationJson[] | null }>(
    `SELECT DISTINCT ON (h.namespace) h.namespace, h.version::text AS version, h.position::text AS position,
            (extract(epoch from h.recorded_at) * 1000)::float8 AS at_ms, h.state, h.reservations
       FROM ledger_horizon_states h WHERE h.namespace = ANY($1::text[]) AND h.state IS NOT NULL
      ORDER BY h.namespace, h.version DESC`,
    [namespaces],
  );
  for (const row of rows) {
    starts.set(row.namespace, { state: stateOf(Number(row.version), row.state, (row.reservations ?? []).map(reservationFromJson)), position: row.position, atMs: row.at_ms });
  }
  return starts;
}

/** A horizon state, and where its last (archived) event was. */
export interface HorizonStart {
  readonly state: NamespaceState;
  readonly position: string;
  readonly atMs: number;
}
