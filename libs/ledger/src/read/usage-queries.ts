import { fold, initialState, type RawQuantities } from '@quota/domain';
import type { DataSource } from 'typeorm';
import { coveringShared, headOf, reservationFromJson, stateOf, type HeadJson, type ReservationJson } from '../head.js';
import type { NamespaceUsage, NamespaceUsageAt, ProjectedUsage, UsageMarker, UsagePoint, UsageSeries } from '../ledger.types.js';
import { decodeEvent, FOLD_COLUMNS, type FoldRow } from '../rows.js';
import { select } from '../sql.js';
import { sampleUsage, type Query } from './usage-sampler.js';
import { usageAtInstants } from './usage-versions.js';
import { archivedInstant, FOLD_START, isBeforeHorizon, LAST_EVENT_AT, retentionHorizon } from '../archive/retention.js';

/** Most samples one usage series answers, and most markers of each kind. */
export const SERIES_POINTS_MAX = 500;
export const SERIES_MARKERS_MAX = 1000;
/** The characters of its decision's name and message a denial marker carries (the decision has them whole). */
const MARKER_NAME_MAX = 253;
const MARKER_MESSAGE_MAX = 1024;

/**
 * A denial marker's columns from admission_decisions: its decision, cut to what a name and a
 * message hold now (rows written before names were bounded hold megabytes: 1,000 of them were
 * gigabytes built whole), and the quota that refused with the resources it refused
 * for (an Exceeded denial's `exceeded[].resource`, else its `resources`), so that a chart
 * draws a denial only on the charts of its own quota and resources (a storage chart once showed
 * the compute denials).
 */
export const DENIAL_MARKER_COLUMNS = `id::text AS id, decided_at AS at, reason, requester, left(name, ${MARKER_NAME_MAX}) AS name,
  left(result->>'message', ${MARKER_MESSAGE_MAX}) AS message, result->'denial'->>'quota' AS quota,
  result->'denial'->>'quotaKind' AS "quotaKind", result->'denial'->>'quotaNamespace' AS "quotaNamespace",
  CASE WHEN jsonb_typeof(result->'denial'->'exceeded') = 'array'
         THEN (SELECT jsonb_agg(e->>'resource') FROM jsonb_array_elements(result->'denial'->'exceeded') AS e)
       WHEN jsonb_typeof(result->'denial'->'resources') = 'array' THEN result->'denial'->'resources' END AS resources`;

/** A row of DENIAL_MARKER_COLUMNS. */
export interface DenialMarkerRow {
  readonly id: string;
  readonly at: Date;
  readonly reason: string | null;
  readonly requester: string;
  readonly name: string | null;
  readonly message: string | null;
  readonly quota: string | null;
  readonly quotaKind: string | null;
  readonly quotaNamespace: string | null;
  readonly resources: readonly string[] | null;
}

/** The marker of a DENIAL_MARKER_COLUMNS row: the quota fields only where the denial named a quota. */
export function denialMarker(r: DenialMarkerRow): UsageMarker {
  return {
    kind: 'denial',
    at: r.at.toISOString(),
    decisionId: r.id,
    reason: r.reason,
    requester: r.requester,
    name: r.name,
    message: r.message,
    ...(r.quota === null ? {} : { quota: r.quota }),
    ...(r.quotaKind === null ? {} : { quotaKind: r.quotaKind }),
    ...(r.quotaNamespace === null ? {} : { quotaNamespace: r.quotaNamespace }),
    ...(r.resources === null ? {} : { resources: r.resources.filter((x): x is string => typeof x === 'string') }),
  };
}

/** A series' instants: `points` (2 to SERIES_POINTS_MAX) evenly spaced from `since` to `until`, both included. */
export function seriesInstants(range: { readonly since: string; readonly until: string; readonly points: number }): string[] {
  const from = Date.parse(range.since);
  const to = Date.parse(range.until);
  const count = Math.max(2, Math.min(SERIES_POINTS_MAX, Math.floor(range.points)));
  return Array.from({ length: count }, (_, i) => new Date(from + Math.round(((to - from) * i) / (count - 1))).toISOString());
}

/**
 * Usage as platform teams and auditors read it: now (exact, from the head row), as the
 * projection has it (with its lag), as of any instant, and sampled over a range. Every read
 * is by key or by a bounded range of one namespace's stream.
 */
