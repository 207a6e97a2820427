import type pg from 'pg';
import type { NamespaceDefinition, NamespaceLabels, SharedQuotaDefinition } from '@quota/domain';
import type { HeadJson } from '../head.js';
import { SharedHeads, type SharedHeadRow } from '../shared-heads.js';

/**
 * The heads ClusterWriter reads and locks, in the order every multi-head writer takes them
 * (namespaces by name, then shared quotas by key), and the labels and shared quotas a
 * namespace's labels are matched against.
 */

export interface LockedHead {
  readonly namespace: string;
  readonly version: string;
  readonly state: HeadJson;
}

/** Every shared quota defined now: what a namespace's labels are matched against. */
export const LIVE_SHARED_QUOTAS = `SELECT state->'definition' AS definition FROM shared_quota_heads WHERE jsonb_typeof(state->'definition') = 'object' ORDER BY key`;

export async function liveSharedQuotas(client: pg.ClientBase): Promise<SharedQuotaDefinition[]> {
  const { rows } = await client.query<{ definition: SharedQuotaDefinition }>(LIVE_SHARED_QUOTAS);
  return rows.map((r) => r.definition);
}

/** Every namespace the ledger knows: its Namespace object and the shared quotas covering it. */
export async function namespaceLabels(client: pg.ClientBase): Promise<NamespaceLabels[]> {
  const { rows } = await client.query<{ namespace: string; object: NamespaceDefinition | null; shared: string[] | null }>(
    `SELECT namespace, state->'object'->'definition' AS object,
            (SELECT json_agg(q->>'key') FROM jsonb_array_elements(CASE WHEN jsonb_typeof(state->'shared') = 'array' THEN state->'shared' ELSE '[]'::jsonb END) AS q) AS shared
       FROM namespace_heads ORDER BY namespace`,
  );
  return rows.map((r) => ({ namespace: r.namespace, object: r.object ?? undefined, shared: r.shared ?? [] }));
}

export async function readSharedHead(client: pg.ClientBase, key: string): Promise<SharedHeadRow | undefined> {
  const { rows } = await client.query<SharedHeadRow>(
    `SELECT key, revision::text AS revision, version::text AS version, state FROM shared_quota_heads WHERE key = $1`,
    [key],
  );
  return rows[0];
}

/** Locks the heads of these namespaces, in name order (the order every multi-head writer takes). */
export async function lockNamespaceHeads(client: pg.ClientBase, namespaces: readonly string[]): Promise<Map<string, LockedHead>> {
  if (namespaces.length === 0) return new Map();
  const { rows } = await client.query<LockedHead>(
    `SELECT namespace, version::text AS version, state FROM namespace_heads WHERE namespace = ANY($1::text[]) ORDER BY namespace FOR NO KEY UPDATE`,
    [[...new Set(namespaces)].sort()],
  );
  return new Map(rows.map((r) => [r.namespace, r]));
}

/** Locks the heads of these shared quotas, in key order, after the namespaces'. */
export async function lockSharedHeads(client: pg.ClientBase, keys: readonly string[]): Promise<SharedHeads> {
  if (keys.length === 0) return new SharedHeads();
  const { rows } = await client.query<SharedHeadRow>(
    `SELECT key, revision::text AS revision, version::text AS version, state FROM shared_quota_heads WHERE key = ANY($1::text[]) ORDER BY key FOR NO KEY UPDATE`,
    [[...new Set(keys)].sort()],
  );
  return new SharedHeads(rows);
}
