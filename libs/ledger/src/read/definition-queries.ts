import { LEGACY_OBJECT_COUNT_ALIASES, MANAGED_BY_ANNOTATION, type LimitRange } from '@quota/domain';
import type { DataSource } from 'typeorm';
import type { HeadJson } from '../head.js';
import type { DefinitionChange, LimitRangeView, Page, QuotaView } from '../ledger.types.js';
import { byteBoundedSql, HISTORY_PAGE_MAX_BYTES, pageCutShort, type ByteBoundedColumns } from './byte-bounded.js';
import { EVENT_COLUMNS, type EventRow } from '../rows.js';
import { select } from '../sql.js';
import { changedKeys, eventView, limitRangeViewOfHead, quotaViewOfHead } from './views.js';

/**
 * The definitions a namespace holds now (from its head row, by key) and how they came to be
 * (their events): what the admin API and the mutating webhook read.
 */
export class DefinitionQueries {
  constructor(private readonly dataSource: DataSource) {}

  async getQuota(namespace: string, name: string): Promise<QuotaView | undefined> {
    return (await this.listQuotas(namespace)).find((q) => q.definition.name === name);
  }

  async listQuotas(namespace: string): Promise<QuotaView[]> {
    const head = await this.head(namespace);
    return (head?.state.quotas ?? []).map((q) => quotaViewOfHead(namespace, q));
  }

  async getLimitRange(namespace: string, name: string): Promise<LimitRangeView | undefined> {
    return (await this.listLimitRanges(namespace)).find((lr) => lr.definition.name === name);
  }

  async listLimitRanges(namespace: string): Promise<LimitRangeView[]> {
    const head = await this.head(namespace);
    return (head?.state.limitRanges ?? []).map((lr) => limitRangeViewOfHead(namespace, lr));
  }

