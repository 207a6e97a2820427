import { LIVE_PER_OBJECT_MAX } from '@quota/domain';
import type pg from 'pg';
import type { HeadJson } from './head.js';
import type { AdmissionResult } from './ledger.types.js';
import { RESERVATION_COLUMNS, type ReservationRow } from './rows.js';

/**
 * The keyed reads of the write path, each one statement: what a batch reads first (the head,
 * the clock, and every earlier answer and reservation its commands said they need), and what a
 * command may need later (needsOf). Every lookup is by key, one index probe per key; nothing
 * here scans a namespace's history, so the SERIALIZABLE transaction's predicate locks stay on
 * the few index pages those keys live on.
 */

export interface KeyedRead {
  readonly requestKeys: readonly string[];
  readonly reservationIds: readonly string[];
  readonly uids: readonly string[];
}

export interface ReadRow {
  /** The head's version when these were read (null: no head), to tell whether they are still current. */
  readonly head_version: string | null;
  readonly decisions: { request_key: string; id: string; result: AdmissionResult; digest: string | null }[] | null;
  readonly reservations: ReservationRow[] | null;
}

/** Prepared once per connection (named), so PostgreSQL does not plan it per batch. */
export function keyedRead(namespace: string, read: KeyedRead): pg.QueryConfig {
  return {
    name: 'ledger_read',
    text: READ_SQL,
    values: [namespace, read.requestKeys, read.uids, read.reservationIds],
  };
}

const READ_SQL = `SELECT h.version AS head_version,
        (SELECT json_agg(json_build_object('request_key', d.request_key, 'id', d.id::text, 'result', d.result, 'digest', d.request_digest))
           FROM unnest($2::text[]) AS k(key)
           CROSS JOIN LATERAL (SELECT * FROM admission_decisions d
                                WHERE d.namespace = $1 AND d.request_key = k.key LIMIT 1) d) AS decisions,
        (SELECT json_agg(r) FROM (
           -- One index lookup per key (LATERAL ... LIMIT), whatever the statistics say:
           -- a scan of the namespace's rows would grow with its history.
           SELECT ${RESERVATION_COLUMNS} FROM unnest($4::text[]) AS k(id)
             CROSS JOIN LATERAL (SELECT * FROM reservations t
                                  WHERE t.namespace = $1 AND t.reservation_id = k.id LIMIT 1) t
           UNION ALL
           SELECT ${RESERVATION_COLUMNS} FROM unnest($3::text[]) AS k(uid)
             CROSS JOIN LATERAL (SELECT * FROM reservations t
                                  WHERE t.namespace = $1 AND t.object_uid = k.uid AND t.status <> 'released'
                                  ORDER BY t.version DESC LIMIT ${LIVE_PER_OBJECT_MAX}) t
           UNION ALL
           -- The live reservations of the same object as each reservation asked for by id:
           -- what its commit replaces or its release takes along, in this read.
           SELECT ${RESERVATION_COLUMNS} FROM unnest($4::text[]) AS k(id)
             CROSS JOIN LATERAL (SELECT o.object_uid FROM reservations o
                                  WHERE o.namespace = $1 AND o.reservation_id = k.id AND o.object_uid IS NOT NULL LIMIT 1) o
             CROSS JOIN LATERAL (SELECT * FROM reservations t
                                  WHERE t.namespace = $1 AND t.object_uid = o.object_uid AND t.status <> 'released'
                                  ORDER BY t.version DESC LIMIT ${LIVE_PER_OBJECT_MAX}) t) r) AS reservations
       FROM (SELECT 1) AS one LEFT JOIN namespace_heads h ON h.namespace = $1`;

export interface HeadRow {
  readonly head_version: string | null;
  readonly head_state: HeadJson | null;
  readonly now_ms: number;
}

/** The head by key, and the clock: the first read inside the SERIALIZABLE transaction. */
export function headRead(namespace: string): pg.QueryConfig {
  return {
    name: 'ledger_head',
    text: `SELECT h.version AS head_version, h.state AS head_state, (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms
             FROM (SELECT 1) AS one LEFT JOIN namespace_heads h ON h.namespace = $1`,
    values: [namespace],
  };
}

/** Every live reservation of a namespace: what a quota definition recounts and a reconcile compares. */
export function allLiveRead(namespace: string): pg.QueryConfig {
  return { text: `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE namespace = $1 AND status <> 'released'`, values: [namespace] };
}

/** Of these object uids, those with a reservation released at or after `since` (epoch ms). */
export function releasedSinceRead(namespace: string, uids: readonly string[], since: number): pg.QueryConfig {
  return {
    text: `SELECT DISTINCT object_uid FROM reservations
            WHERE namespace = $1 AND object_uid = ANY($2::text[]) AND status = 'released' AND released_at >= to_timestamp($3 / 1000.0)`,
    values: [namespace, uids, since],
  };
}
