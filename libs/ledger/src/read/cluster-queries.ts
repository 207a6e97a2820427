import type { SharedQuotaRef } from '@quota/domain';
import type { DataSource } from 'typeorm';
import { namespaceViewOf, sharedQuotaViewOf, type NamespaceView, type SharedQuotaView } from './cluster-views.js';
import { stateOf, type HeadJson } from '../head.js';
import type { SharedHeadJson } from '../shared-heads.js';
import { select } from '../sql.js';

/**
 * Namespaces as objects and the quotas over several namespaces, as their heads hold
 * them now: what the admin API shows (the history is in DefinitionQueries).
 */
export class ClusterQueries {
  constructor(private readonly dataSource: DataSource) {}

  async getNamespace(name: string): Promise<NamespaceView | undefined> {
    const rows = await select<{ version: string; state: HeadJson }>(
      this.dataSource,
      `SELECT version, state FROM namespace_heads WHERE namespace = $1`,
      [name],
    );
    const row = rows[0];
    return row ? namespaceViewOf(name, stateOf(Number(row.version), row.state)) : undefined;
  }

  /** Every recorded Namespace object's name, labels and annotations, in name order. */
  async namespaceObjects(): Promise<{ name: string; labels?: Record<string, string>; annotations?: Record<string, string> }[]> {
    const rows = await select<{
      namespace: string;
      metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } | null;
    }>(
      this.dataSource,
      `SELECT namespace, state->'object'->'definition'->'metadata' AS metadata FROM namespace_heads
        WHERE jsonb_typeof(state->'object') = 'object' ORDER BY namespace`,
      [],
    );
    return rows.map((r) => ({
      name: r.namespace,
      ...(r.metadata?.labels ? { labels: r.metadata.labels } : {}),
      ...(r.metadata?.annotations ? { annotations: r.metadata.annotations } : {}),
    }));
  }

  async getSharedQuota(key: string): Promise<SharedQuotaView | undefined> {
    const rows = await select<{ version: string; state: SharedHeadJson }>(
      this.dataSource,
      `SELECT version, state FROM shared_quota_heads WHERE key = $1`,
      [key],
    );
    const row = rows[0];
    return row ? sharedQuotaViewOf(key, Number(row.version), row.state) : undefined;
  }

  /** The shared quotas whose key starts with `prefix` (a kind, or a kind and a namespace), in key order, at most `limit`. */
  async listSharedQuotas(prefix: string, limit: number): Promise<SharedQuotaView[]> {
    const rows = await select<{ key: string; version: string; state: SharedHeadJson }>(
      this.dataSource,
      `SELECT key, version, state FROM shared_quota_heads
        WHERE key >= $1 AND key < $1 || chr(1114111) AND jsonb_typeof(state->'definition') = 'object' ORDER BY key LIMIT $2`,
      [prefix, limit],
    );
    return rows.flatMap((r) => sharedQuotaViewOf(r.key, Number(r.version), r.state) ?? []);
  }

  /**
   * How many shared quotas of each kind are used above hard now (a namespace relabelled in brought
   * its usage, or a limit was lowered): the metric's reading. Every defined head is read, so it is
   * meant for a scrape, not for a request.
   */
  async sharedQuotasOverHard(): Promise<Record<SharedQuotaRef['kind'], number>> {
    const rows = await select<{ key: string; version: string; state: SharedHeadJson }>(
      this.dataSource,
      `SELECT key, version, state FROM shared_quota_heads WHERE jsonb_typeof(state->'definition') = 'object'`,
      [],
    );
    const counts: Record<SharedQuotaRef['kind'], number> = { ClusterResourceQuota: 0, HierarchicalResourceQuota: 0 };
    for (const row of rows) {
      const view = sharedQuotaViewOf(row.key, Number(row.version), row.state);
      if (view && view.overHard.length > 0) counts[view.definition.ref.kind]++;
    }
    return counts;
  }

  /** The shared quotas covering a namespace now (its head says which), with their usage. */
  async coveringNamespace(namespace: string): Promise<SharedQuotaView[]> {
    const rows = await select<{ key: string; version: string; state: SharedHeadJson }>(
      this.dataSource,
      `SELECT s.key, s.version, s.state FROM namespace_heads h
         CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(h.state->'shared') = 'array' THEN h.state->'shared' ELSE '[]'::jsonb END) AS q
         JOIN shared_quota_heads s ON s.key = q->>'key'
        WHERE h.namespace = $1 ORDER BY s.key`,
      [namespace],
    );
    return rows.flatMap((r) => sharedQuotaViewOf(r.key, Number(r.version), r.state) ?? []);
  }
}