export class UsageQueries {
  constructor(private readonly dataSource: DataSource) {}

  async usage(namespace: string): Promise<NamespaceUsage | undefined> {
    const rows = await select<{ version: string; state: HeadJson; position: string | null }>(
      this.dataSource,
      `SELECT h.version, h.state, e.position::text AS position
         FROM namespace_heads h LEFT JOIN ledger_events e ON e.namespace = h.namespace AND e.version = h.version
        WHERE h.namespace = $1`,
      [namespace],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      namespace,
      version: Number(row.version),
      position: row.position ?? '0',
      quotas: row.state.quotas.map((q) => ({ name: q.definition.name, hard: q.definition.spec.hard ?? {}, used: q.used })),
      ...(row.state.shared && row.state.shared.length > 0 ? { shared: coveringShared(row.state.shared) } : {}),
      ...(row.state.awaitingCountSince === undefined
        ? {}
        : { awaitingFirstCountSince: new Date(row.state.awaitingCountSince).toISOString() }),
    };
  }

  /** Usage per quota as the projection worker has folded it, with how far behind the head it is; undefined without a stream. */
  async projectedUsage(namespace: string): Promise<ProjectedUsage | undefined> {
    const rows = await select<{
      head_version: string;
      version: string | null;
      projected_at: Date | null;
      quota: string | null;
      used: RawQuantities | null;
    }>(
      this.dataSource,
      `SELECT h.version::text AS head_version, p.version::text AS version, p.projected_at, q.quota, q.used
         FROM namespace_heads h
         LEFT JOIN projected_namespaces p ON p.namespace = h.namespace
         LEFT JOIN projected_quota_usage q ON q.namespace = h.namespace
        WHERE h.namespace = $1`,
      [namespace],
    );
    const first = rows[0];
    if (!first) return undefined;
    const used = new Map<string, RawQuantities>();
    for (const row of rows) if (row.quota && row.used) used.set(row.quota, row.used);
    return {
      headVersion: Number(first.head_version),
      version: Number(first.version ?? 0),
      ...(first.projected_at ? { projectedAt: first.projected_at.toISOString() } : {}),
      used,
    };
  }

  /**
   * Usage as it was at an instant (RFC 3339, microsecond precision): the state after the last
   * event recorded at or before it. From the usage-at-every-version read model
   * (usage-versions.ts) when the projection has passed that event, else by folding.
   */
  async usageAt(namespace: string, at: string): Promise<NamespaceUsageAt | undefined> {
    if (!(await this.exists(namespace))) return undefined;
    await this.retained(namespace, at);
    const [point] = await usageAtInstants(this.query, namespace, [at]);
    if (point?.quotas) return { namespace, at, version: point.version, position: point.position, quotas: point.quotas };
    return this.foldedAt(namespace, at);
  }

  /**
   * usageAt by folding: the namespace's events up to the last one recorded at or before the
   * instant (or the archived one the stream's horizon state holds), from the newest snapshot
   * or horizon state below that version. Exact whatever the projection's lag: snapshots only
   * shorten the fold.
   */
  private async foldedAt(namespace: string, at: string): Promise<NamespaceUsageAt> {
    const targets = await select<{ version: string; position: string }>(
      this.dataSource,
      `SELECT t.version::text AS version, t.position::text AS position FROM (SELECT $2::timestamptz AS at) AS i CROSS JOIN LATERAL (${LAST_EVENT_AT}) AS t`,
      [namespace, at],
    );
    const target = targets[0];
    if (!target) return { namespace, at, version: 0, position: '0', quotas: [] };
    const version = Number(target.version);
    const snapshots = await select<{ version: string; state: HeadJson; reservations: ReservationJson[] }>(
      this.dataSource,
      `SELECT f.version::text AS version, f.state, f.reservations FROM (${FOLD_START('$2')}) AS f`,
      [namespace, version],
    );
    const snapshot = snapshots[0];
    const from = snapshot
      ? stateOf(Number(snapshot.version), snapshot.state, snapshot.reservations.map(reservationFromJson))
      : initialState();
    const events = await select<FoldRow>(
      this.dataSource,
      `SELECT ${FOLD_COLUMNS} FROM ledger_events WHERE namespace = $1 AND version > $2 AND version <= $3 ORDER BY ledger_events.version`,
      [namespace, from.version, version],
    );
    const head = headOf(fold(events.map(decodeEvent), from));
    return {
      namespace,
      at,
      version,
      position: target.position,
      quotas: head.quotas.map((q) => ({ name: q.definition.name, hard: q.definition.spec.hard ?? {}, used: q.used })),
    };
  }

