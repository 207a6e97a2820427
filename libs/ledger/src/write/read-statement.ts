import { LIVE_PER_OBJECT_MAX } from '@quota/domain';
import type pg from 'pg';
import type { HeadJson } from '../head.js';
import type { AdmissionResult } from '../ledger.types.js';
import { RESERVATION_COLUMNS, type ReservationRow } from '../rows.js';
import type { SharedHeadRow } from '../shared-heads.js';

/**
 * The keyed reads of the write path, each one statement: what a group reads first (every
 * earlier answer and reservation its commands said they need, with their heads' versions), the
 * heads and the clock inside its transaction, and what a command may need later (needsOf). Every lookup is by key, one index probe per key; nothing
 * here scans a namespace's history, so the SERIALIZABLE transaction's predicate locks stay on
 * the few index pages those keys live on.
 */

export interface KeyedRead {
  readonly requestKeys: readonly string[];
  readonly reservationIds: readonly string[];
  readonly uids: readonly string[];
}

export interface ReadRow {
  readonly namespace: string;
  /** The head's version when these were read (null: no head), to tell whether they are still current. */
  readonly head_version: string | null;
  readonly decisions: { request_key: string; id: string; result: AdmissionResult; digest: string | null }[] | null;
  readonly reservations: ReservationRow[] | null;
}

/**
 * What several namespaces need, read by key in one statement: one row per namespace (in the
 * order given). Prepared once per connection (named), so PostgreSQL does not plan it per group.
 */
export function keyedRead(reads: readonly { readonly namespace: string; readonly read: KeyedRead }[]): pg.QueryConfig {
  const input = reads.map(({ namespace, read }, ord) => ({
    ord,
    ns: namespace,
    keys: read.requestKeys,
    uids: read.uids,
    ids: read.reservationIds,
  }));
  return { name: 'ledger_read', text: READ_SQL, values: [JSON.stringify(input)] };
}

// Every lookup is one index probe per key (LATERAL ... LIMIT), whatever the statistics say: a
// scan of a namespace's rows would grow with its history, and inside the SERIALIZABLE
// transaction it would leave a predicate lock on the whole relation.
const READ_SQL = `SELECT q.ns AS namespace, h.version::text AS head_version,
        (SELECT json_agg(json_build_object('request_key', d.request_key, 'id', d.id::text, 'result', d.result, 'digest', d.request_digest))
           FROM jsonb_array_elements_text(q.keys) AS k(key)
           CROSS JOIN LATERAL (SELECT * FROM admission_decisions d
                                WHERE d.namespace = q.ns AND d.request_key = k.key LIMIT 1) d) AS decisions,
        (SELECT json_agg(r) FROM (
           SELECT ${RESERVATION_COLUMNS} FROM jsonb_array_elements_text(q.ids) AS k(id)
             CROSS JOIN LATERAL (SELECT * FROM reservations t
                                  WHERE t.namespace = q.ns AND t.reservation_id = k.id LIMIT 1) t
           UNION ALL
           SELECT ${RESERVATION_COLUMNS} FROM jsonb_array_elements_text(q.uids) AS k(uid)
             CROSS JOIN LATERAL (SELECT * FROM reservations t
                                  WHERE t.namespace = q.ns AND t.object_uid = k.uid AND t.status <> 'released'
                                  ORDER BY t.version DESC LIMIT ${LIVE_PER_OBJECT_MAX}) t
           UNION ALL
           -- The live reservations of the same object as each reservation asked for by id:
           -- what its commit replaces or its release takes along, in this read.
           SELECT ${RESERVATION_COLUMNS} FROM jsonb_array_elements_text(q.ids) AS k(id)
             CROSS JOIN LATERAL (SELECT o.object_uid FROM reservations o
                                  WHERE o.namespace = q.ns AND o.reservation_id = k.id AND o.object_uid IS NOT NULL LIMIT 1) o
             CROSS JOIN LATERAL (SELECT * FROM reservations t
                                  WHERE t.namespace = q.ns AND t.object_uid = o.object_uid AND t.status <> 'released'
                                  ORDER BY t.version DESC LIMIT ${LIVE_PER_OBJECT_MAX}) t) r) AS reservations
       FROM jsonb_to_recordset($1::jsonb) AS q(ord int, ns text, keys jsonb, uids jsonb, ids jsonb)
       LEFT JOIN LATERAL (SELECT version FROM namespace_heads WHERE namespace = q.ns LIMIT 1) h ON true
      ORDER BY q.ord`;

export interface HeadRow {
  readonly now_ms: number;
  readonly heads: { namespace: string; version: string; state: HeadJson }[] | null;
  /** The heads of the shared quotas those namespaces are covered by, locked likewise. */
  readonly shared: SharedHeadRow[] | null;
}

/**
 * The first statement inside the group's SERIALIZABLE transaction: the clock, and the heads of
 * the group's namespaces by key, each locked (FOR NO KEY UPDATE, what the head's UPDATE takes
 * anyway) so that no other writer moves it before this transaction commits, and likewise the
 * heads of the shared quotas (ClusterResourceQuota, HierarchicalResourceQuota) those heads say
 * cover them. A head another writer holds is skipped (SKIP LOCKED), not waited for: its
 * namespace (or a namespace whose shared quota was skipped) is retried on its own and the rest
 * of the group goes on. (A head changed by a transaction that committed after this snapshot
 * began is a 40001, and the group is retried.)
 *
 * It also tells the planner, for this transaction only, to probe indexes rather than scan or
 * hash: the group's flush joins its jsonb row sets to the heads and reservations by key, and a
 * sequential scan there would take a predicate lock on the whole relation, so that every other
 * writer would conflict with it.
 */
export function lockedHeadRead(namespaces: readonly string[]): pg.QueryConfig {
  return {
    name: 'ledger_heads',
    text: `WITH h AS MATERIALIZED (
                  SELECT l.namespace, l.version, l.state FROM unnest($1::text[]) AS n(ns)
                   CROSS JOIN LATERAL (SELECT namespace, version, state FROM namespace_heads
                                        WHERE namespace = n.ns FOR NO KEY UPDATE SKIP LOCKED) l),
                s AS MATERIALIZED (
                  SELECT l.key, l.revision, l.version, l.state
                    FROM (SELECT DISTINCT q->>'key' AS key FROM h, jsonb_array_elements(h.state->'shared') AS q
                           WHERE jsonb_typeof(h.state->'shared') = 'array' ORDER BY 1) AS k
                   CROSS JOIN LATERAL (SELECT key, revision, version, state FROM shared_quota_heads
                                        WHERE key = k.key FOR NO KEY UPDATE SKIP LOCKED) l)
           SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms,
                  set_config('enable_seqscan', 'off', true) AS s, set_config('enable_hashjoin', 'off', true) AS hj,
                  set_config('enable_mergejoin', 'off', true) AS mj,
                  (SELECT json_agg(json_build_object('namespace', h.namespace, 'version', h.version::text, 'state', h.state)) FROM h) AS heads,
                  (SELECT json_agg(json_build_object('key', s.key, 'revision', s.revision::text, 'version', s.version::text, 'state', s.state)) FROM s) AS shared`,
    values: [namespaces],
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
