import { reservationsNeededBy, type NamespaceState, type Reservation } from '@quota/domain';
import type pg from 'pg';
import type { FeedRow } from './projection-feed.js';
import { horizonReservations, reservationOf, type ReservationKeyRow } from './projection-horizon.js';
import type { NamespaceRow } from './projection-rows.js';

/** What a step of the projection (projection.ts) reads of the live reservations before it folds. */

/**
 * The live reservations each namespace's events need (reservationsNeededBy): all of them
 * where a quota is (re)defined (usage is recounted) or a snapshot is due, else only those
 * the events name. Each is its Reserved or Adopted event folded again, then committed at
 * its recorded instant if it was. A snapshot is due `snapshotEvery` events after the last one.
 */
export async function loadReservations(
  client: pg.PoolClient,
  byNamespace: ReadonlyMap<string, readonly FeedRow[]>,
  heads: ReadonlyMap<string, NamespaceRow>,
  cached: ReadonlyMap<string, NamespaceState>,
  snapshotEvery: number,
): Promise<{ loaded: Map<string, Reservation[]>; wantsAll: Set<string> }> {
  const wantsAll = new Set<string>();
  const toLoad = new Set<string>();
  const needKeys: { ns: string[]; id: string[] } = { ns: [], id: [] };
  for (const [namespace, events] of byNamespace) {
    const lastVersion = Number(events.at(-1)?.version ?? 0);
    const snapshotDue = lastVersion - Number(heads.get(namespace)?.snapshot_version ?? 0) >= snapshotEvery;
    if (snapshotDue || events.some((e) => reservationsNeededBy(e.type) === 'all')) {
      wantsAll.add(namespace);
      if (!cached.has(namespace)) toLoad.add(namespace);
      continue;
    }
    // A remembered state holds every live reservation already.
    if (cached.has(namespace)) continue;
    // Each older reservation once: one made earlier in the same batch is in the fold's state by then.
    const known = new Set<string>();
    for (const event of events) {
      const id = (event.data as { reservationId?: string }).reservationId;
      if (id === undefined || known.has(id)) continue;
      known.add(id);
      if (reservationsNeededBy(event.type) === 'named') {
        needKeys.ns.push(namespace);
        needKeys.id.push(id);
      }
    }
  }
  const loaded = new Map<string, Reservation[]>();
  const addLoaded = async (list: readonly ReservationKeyRow[]): Promise<void> => {
    // Those made by an event the archive took: as the newest horizon state holds them.
    const horizon = await horizonReservations(client, list);
    for (const row of list) {
      const reservation = reservationOf(row, horizon);
      const entries = loaded.get(row.namespace);
      if (entries) entries.push(reservation);
      else loaded.set(row.namespace, [reservation]);
    }
  };
  const columns = `r.namespace, r.reservation_id, r.committed_at::text AS committed_at, e.version::text AS version, e.type, e.schema_version, e.data,
                   (extract(epoch from e.recorded_at) * 1000)::float8 AS at_ms, r.terminated_version::text AS terminated_version,
                   t.schema_version AS terminated_schema_version, t.data AS terminated_data, (extract(epoch from t.recorded_at) * 1000)::float8 AS terminated_at_ms`;
  const made = `LEFT JOIN ledger_events e ON e.namespace = r.namespace AND e.version = r.version`;
  const terminated = `LEFT JOIN ledger_events t ON r.terminated_version IS NOT NULL AND t.namespace = r.namespace AND t.version = r.terminated_version`;
  if (toLoad.size > 0) {
    const { rows } = await client.query<ReservationKeyRow>(
      `SELECT ${columns} FROM projected_reservations r ${made} ${terminated}
        WHERE r.namespace = ANY($1::text[])`,
      [[...toLoad]],
    );
    await addLoaded(rows);
  }
  if (needKeys.ns.length > 0) {
    const { rows } = await client.query<ReservationKeyRow>(
      `SELECT ${columns} FROM projected_reservations r
         JOIN unnest($1::text[], $2::text[]) AS k(ns, id) ON r.namespace = k.ns AND r.reservation_id = k.id
         ${made} ${terminated}`,
      [needKeys.ns, needKeys.id],
    );
    await addLoaded(rows);
  }
  return { loaded, wantsAll };
}
