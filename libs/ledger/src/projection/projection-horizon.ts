import { evolve, initialState, type NamespaceState, type RecordedEvent, type Reservation } from '@quota/domain';
import type pg from 'pg';
import { reservationFromJson, stateOf, type HeadJson, type ReservationJson } from '../head.js';
import { decodeEvent, type FoldRow } from '../rows.js';

/**
 * What the projection (projection.ts) reads from the horizon states (retention.ts) once
 * `ledger:archive` took the events: where a namespace's replay starts, and the live reservations
 * whose making event was archived. The archive archives a month whatever is still alive (every
 * real namespace holds long-lived objects), so those reservations are ordinary: the projection
 * reads each from its namespace's newest horizon state, where the fold left it.
 */

type NullableFields<T> = { readonly [K in keyof T]: T[K] | null };

/**
 * A live reservation as projected_reservations keeps it: where its Reserved or Adopted event is,
 * when it was committed, and its Terminated event if it has one. When that event was archived,
 * its columns are null and the reservation comes from the horizon state (horizonReservations).
 */
export interface ReservationKeyRow extends NullableFields<FoldRow> {
  readonly namespace: string;
  readonly reservation_id: string;
  readonly committed_at: string | null;
  readonly terminated_version: string | null;
  readonly terminated_schema_version: number | null;
  readonly terminated_data: unknown;
  readonly terminated_at_ms: number | null;
}

/** A reservation as a horizon state holds it, and that state's version. */
export interface HorizonReservation {
  readonly version: string;
  readonly reservation: ReservationJson;
}

const key = (namespace: string, id: string): string => `${namespace}\u0000${id}`;

/**
 * The reservations of `rows` whose making event was archived, from their namespace's newest
 * horizon state (by `namespace\0id`). That state holds every one of them: such a reservation was
 * made at or below the last archived version of its namespace, which is that state's, and is live
 * at the projected version, which the archive let reach at least that far; so it was live there.
 * One pass over one state per namespace, however many reservations are asked for.
 */
export async function horizonReservations(
  client: pg.PoolClient,
  rows: readonly ReservationKeyRow[],
): Promise<Map<string, HorizonReservation>> {
  const archived = rows.filter((row) => row.type === null);
  const found = new Map<string, HorizonReservation>();
  if (archived.length === 0) return found;
  const { rows: held } = await client.query<{ namespace: string; version: string; reservation: ReservationJson }>(
    `SELECT h.namespace, h.version::text AS version, x.value AS reservation
       FROM (SELECT DISTINCT ON (z.namespace) z.namespace, z.version, z.reservations FROM ledger_horizon_states z
              WHERE z.namespace = ANY($1::text[]) AND z.state IS NOT NULL ORDER BY z.namespace, z.version DESC) h
       CROSS JOIN LATERAL jsonb_array_elements(h.reservations) AS x(value)
      WHERE x.value->>'id' = ANY($2::text[])`,
    [[...new Set(archived.map((row) => row.namespace))], [...new Set(archived.map((row) => row.reservation_id))]],
  );
  for (const row of held) found.set(key(row.namespace, row.reservation.id), { version: row.version, reservation: row.reservation });
  return found;
}

/**
 * A live reservation from its Reserved or Adopted event (or, that event archived, from the horizon
 * state) and its commit instant, by the domain's own fold (on a state without quotas, so nothing
 * is counted).
 */
export function reservationOf(row: ReservationKeyRow, horizon: ReadonlyMap<string, HorizonReservation>): Reservation {
  let state: NamespaceState;
  const held = horizon.get(key(row.namespace, row.reservation_id));
  if (row.version !== null && row.type !== null && row.schema_version !== null && row.at_ms !== null) {
    const event = decodeEvent({
      version: row.version,
      type: row.type,
      schema_version: row.schema_version,
      data: row.data,
      at_ms: row.at_ms,
    });
    state = evolve({ ...initialState(), version: event.version - 1 }, event);
  } else if (held) {
    state = stateOf(Number(held.version), EMPTY_HEAD, [reservationFromJson(held.reservation)]);
  } else {
    throw new Error(
      `projected reservation ${row.namespace}/${row.reservation_id}: its making event was archived and no horizon state holds it`,
    );
  }
  if (row.committed_at !== null && state.reservations.get(row.reservation_id)?.committedAt === undefined) {
    state = evolve(state, {
      type: 'Committed',
      data: { reservationId: row.reservation_id },
      version: state.version + 1,
      at: Number(row.committed_at),
    } as RecordedEvent);
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
  if (!reservation)
    throw new Error(`projected reservation ${row.namespace}/${row.reservation_id} is not made by the event at version ${row.version}`);
  return reservation;
}

const EMPTY_HEAD: HeadJson = { quotas: [], limitRanges: [], releasedCount: 0 };

/** A horizon state, and where its last (archived) event was. */
export interface HorizonStart {
  readonly state: NamespaceState;
  readonly position: string;
  readonly atMs: number;
}

/**
 * Each namespace's newest horizon state (retention.ts), for namespaces the projection has no
 * row of: their events up to it were archived, so a projection rebuilt after `ledger:archive`
 * starts them there, not from the empty state.
 */
export async function horizonStarts(client: pg.PoolClient, namespaces: readonly string[]): Promise<Map<string, HorizonStart>> {
  const starts = new Map<string, HorizonStart>();
  if (namespaces.length === 0) return starts;
  const { rows } = await client.query<{
    namespace: string;
    version: string;
    position: string;
    at_ms: number;
    state: HeadJson;
    reservations: ReservationJson[] | null;
  }>(
    `SELECT DISTINCT ON (h.namespace) h.namespace, h.version::text AS version, h.position::text AS position,
            (extract(epoch from h.recorded_at) * 1000)::float8 AS at_ms, h.state, h.reservations
       FROM ledger_horizon_states h WHERE h.namespace = ANY($1::text[]) AND h.state IS NOT NULL
      ORDER BY h.namespace, h.version DESC`,
    [namespaces],
  );
  for (const row of rows) {
    starts.set(row.namespace, {
      state: stateOf(Number(row.version), row.state, (row.reservations ?? []).map(reservationFromJson)),
      position: row.position,
      atMs: row.at_ms,
    });
  }
  return starts;
}
