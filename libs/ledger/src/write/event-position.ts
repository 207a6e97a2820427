import { assert } from '@quota/domain';
import type { DataSource } from 'typeorm';
import type { RemoveResult } from '../ledger.types.js';

/**
 * An event already in the ledger, named by what a write that appended nothing points to: its
 * stream (a namespace, or a shared quota's key) and version, or the first event (Reserved or
 * Adopted) of a reservation.
 */
export type EventRef = { readonly stream: string; readonly version: number } | { readonly stream: string; readonly reservationId: string };

/**
 * The global position of an event already in the ledger: what an idempotent repeat or an
 * unchanged PUT tells its caller to read after (`?minPosition=`). One index probe on the
 * primary, after the write's transaction, and only for such writes. Undefined when the read
 * fails: the write itself is done, and an answer without a position costs its caller only a
 * read from the primary instead of the replica, where an error would have it repeat the write.
 */
export async function positionOf(dataSource: DataSource, ref: EventRef): Promise<string | undefined> {
  const query =
    'version' in ref
      ? {
          text: `SELECT position::text AS position FROM ledger_events WHERE namespace = $1 AND version = $2`,
          values: [ref.stream, ref.version],
        }
      : {
          text: `SELECT e.position::text AS position FROM reservations AS r
                   JOIN ledger_events AS e ON e.namespace = r.namespace AND e.version = r.event_versions[1]
                  WHERE r.namespace = $1 AND r.reservation_id = $2`,
          values: [ref.stream, ref.reservationId],
        };
  try {
    const rows: { position: string }[] = await dataSource.query(query.text, query.values);
    return rows[0]?.position;
  } catch {
    return undefined;
  }
}

/** A write's result as it is, or, when the write appended nothing, with the position of the event it points to. */
export async function pointing<R extends { readonly position?: string | undefined }>(
  dataSource: DataSource,
  result: R,
  ref: EventRef | undefined,
): Promise<R> {
  if (result.position !== undefined || ref === undefined) return result;
  const position = await positionOf(dataSource, ref);
  return position === undefined ? result : { ...result, position };
}

/** A delete's result: the decider removes an object only with an event, so it always has a position. */
export function removed<V>(view: V, position: string | undefined): RemoveResult<V> {
  assert(position !== undefined, 'a removal appended its event');
  return { view, position };
}
