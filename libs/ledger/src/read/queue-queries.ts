import type { NamespaceQueue, QueuedReservation, SharedQuotaQueue } from '@quota/api';
import {
  fairShareOrder,
  fairShareWeight,
  queueOrder,
  Resources,
  sharedChargesOf,
  waitEstimate,
  type PastWait,
  type Waiter,
} from '@quota/domain';
import type { DataSource } from 'typeorm';
import { stateOf, waiterFromJson, type HeadJson, type WaiterJson } from '../head.js';
import { select } from '../sql.js';

/**
 * The reservation queue as the API reads it: the waiters are the namespace head's
 * (the fold of its Queued, AdmittedFromQueue, Cancelled and Expired events, written in the same
 * transaction as them), so a read never lags a write; a waiter that ended without admission is
 * found by its Cancelled or Expired event.
 */
/** The events of a namespace's stream the wait estimates read at most (its newest). */
export const PAST_WAITS_EVENTS = 10_000;

export class QueueQueries {
  constructor(private readonly dataSource: DataSource) {}

  /** The namespace's waiters in queue order (empty when none, or no such namespace). */
  async queue(namespace: string): Promise<NamespaceQueue> {
    const rows = await select<{ queue: WaiterJson[] | null }>(
      this.dataSource,
      `SELECT state->'queue' AS queue FROM namespace_heads WHERE namespace = $1`,
      [namespace],
    );
    const waiters = new Map((rows[0]?.queue ?? []).map((j) => [j.id, waiterFromJson(j)]));
    return { namespace, items: queueOrder(waiters).map((w, i) => viewOf(namespace, w, { state: 'queued', position: i + 1 })) };
  }

  /**
   * The namespace's queue as `GET …/queue` lists it: each waiter with the wait to expect
   * (waitEstimate) from the namespace's past waits (pastWaits), when there are enough like it.
   */
  async queueWithEstimates(namespace: string): Promise<NamespaceQueue> {
    const queue = await this.queue(namespace);
    if (queue.items.length === 0) return queue;
    const past = await this.pastWaits(namespace);
    const items = queue.items.map((item) => {
      const estimate = waitEstimate(Resources.resourceList(item.resources), past);
      return estimate ? { ...item, estimate } : item;
    });
    return { ...queue, items };
  }

  /**
   * How long the namespace's waiters admitted from its queue waited, newest first: each
   * AdmittedFromQueue paired with its Queued, among the namespace's last PAST_WAITS_EVENTS events
   * (a bounded read of its stream, whatever its length).
   */
  async pastWaits(namespace: string): Promise<PastWait[]> {
    const rows = await select<{ resources: Record<string, string> | null; waited_ms: string }>(
      this.dataSource,
      `WITH recent AS (
         SELECT type, recorded_at, data FROM ledger_events WHERE namespace = $1 ORDER BY version DESC LIMIT $2
       )
       SELECT q.data->'resources' AS resources, (extract(epoch FROM a.recorded_at - q.recorded_at) * 1000)::bigint::text AS waited_ms
         FROM recent a JOIN recent q ON q.type = 'Queued' AND q.data->>'reservationId' = a.data->>'reservationId'
        WHERE a.type = 'AdmittedFromQueue'
        ORDER BY a.recorded_at DESC`,
      [namespace, PAST_WAITS_EVENTS],
    );
    return rows.map((r) => ({ resources: Resources.resourceList(r.resources ?? {}), waitedMs: Number(r.waited_ms) }));
  }

  /** The waiters charged to a shared quota, per waiting namespace, in the order its fair drain serves the namespaces. */
  async sharedQueue(key: string): Promise<SharedQuotaQueue> {
    const rows = await select<{ namespace: string; version: string; state: HeadJson }>(
      this.dataSource,
      `SELECT namespace, version::text, state FROM namespace_heads WHERE namespace = ANY($1::text[]) ORDER BY namespace`,
      [await waitingUnder(this.dataSource, key)],
    );
    const waiting = rows.map((row) => {
      const state = stateOf(Number(row.version), row.state);
      const items = queueOrder(state.queue)
        .map((w, i) => ({ w, position: i + 1 }))
        .filter(({ w }) => sharedChargesOf(state, w.resources).includes(key))
        .map(({ w, position }) => viewOf(row.namespace, w, { state: 'queued', position }));
      return {
        namespace: row.namespace,
        weight: fairShareWeight(state.object?.definition.metadata),
        used: state.sharedUsed.get(key) ?? Resources.EMPTY,
        hard: state.shared.get(key)?.hard,
        items,
        priority: items[0]?.priority ?? 0,
      };
    });
    const hard = waiting.find((w) => w.hard)?.hard ?? Resources.EMPTY;
    const order = fairShareOrder(waiting, hard).map((c) => c.namespace);
    const byName = new Map(waiting.map((w) => [w.namespace, w]));
    const namespaces = order.flatMap((name) => {
      const w = byName.get(name);
      return w && w.items.length > 0
        ? [{ namespace: w.namespace, weight: w.weight, used: Resources.canonicalResourceList(w.used), items: w.items }]
        : [];
    });
    return { key, namespaces };
  }

  /** The ids waiting in each of these namespaces' queues now: one read for every `?watch=true` of a process (a namespace without a head or a queue maps to none). */
  async waitingIds(namespaces: readonly string[]): Promise<Map<string, Set<string>>> {
    const rows = await select<{ namespace: string; ids: string[] }>(
      this.dataSource,
      `SELECT namespace, ARRAY(SELECT q->>'id' FROM jsonb_array_elements(COALESCE(state->'queue', '[]'::jsonb)) AS q) AS ids
         FROM namespace_heads WHERE namespace = ANY($1::text[])`,
      [namespaces],
    );
    return new Map(rows.map((row) => [row.namespace, new Set(row.ids)]));
  }