  /**
   * Usage at `points` evenly spaced instants from `since` to `until` (both included), each
   * exact as `usageAt` answers it (the read model in one statement; the points the projection
   * has not reached yet folded, sharing folds, see sampleUsage), and the range's limit changes
   * and denials as markers. Undefined when the namespace has no stream.
   */
  async usageSeries(
    namespace: string,
    range: { readonly since: string; readonly until: string; readonly points: number },
  ): Promise<UsageSeries | undefined> {
    if (!(await this.exists(namespace))) return undefined;
    await this.retained(namespace, range.since);
    const points = await this.usageAtMany(namespace, seriesInstants(range));
    const limits = await select<{ version: string; type: string; quota: string; actor: string; at: Date }>(
      this.dataSource,
      `SELECT version::text AS version, type, data->>'name' AS quota, actor, recorded_at AS at FROM ledger_events
        WHERE namespace = $1 AND recorded_at BETWEEN $2::timestamptz AND $3::timestamptz
          AND type IN ('QuotaDefined', 'QuotaChanged', 'QuotaRemoved')
        ORDER BY ledger_events.recorded_at, ledger_events.version LIMIT ${SERIES_MARKERS_MAX + 1}`,
      [namespace, range.since, range.until],
    );
    const denials = await select<DenialMarkerRow>(
      this.dataSource,
      `SELECT ${DENIAL_MARKER_COLUMNS} FROM admission_decisions
        WHERE namespace = $1 AND NOT allowed AND NOT dry_run AND decided_at BETWEEN $2::timestamptz AND $3::timestamptz
        ORDER BY admission_decisions.id LIMIT ${SERIES_MARKERS_MAX + 1}`,
      [namespace, range.since, range.until],
    );
    const change = { QuotaDefined: 'defined', QuotaChanged: 'changed', QuotaRemoved: 'removed' } as const;
    const markers: UsageMarker[] = [
      ...limits.slice(0, SERIES_MARKERS_MAX).map((r): UsageMarker => ({
        kind: 'limit',
        at: r.at.toISOString(),
        version: Number(r.version),
        quota: r.quota,
        change: change[r.type as keyof typeof change],
        actor: r.actor,
      })),
      ...denials.slice(0, SERIES_MARKERS_MAX).map(denialMarker),
    ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    return {
      namespace,
      since: range.since,
      until: range.until,
      points,
      markers,
      truncated: limits.length > SERIES_MARKERS_MAX || denials.length > SERIES_MARKERS_MAX,
    };
  }

  private async usageAtMany(namespace: string, instants: readonly string[]): Promise<UsagePoint[]> {
    const modelled = await usageAtInstants(this.query, namespace, instants);
    const unreached = modelled.flatMap((point, i) => (point.quotas ? [] : [i]));
    const folded =
      unreached.length > 0
        ? await sampleUsage(
            this.dataSource,
            namespace,
            unreached.map((i) => instants[i] as string),
          )
        : [];
    const points: UsagePoint[] = modelled.map((point) => ({ at: point.at, version: point.version, quotas: point.quotas ?? [] }));
    unreached.forEach((index, i) => {
      points[index] = folded[i] as UsagePoint;
    });
    return points;
  }

  /** Throws Archived (410) for an instant before the retention horizon: the events that would answer it left the ledger. */
  private async retained(namespace: string, at: string): Promise<void> {
    const horizon = await retentionHorizon(this.dataSource);
    if (horizon !== undefined && isBeforeHorizon(at, horizon)) throw archivedInstant(namespace, at, horizon);
  }

  private readonly query: Query = (sql, values) => this.dataSource.query(sql, [...values]);

  private async exists(namespace: string): Promise<boolean> {
    return (await select(this.dataSource, `SELECT 1 FROM namespace_heads WHERE namespace = $1`, [namespace])).length > 0;
  }
}
