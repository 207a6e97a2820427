import { Resources, type NamespaceState, type RawQuantities, type ResourceList, type SharedQuotaDefinition } from '@quota/domain';
import { overHardOf, sharedTotal } from './cluster-views.js';
import type { DataSource } from 'typeorm';
import type { SharedQuotaUsageAt, SharedQuotaUsagePoint, SharedQuotaUsageSeries, UsageMarker } from '../ledger.types.js';
import { archivedSharedInstant, isBeforeHorizon, retentionHorizon } from '../archive/retention.js';
import { select } from '../sql.js';
import { DENIAL_MARKER_COLUMNS, denialMarker, type DenialMarkerRow, SERIES_MARKERS_MAX, seriesInstants } from './usage-queries.js';
import { modelledSeries } from './shared-usage-series.js';
import { boundedQuery, forEachBounded, sampleStates, type Query, type StateSample } from './usage-sampler.js';
import { sharedAtInstants } from './usage-versions.js';

/** Namespaces sampled side by side by one shared quota's series (each runs sampleStates, itself bounded). */
const NAMESPACES_CONCURRENT_MAX = 2;
/** Queries of one shared quota's read in flight at once, over all its namespaces (the pool also serves admissions). */
const QUERIES_CONCURRENT_MAX = 4;

const CHANGE = { SharedQuotaDefined: 'defined', SharedQuotaChanged: 'changed', SharedQuotaRemoved: 'removed' } as const;

/**
 * A shared quota's usage as it was: at an instant, and sampled over a range. A shared
 * quota's usage at an instant is, by definition, the sum of what each namespace covering it then
 * contributed, and each namespace's contribution is in its own fold (`sharedUsed`, exact at every
 * version as its quotas' usage is). So the namespaces that ever carried the quota (those with a
 * SharedQuotaApplied naming it, found by index) are each folded at the instant, as `usage?at=`
 * folds one namespace, and summed; the limits are the quota's own stream's definition at the
 * instant. Namespaces that did not carry it then contribute nothing. That is what `usageAt`
 * does (it lists each namespace's part too): one read per namespace the quota covered then.
 *
 * A series reads the same sums from the shared usage series (shared-usage-series.ts), the
 * projection's total at every instant where a contribution changed: a descent of its key per
 * point, plus, for each namespace of the range the projection has not caught up with, that
 * namespace's part past its projected version (its usage read model or a fold, as above). So a
 * series costs its points, not the namespaces the quota ever covered (after churn, 500 points
 * over ~1,500 namespaces took ~30 s); `source: 'namespaces'` sums the namespaces instead,
 * as series did before (and still do for a quota the model cannot keep: `unordered`).
 */
export class SharedUsageQueries {
  constructor(private readonly dataSource: DataSource) {}

  /** Undefined when the key never had a stream. */
  async usageAt(key: string, at: string): Promise<SharedQuotaUsageAt | undefined> {
    if (!(await this.exists(key))) return undefined;
    await this.retained(key, at);
    const [point] = (await this.sample(key, [at], true)).samples;
    if (!point) return undefined;
    return { key, ...point.point, namespaces: point.namespaces, overHard: overHardOf(point.point.hard, point.point.used) };
  }