  /** A reservation as the queue knows it: waiting now, or cancelled or expired; undefined when it never waited (or was admitted). */
  async reservation(namespace: string, id: string): Promise<QueuedReservation | undefined> {
    return (await this.waiting(namespace, id)) ?? (await this.ended(namespace, id));
  }

  /** A reservation waiting in the queue now (one read of the head). */
  async waiting(namespace: string, id: string): Promise<QueuedReservation | undefined> {
    return (await this.queue(namespace)).items.find((item) => item.id === id);
  }

  /** A reservation that waited and was cancelled or expired, from its events; undefined otherwise. */
  async ended(namespace: string, id: string): Promise<QueuedReservation | undefined> {
    const events = await select<{ type: string; version: string; data: Record<string, unknown>; at: string }>(
      this.dataSource,
      `SELECT type, version::text, data, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at FROM ledger_events
        WHERE namespace = $1 AND type IN ('Queued', 'AdmittedFromQueue', 'Cancelled', 'Expired') AND data->>'reservationId' = $2 ORDER BY version`,
      [namespace, id],
    );
    const queued = events.find((e) => e.type === 'Queued');
    const ended = events.find((e) => e.type === 'Cancelled' || e.type === 'Expired');
    if (!queued || !ended) return undefined;
    const data = queued.data as unknown as WaiterEventData;
    const waiter: Waiter = {
      id,
      object: data.object,
      resources: Resources.resourceList(data.resources),
      priority: data.priority,
      version: Number(queued.version),
      queuedAt: Date.parse(queued.at),
      deadline: Date.parse(data.deadline),
      passed: 0,
      waitingFor: data.waitingFor,
    };
    const reason = typeof ended.data['reason'] === 'string' ? ended.data['reason'] : undefined;
    return viewOf(namespace, waiter, {
      state: ended.type === 'Cancelled' ? 'cancelled' : 'expired',
      endedAt: ended.at,
      ...(reason ? { reason } : {}),
    });
  }

  /**
   * The shared quotas (keys) covering a namespace that has waiters, each with a revision that moves
   * with every change of the quota's head (its use, members, spec) or of a waiting namespace's (a
   * raised local hard, a waiter more or less): the sweep drains those whose revision moved since it
   * last looked.
   */
  async sharedKeysWithWaiters(limit: number): Promise<{ key: string; revision: string }[]> {
    return select<{ key: string; revision: string }>(
      this.dataSource,
      `SELECT k.key, coalesce(h.revision::text, '') || ':' || k.versions AS revision
         FROM (SELECT q->>'key' AS key, sum(n.version)::text AS versions FROM namespace_heads n, jsonb_array_elements(n.state->'shared') AS q
                WHERE n.queued AND jsonb_typeof(n.state->'shared') = 'array' GROUP BY 1) k
         LEFT JOIN shared_quota_heads h ON h.key = k.key ORDER BY k.key LIMIT $1`,
      [limit],
    );
  }

  /** Reservations queued in all namespaces together. */
  total(): Promise<number> {
    return queuedTotal(this.dataSource);
  }

  /**
   * Namespaces with a waiter whose deadline has passed, at most `limit` (the sweep's work list:
   * their SweepQueue appends its Expired). Room freed in a namespace is drained by the write that
   * freed it, in whichever process, so only deadlines need a sweep.
   */
  async namespacesWithExpiredWaiters(nowMs: number, limit: number): Promise<string[]> {
    const rows = await select<{ namespace: string }>(
      this.dataSource,
      `SELECT namespace FROM namespace_heads WHERE queued
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(state->'queue') AS w WHERE (w->>'deadline')::float8 <= $1)
        ORDER BY namespace LIMIT $2`,
      [nowMs, limit],
    );
    return rows.map((r) => r.namespace);
  }
}

interface WaiterEventData {
  readonly object: Waiter['object'];
  readonly resources: Record<string, string>;
  readonly priority: number;
  readonly deadline: string;
  readonly waitingFor: Waiter['waitingFor'];
}

const iso = (ms: number): string => new Date(ms).toISOString();

function viewOf(
  namespace: string,
  w: Waiter,
  rest: Pick<QueuedReservation, 'state'> & Partial<Pick<QueuedReservation, 'position' | 'endedAt' | 'reason'>>,
): QueuedReservation {
  return {
    id: w.id,
    namespace,
    ...rest,
    priority: w.priority,
    resources: Resources.canonicalResourceList(w.resources),
    object: w.object,
    waitingFor: w.waitingFor,
    queuedAt: iso(w.queuedAt),
    expiresAt: iso(w.deadline),
    passed: w.passed,
  };
}

/** Reservations queued in all namespaces together (the QUEUE_TOTAL_MAX bound, read before the transaction): the queued heads only (1795900001300). */
export async function queuedTotal(dataSource: DataSource): Promise<number> {
  const rows = await select<{ n: number }>(
    dataSource,
    `SELECT coalesce(sum(jsonb_array_length(state->'queue')), 0)::int AS n FROM namespace_heads WHERE queued`,
  );
  return rows[0]?.n ?? 0;
}

/** The namespaces with waiters that shared quota `key` covers (read before a fair drain's transaction, which locks them). */
export async function waitingUnder(dataSource: DataSource, key: string): Promise<string[]> {
  const rows = await select<{ namespace: string }>(
    dataSource,
    `SELECT namespace FROM namespace_heads WHERE queued AND jsonb_typeof(state->'shared') = 'array' AND state->'shared' @> jsonb_build_array(jsonb_build_object('key', $1::text)) ORDER BY namespace`,
    [key],
  );
  return rows.map((r) => r.namespace);
}