  /** The namespace's LimitRanges as Kubernetes objects (for the mutating webhook). */
  async limitRanges(namespace: string): Promise<LimitRange[]> {
    const head = await this.head(namespace);
    return (head?.state.limitRanges ?? []).map((lr) => ({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: lr.definition.name, namespace },
      spec: lr.definition.spec,
    }));
  }

  /** The namespace has a stream (a quota or limit range was defined there, ever). */
  async namespaceExists(namespace: string): Promise<boolean> {
    return (await this.head(namespace)) !== undefined;
  }

  /**
   * Whether the namespace has something to reconcile: a stream that is more than its Namespace
   * object (a quota, LimitRange or shared quota covers it). One key lookup: the reconciler asks it
   * before listing a namespace on a watch event (an unmanaged namespace's listing would change nothing).
   */
  async namespaceManaged(namespace: string): Promise<boolean> {
    const rows = await select<{ one: number }>(
      this.dataSource,
      `SELECT 1 AS one FROM namespace_heads WHERE namespace = $1 AND (state->'objectOnly') IS DISTINCT FROM 'true'::jsonb`,
      [namespace],
    );
    return rows.length > 0;
  }

  /** Every namespace namespaceManaged says yes to, at once (the reconciler's pass over the managed labels). */
  async managedNamespaces(): Promise<Set<string>> {
    const rows = await select<{ namespace: string }>(
      this.dataSource,
      `SELECT namespace FROM namespace_heads WHERE (state->'objectOnly') IS DISTINCT FROM 'true'::jsonb`,
    );
    return new Set(rows.map((r) => r.namespace));
  }

  /** Whether the namespace awaits its first count (CountAwaited, not yet Counted): one key lookup, before its listing. */
  async awaitingFirstCount(namespace: string): Promise<boolean> {
    const rows = await select<{ one: number }>(
      this.dataSource,
      `SELECT 1 AS one FROM namespace_heads WHERE namespace = $1 AND state ? 'awaitingCountSince'`,
      [namespace],
    );
    return rows.length > 0;
  }

  /**
   * Every quota or LimitRange, in every namespace, whose definition carries
   * quota-ledger.io/managed-by: `managedBy` (the reconciler's sync finds those whose cluster object
   * is gone). One read of the heads, not one per namespace: 10,000 namespaces took 10,000 reads.
   * Given `namespace`, only that namespace's (one head: a deletion's check).
   */
  async managedDefinitions(
    kind: 'quotas' | 'limitRanges',
    managedBy: string,
    namespace?: string,
  ): Promise<{ namespace: string; name: string }[]> {
    const where = namespace === undefined ? '' : 'h.namespace = $4 AND ';
    return select<{ namespace: string; name: string }>(
      this.dataSource,
      `SELECT h.namespace, d->'definition'->>'name' AS name
         FROM namespace_heads h CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(h.state->$1) = 'array' THEN h.state->$1 ELSE '[]'::jsonb END) AS d
        WHERE ${where}d->'definition'->'metadata'->'annotations'->>$3 = $2
        ORDER BY 1, 2`,
      namespace === undefined ? [kind, managedBy, MANAGED_BY_ANNOTATION] : [kind, managedBy, MANAGED_BY_ANNOTATION, namespace],
    );
  }

  /**
   * The object counts quotas name (their `count/…` and legacy bare hard keys) with how many quotas
   * name each: every namespace's quotas and every shared quota, in one read of the heads (the
   * reconciler checks them against the webhooks' rules).
   */
  async countedResources(): Promise<Map<string, number>> {
    const array = (json: string) => `CASE WHEN jsonb_typeof(${json}) = 'array' THEN ${json} ELSE '[]'::jsonb END`;
    const keys = (hard: string) => `jsonb_object_keys(CASE WHEN jsonb_typeof(${hard}) = 'object' THEN ${hard} ELSE '{}'::jsonb END)`;
    const rows = await select<{ name: string; quotas: number }>(
      this.dataSource,
      `SELECT name, count(*)::int AS quotas FROM (
         SELECT ${keys("q->'definition'->'spec'->'hard'")} AS name
           FROM namespace_heads h CROSS JOIN LATERAL jsonb_array_elements(${array("h.state->'quotas'")}) AS q
         UNION ALL
         SELECT ${keys("s.state->'definition'->'spec'->'hard'")} FROM shared_quota_heads s
       ) named
       WHERE name LIKE 'count/%' OR name = ANY($1)
       GROUP BY name ORDER BY name`,
      [Object.keys(LEGACY_OBJECT_COUNT_ALIASES)],
    );
    return new Map(rows.map((r) => [r.name, r.quotas]));
  }

  /** Namespaces with a stream, in name order, paged (the reconciler's fan-out). */
  async namespaces(page: { readonly after?: string; readonly limit: number }): Promise<string[]> {
    // A namespace the ledger holds only the Namespace object of (recorded from the cluster, no
    // quota covers it) has no reservations to reconcile.
    const rows = await select<{ namespace: string }>(
      this.dataSource,
      `SELECT namespace FROM namespace_heads WHERE namespace > $1 AND (state->'objectOnly') IS DISTINCT FROM 'true'::jsonb ORDER BY namespace LIMIT $2`,
      [page.after ?? '', page.limit],
    );
    return rows.map((row) => row.namespace);
  }

  /**
   * Every change of one ResourceQuota's or LimitRange's definition, oldest first: who, when,
   * and the definition before and after. Undefined when that name never existed there.
   */
  async definitionHistory(
    namespace: string,
    kind: 'quota' | 'limitRange',
    name: string,
    page: { readonly after?: string; readonly limit: number },
  ): Promise<Page<DefinitionChange> | undefined> {
    const types =
      kind === 'quota' ? ['QuotaDefined', 'QuotaChanged', 'QuotaRemoved'] : ['LimitRangeDefined', 'LimitRangeChanged', 'LimitRangeRemoved'];
    return this.changes(
      namespace,
      types,
      name,
      page,
      (data) => (data as DefinitionJson).spec,
      (before, after) => changedKeys(kind, before, after),
    );
  }

  /** Every change of a Namespace object (its labels and annotations), oldest first; undefined when it never existed. */
  namespaceHistory(name: string, page: { readonly after?: string; readonly limit: number }): Promise<Page<DefinitionChange> | undefined> {
    const metadataOf = (data: unknown): Record<string, unknown> => {
      const m = (data as { metadata?: { labels?: unknown; annotations?: unknown } }).metadata ?? {};
      return { labels: m.labels ?? {}, annotations: m.annotations ?? {} };
    };
    return this.changes(name, ['NamespaceDefined', 'NamespaceChanged', 'NamespaceRemoved'], name, page, metadataOf, (before, after) => {
      const keys = (field: string): string[] => {
        const a = (before?.[field] ?? {}) as Record<string, string>;
        const b = (after?.[field] ?? {}) as Record<string, string>;
        return [...new Set([...Object.keys(a), ...Object.keys(b)])]
          .sort()
          .filter((k) => a[k] !== b[k])
          .map((k) => `${field}.${k}`);
      };
      return [...keys('labels'), ...keys('annotations')];
    });
  }

  /** Every change of a shared quota's definition (its own stream), oldest first; undefined when it never existed. */
  sharedQuotaHistory(key: string, page: { readonly after?: string; readonly limit: number }): Promise<Page<DefinitionChange> | undefined> {
    const specOf = (data: unknown): Record<string, unknown> => {
      const d = data as { spec?: Record<string, unknown>; selector?: unknown };
      return { ...(d.spec ?? {}), ...(d.selector ? { selector: d.selector } : {}) };
    };
    return this.changes(key, ['SharedQuotaDefined', 'SharedQuotaChanged', 'SharedQuotaRemoved'], null, page, specOf, (before, after) => {
      const changed = changedKeys('quota', before, after);
      if (JSON.stringify(before?.['selector'] ?? null) !== JSON.stringify(after?.['selector'] ?? null)) changed.push('selector');
      return changed;
    });
  }

  /** A stream's definition events of these types (for one name, or all), paged, each with what it replaced. */
  private async changes(
    stream: string,
    types: readonly string[],
    name: string | null,
    page: { readonly after?: string; readonly limit: number },
    specOf: (data: unknown) => Record<string, unknown>,
    changed: (before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined) => string[],
  ): Promise<Page<DefinitionChange> | undefined> {
    const limit = Math.min(Math.max(page.limit, 1), 1000);
    const after = page.after ?? '0';
    const rows = await select<EventRow & ByteBoundedColumns>(
      this.dataSource,
      byteBoundedSql({
        candidates: `SELECT ${EVENT_COLUMNS}, e.position AS page_key, pg_column_size(e.data) AS stored_bytes FROM ledger_events e
                      WHERE e.namespace = $1 AND e.type = ANY($2::text[]) AND ($3::text IS NULL OR e.data->>'name' = $3) AND e.position > $4::bigint
                      ORDER BY e.position LIMIT ${limit + 1}`,
        order: 'c.page_key',
        rowsMax: limit,
        bytesMax: HISTORY_PAGE_MAX_BYTES,
      }),
      [stream, types, name, after],
    );
    if (rows.length === 0 && after === '0') return undefined;
    // The definition in force before the page starts: the `before` of its first change.
    const previous = await select<{ data: unknown; type: string }>(
      this.dataSource,
      `SELECT data, type FROM ledger_events WHERE namespace = $1 AND type = ANY($2::text[]) AND ($3::text IS NULL OR data->>'name' = $3) AND position <= $4::bigint
        ORDER BY ledger_events.position DESC LIMIT 1`,
      [stream, types, name, after],
    );
    let before: Record<string, unknown> | null = previous[0] && !previous[0].type.endsWith('Removed') ? specOf(previous[0].data) : null;
    const items = rows.map((row): DefinitionChange => {
      const event = eventView(row);
      const now = row.type.endsWith('Removed') ? null : specOf(row.data);
      const change: DefinitionChange = { ...event, before, after: now, changed: changed(before ?? undefined, now ?? undefined) };
      before = now;
      return change;
    });
    const last = items.at(-1);
    return { items, ...(pageCutShort(rows) && last ? { next: last.position } : {}) };
  }

  private async head(namespace: string): Promise<{ version: number; state: HeadJson } | undefined> {
    const rows = await select<{ version: string; state: HeadJson }>(
      this.dataSource,
      `SELECT version, state FROM namespace_heads WHERE namespace = $1`,
      [namespace],
    );
    const row = rows[0];
    return row ? { version: Number(row.version), state: row.state } : undefined;
  }
}

interface DefinitionJson {
  readonly name: string;
  readonly spec: Record<string, unknown>;
}