  /**
   * Usage at `points` evenly spaced instants from `since` to `until` (both included), each as
   * `usageAt` answers it, and the range's limit changes and the denials that named the quota as
   * markers. Undefined when the key never had a stream.
   */
  async usageSeries(
    key: string,
    range: { readonly since: string; readonly until: string; readonly points: number },
    /** The namespaces whose denials the caller may see (undefined: every one); the usage is the whole quota's regardless. */
    visible?: ReadonlySet<string>,
    /** Where the usage comes from: the shared usage series (the default), or each namespace's, summed (what the series replaces; tests compare the two). */
    source: 'series' | 'namespaces' = 'series',
  ): Promise<SharedQuotaUsageSeries | undefined> {
    if (!(await this.exists(key))) return undefined;
    await this.retained(key, range.since);
    const instants = seriesInstants(range);
    const { samples, candidates } = source === 'series' ? await this.sampleSeries(key, instants) : await this.sample(key, instants, false);
    const limits = await select<{ version: string; type: keyof typeof CHANGE; name: string; actor: string; at: Date }>(
      this.dataSource,
      `SELECT version::text AS version, type, data->'ref'->>'name' AS name, actor, recorded_at AS at FROM ledger_events
        WHERE namespace = $1 AND recorded_at BETWEEN $2::timestamptz AND $3::timestamptz
        ORDER BY ledger_events.recorded_at, ledger_events.version LIMIT ${SERIES_MARKERS_MAX + 1}`,
      [key, range.since, range.until],
    );
    const ref = samples.find((s) => s.definition)?.definition?.ref ?? (await this.definitionNow(key))?.ref;
    const denials = ref
      ? await select<DenialMarkerRow>(
          this.dataSource,
          `SELECT ${DENIAL_MARKER_COLUMNS} FROM admission_decisions
            WHERE namespace = ANY($1::text[]) AND NOT allowed AND NOT dry_run AND decided_at BETWEEN $2::timestamptz AND $3::timestamptz
              AND ((result->'denial'->>'quotaKind' = $4 AND result->'denial'->>'quota' = $5 AND coalesce(result->'denial'->>'quotaNamespace', '') = $6)
                   OR result->'denial'->>'quota' = $7)
            ORDER BY admission_decisions.decided_at, admission_decisions.id LIMIT ${SERIES_MARKERS_MAX + 1}`,
          // $7: a plain list's denial as earlier versions recorded it (Exceeded and StatusUnknown
          // ones, before they were named as object denials are), named by the quota's key
          // ('clusterresourcequotas/acme', which no ResourceQuota can be named): still this
          // quota's, and still in the ledger.
          [
            visible ? candidates.filter((namespace) => visible.has(namespace)) : candidates,
            range.since,
            range.until,
            ref.kind,
            ref.name,
            ref.namespace ?? '',
            key,
          ],
        )
      : [];
    const markers: UsageMarker[] = [
      ...limits.slice(0, SERIES_MARKERS_MAX).map((r): UsageMarker => ({
        kind: 'limit',
        at: r.at.toISOString(),
        version: Number(r.version),
        quota: r.name,
        change: CHANGE[r.type],
        actor: r.actor,
      })),
      ...denials.slice(0, SERIES_MARKERS_MAX).map(denialMarker),
    ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    return {
      key,
      since: range.since,
      until: range.until,
      points: samples.map((s) => s.point),
      markers,
      truncated: limits.length > SERIES_MARKERS_MAX || denials.length > SERIES_MARKERS_MAX,
    };
  }

  /** Each instant's definition and the sum of what the namespaces then covered by it contributed, and the namespaces that ever carried it up to the last instant. */
  private async sample(key: string, instants: readonly string[], perNamespace: boolean) {
    const query = boundedQuery(this.dataSource, QUERIES_CONCURRENT_MAX);
    const definitionAt = await definitionsAt(query, key, instants);
    const sums = new InstantSums(
      definitionAt.map((d) => (d.definition ? Resources.resourceList(d.definition.spec.hard ?? {}) : undefined)),
      perNamespace,
    );
    const candidates = await this.candidates(key, instants);
    // Each namespace's samples are added to the instants' sums as they come, and let go: what a
    // read holds is its instants' sums and the samples of the namespaces in flight.
    await forEachBounded(candidates, NAMESPACES_CONCURRENT_MAX, async (namespace) => {
      sums.add(namespace, await contributed(query, namespace, key, instants, contributionTo(key)));
    });
    return { samples: samplesOf(instants, definitionAt, (i) => sums.total(i)), candidates };
  }

  /**
   * As `sample` answers a series, from the shared usage series: its totals at the instants, and,
   * for each namespace of the range the projection has not caught up with (read in the same
   * snapshot as the totals), its part past its projected version in place of what the series
   * holds of it, at the instants from its first unprojected event on.
   */
  private async sampleSeries(key: string, instants: readonly string[]) {
    const query = boundedQuery(this.dataSource, QUERIES_CONCURRENT_MAX);
    const definitionAt = await definitionsAt(query, key, instants);
    const candidates = await this.candidates(key, instants);
    const model = await modelledSeries(query, key, instants);
    if (model.unordered) return this.sample(key, instants, false);
    const totals = model.totals.map((total) => total ?? Resources.EMPTY);
    await forEachBounded(model.lagging, NAMESPACES_CONCURRENT_MAX, async ({ namespace, projected, nextAt }) => {
      const from = nextAt === null ? -Infinity : Math.floor(Date.parse(nextAt));
      const late = instants.flatMap((at, i) => (Date.parse(at) >= from ? [i] : []));
      if (late.length === 0) return;
      const at = late.map((i) => instants[i] as string);
      const [actual, held] = await Promise.all([
        contributed(query, namespace, key, at, contributionTo(key)),
        sharedAtInstants(query, namespace, key, at, projected),
      ]);
      late.forEach((index, j) => {
        const without = Resources.subtract(totals[index] ?? Resources.EMPTY, Resources.resourceList(held[j]?.used ?? {}));
        totals[index] = Resources.add(without, actual[j]?.value ?? Resources.EMPTY);
      });
    });
    const total = (i: number) => {
      const hard = definitionAt[i]?.definition ? Resources.resourceList(definitionAt[i]?.definition?.spec.hard ?? {}) : Resources.EMPTY;
      const part = Resources.mask(totals[i] ?? Resources.EMPTY, Resources.resourceNames(hard));
      return {
        hard: Resources.canonicalResourceList(hard),
        used: Resources.canonicalResourceList(Resources.add(Resources.resourceList(sharedTotal(hard, []).used), part)),
        namespaces: [],
      };
    };
    return { samples: samplesOf(instants, definitionAt, total), candidates };
  }

  /**
   * The namespaces the quota covered at some instant from the first of `instants` to the last
   * (they alone can have contributed), so that a read costs the namespaces of its range, not
   * every namespace that ever carried the quota (a quota that had covered 1,501
   * namespaces folded all of them for every series, long after they left it). Those covered at
   * the first instant (their last SharedQuotaApplied or SharedQuotaWithdrawn up to it, or their
   * horizon state, has it applied) and those it was applied to in between; both events are
   * indexed by key and time.
   */
  private async candidates(key: string, instants: readonly string[]): Promise<string[]> {
    const times = instants.map((at) => Date.parse(at));
    const first = new Date(Math.min(...times)).toISOString();
    const last = new Date(Math.max(...times)).toISOString();
    const rows = await select<{ namespace: string }>(
      this.dataSource,
      `SELECT namespace FROM (
         SELECT DISTINCT ON (namespace) namespace, type FROM (
           SELECT namespace, recorded_at, version, type FROM ledger_events
            WHERE type = 'SharedQuotaApplied' AND data->>'key' = $1 AND recorded_at <= $2::timestamptz
           UNION ALL
           SELECT namespace, recorded_at, version, type FROM ledger_events
            WHERE type = 'SharedQuotaWithdrawn' AND data->>'key' = $1 AND recorded_at <= $2::timestamptz
           UNION ALL
           SELECT namespace, recorded_at, version, 'SharedQuotaApplied' FROM ledger_horizon_states
            WHERE state->'shared' @> jsonb_build_array(jsonb_build_object('key', $1::text))
         ) AS marks ORDER BY namespace, recorded_at DESC, version DESC
       ) AS latest WHERE type = 'SharedQuotaApplied'
       UNION
       SELECT namespace FROM ledger_events WHERE type = 'SharedQuotaApplied' AND data->>'key' = $1 AND recorded_at > $2::timestamptz AND recorded_at <= $3::timestamptz`,
      [key, first, last],
    );
    return rows.map((r) => r.namespace);
  }

  private async definitionNow(key: string): Promise<SharedQuotaDefinition | undefined> {
    const rows = await select<{ data: SharedQuotaDefinition }>(
      this.dataSource,
      `SELECT d.data FROM (
         (SELECT version, data FROM ledger_events WHERE namespace = $1 AND type <> 'SharedQuotaRemoved' ORDER BY ledger_events.version DESC LIMIT 1)
         UNION ALL
         (SELECT version, definition->'data' FROM ledger_horizon_states
           WHERE namespace = $1 AND definition IS NOT NULL AND definition->>'type' <> 'SharedQuotaRemoved' ORDER BY version DESC LIMIT 1)
       ) AS d ORDER BY d.version DESC LIMIT 1`,
      [key],
    );
    return rows[0]?.data;
  }

  /** Throws Archived (410) for an instant before the retention horizon. */
  private async retained(key: string, at: string): Promise<void> {
    const horizon = await retentionHorizon(this.dataSource);
    if (horizon !== undefined && isBeforeHorizon(at, horizon)) throw archivedSharedInstant(key, at, horizon);
  }

  private async exists(key: string): Promise<boolean> {
    return (await select(this.dataSource, `SELECT 1 FROM shared_quota_heads WHERE key = $1`, [key])).length > 0;
  }
}

/** The quota's definition at each instant (its own stream's last event at or before it), and that event's version (0: none). */
async function definitionsAt(
  query: Query,
  key: string,
  instants: readonly string[],
): Promise<{ version: number; definition: SharedQuotaDefinition | undefined }[]> {
  const definitions = await query<{ ord: string; version: string; type: string; data: SharedQuotaDefinition }>(
    `SELECT i.ord::text AS ord, t.version::text AS version, t.type, t.data
       FROM unnest($2::timestamptz[]) WITH ORDINALITY AS i(at, ord)
       CROSS JOIN LATERAL (
         (SELECT e.version, e.type, e.data FROM ledger_events e WHERE e.namespace = $1 AND e.recorded_at <= i.at
           ORDER BY e.recorded_at DESC, e.version DESC LIMIT 1)
         UNION ALL
         (SELECT h.version, h.definition->>'type', h.definition->'data' FROM ledger_horizon_states h
           WHERE h.namespace = $1 AND h.recorded_at <= i.at AND h.definition IS NOT NULL ORDER BY h.version DESC LIMIT 1)
         ORDER BY version DESC LIMIT 1) t`,
    [key, instants],
  );
  const definitionAt = new Array<{ version: number; definition: SharedQuotaDefinition | undefined }>(instants.length).fill({
    version: 0,
    definition: undefined,
  });
  for (const row of definitions)
    definitionAt[Number(row.ord) - 1] = {
      version: Number(row.version),
      definition: row.type === 'SharedQuotaRemoved' ? undefined : row.data,
    };
  return definitionAt;
}

type InstantTotal = { hard: RawQuantities; used: RawQuantities; namespaces: { namespace: string; version: number; used: RawQuantities }[] };

/** Each instant's point: its definition's version and whether it was defined, and its total. */
function samplesOf(
  instants: readonly string[],
  definitionAt: readonly { version: number; definition: SharedQuotaDefinition | undefined }[],
  totalAt: (i: number) => InstantTotal,
) {
  return instants.map((at, i) => {
    const { version, definition } = definitionAt[i] ?? { version: 0, definition: undefined };
    const total = totalAt(i);
    const point: SharedQuotaUsagePoint = { at, version, defined: definition !== undefined, hard: total.hard, used: total.used };
    return { point, definition, namespaces: total.namespaces };
  });
}

/** What a namespace's state contributes to shared quota `key` (undefined when the quota does not cover it). */
const contributionTo =
  (key: string) =>
  (state: NamespaceState): ResourceList | undefined =>
    state.shared.has(key) ? state.sharedUsed.get(key) : undefined;

/**
 * A shared quota's total at each instant, summed namespace by namespace as their samples come
 * (sharedTotal's sum, without holding every namespace's samples): each part counted for the
 * instant's hard resources only, and the total with an entry for each. With `perNamespace`, the
 * parts are kept too (usage?at=, one instant).
 */
class InstantSums {
  private readonly totals: ResourceList[];
  private readonly parts: { namespace: string; version: number; used: ResourceList }[][];

  /** @param hard each instant's hard limits; undefined where the quota was not defined (nothing counts) */
  constructor(
    private readonly hard: readonly (ResourceList | undefined)[],
    private readonly perNamespace: boolean,
  ) {
    this.totals = hard.map((limits) => sharedTotal(limits ?? Resources.EMPTY, []).used).map((used) => Resources.resourceList(used));
    this.parts = hard.map(() => []);
  }

  add(namespace: string, samples: readonly StateSample<ResourceList | undefined>[]): void {
    samples.forEach((sample, i) => {
      const limits = this.hard[i];
      if (!limits || !sample.value) return;
      const part = Resources.mask(sample.value, Resources.resourceNames(limits));
      this.totals[i] = Resources.add(this.totals[i] ?? Resources.EMPTY, part);
      if (this.perNamespace) this.parts[i]?.push({ namespace, version: sample.version, used: part });
    });
  }

  total(i: number): InstantTotal {
    const parts = [...(this.parts[i] ?? [])].sort((a, b) => (a.namespace < b.namespace ? -1 : 1));
    return {
      hard: Resources.canonicalResourceList(this.hard[i] ?? Resources.EMPTY),
      used: Resources.canonicalResourceList(this.totals[i] ?? Resources.EMPTY),
      namespaces: parts.map((p) => ({ ...p, used: Resources.canonicalResourceList(p.used) })),
    };
  }
}

/**
 * What one namespace contributed to the shared quota at each instant: from the read model of
 * usage at every version (usage-versions.ts), and by folding (`capture`) the instants the
 * projection has not reached.
 */
async function contributed(
  query: Query,
  namespace: string,
  key: string,
  instants: readonly string[],
  capture: (state: NamespaceState) => ResourceList | undefined,
): Promise<StateSample<ResourceList | undefined>[]> {
  const modelled = await sharedAtInstants(query, namespace, key, instants);
  const unreached = modelled.flatMap((point, i) => (point.covered ? [] : [i]));
  const folded =
    unreached.length > 0
      ? await sampleStates(
          query,
          namespace,
          unreached.map((i) => instants[i] as string),
          capture,
        )
      : [];
  const samples = modelled.map((point, i): StateSample<ResourceList | undefined> => ({
    at: instants[i] as string,
    version: point.version,
    value: point.used ? Resources.resourceList(point.used) : undefined,
  }));
  unreached.forEach((index, i) => {
    samples[index] = folded[i] as StateSample<ResourceList | undefined>;
  });
  return samples;
}
