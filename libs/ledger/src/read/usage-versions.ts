import { Resources, type NamespaceState, type RawQuantities, type RecordedEvent, type ResourceList } from '@quota/domain';
import type { UsagePoint } from '../ledger.types.js';
import type { Query } from './usage-sampler.js';
import { LAST_EVENT_AT } from '../archive/retention.js';

/**
 * Usage at every version, as rows: the read model that answers `usage?at=` and each
 * point of a series with keyed lookups instead of a fold (migrations/1795900000900).
 *
 * - `projected_used_versions`: a namespace's usage per quota (what `projected_namespaces.used`
 *   holds) and what it contributes to each shared quota covering it, at each version where
 *   either changed. A row holds up to USED_VERSIONS_PER_ROW consecutive such versions (keyed by
 *   its first, `versions` ascending, `used` and `shared` the matching JSON arrays): usage changes
 *   at most events, and a row, with its index entry, per event was the projection's largest
 *   write;
 * - `projected_quota_versions`: its quotas' names and hard limits (by name), one row at each
 *   version where they changed.
 *
 * The usage at version v is then the newest row of each at or below v (in the usage row, its
 * last version at or below v): two descents of a primary key and a scan of a short array,
 * whatever the history's length. The projection writes the rows in the
 * transaction that moves `projected_namespaces.version`, so they are complete up to that
 * version; a version above it is answered by the fold (usage-sampler.ts).
 */

/**
 * Versions one usage row holds at most. Larger rows mean fewer rows and index entries to write
 * in a catch-up, and more to read per instant (a row past ~2 KB is compressed out of line).
 */
export const USED_VERSIONS_PER_ROW = 32;

/** The usage row at or below version `at` (SQL of a LATERAL subquery), and `column`'s entry for the last of its versions at or below it. */
const USED_AT = (column: 'used' | 'shared', at: string): string =>
  `SELECT v.${column} -> (SELECT max(i) - 1 FROM generate_subscripts(v.versions, 1) AS i WHERE v.versions[i] <= ${at}) AS ${column}
     FROM projected_used_versions v WHERE v.namespace = $1 AND v.version <= ${at} ORDER BY v.version DESC LIMIT 1`;

/** A quota's name and its spec's hard limits, as `usage?at=` shows them. */
export interface QuotaHard {
  readonly name: string;
  readonly hard: RawQuantities;
}

/** What changed at one version of a namespace; each part is undefined when it did not. */
export interface VersionRow {
  readonly version: number;
  /** JSON of the usage per quota (canonical quantities); written with `shared`. */
  readonly used?: string;
  /** JSON of the contribution to each shared quota covering the namespace, when there is one. */
  readonly shared?: string;
  /** JSON of the quotas (QuotaHard[], by name). */
  readonly quotas?: string;
}

/**
 * A change of what a namespace contributes to a shared quota (the shared usage series,
 * shared-usage-series.ts): `delta` at the event's instant; or `unordered`, an event recorded
 * earlier than the namespace's event before it, which a total kept by instant cannot place.
 */
export type SharedChange =
  { readonly key: string; readonly atMs: number; readonly delta: ResourceList } | { readonly key: string; readonly unordered: true };

/**
 * Watches one namespace's fold, event by event (fold's `observe`), and reports each version
 * where the usage or the quotas changed, and each change of what it contributes to a shared
 * quota. The fold replaces a quota's usage list (and a quota's state) only when it changes, so a
 * change is an identity check per quota, and a list is made canonical once however many
 * versions carry it.
 */
export class VersionRecorder {
  private used: ReadonlyMap<string, ResourceList>;
  private sharedUsed: ReadonlyMap<string, ResourceList>;
  private shared: NamespaceState['shared'];
  private quotas: NamespaceState['quotas'];
  private lastAt: number | undefined;

  /** @param from the state the fold starts from, whose rows are written already */
  constructor(
    from: NamespaceState,
    private readonly emit: (row: VersionRow) => void,
    private readonly emitShared: (change: SharedChange) => void = () => undefined,
  ) {
    this.used = new Map(from.used);
    this.sharedUsed = new Map(from.sharedUsed);
    this.shared = new Map(from.shared);
    this.quotas = new Map(from.quotas);
    this.lastAt = from.lastEventAt;
  }

  readonly observe = (state: NamespaceState, event: RecordedEvent): void => {
    if (this.lastAt !== undefined && event.at < this.lastAt) {
      for (const key of new Set([...this.shared.keys(), ...state.shared.keys()])) this.emitShared({ key, unordered: true });
    }
    this.lastAt = Math.max(this.lastAt ?? event.at, event.at);
    const sharedChanged = changed(this.sharedUsed, state.sharedUsed) || changed(this.shared, state.shared);
    if (sharedChanged)
      sharedChanges(
        contributionsOf(this.shared, this.sharedUsed),
        contributionsOf(state.shared, state.sharedUsed),
        event.at,
        this.emitShared,
      );
    const usedChanged = sharedChanged || changed(this.used, state.used);
    const quotasChanged = changed(this.quotas, state.quotas);
    if (!usedChanged && !quotasChanged) return;
    if (usedChanged) {
      this.used = new Map(state.used);
      this.sharedUsed = new Map(state.sharedUsed);
      this.shared = new Map(state.shared);
    }
    if (quotasChanged) this.quotas = new Map(state.quotas);
    this.emit({
      version: event.version,
      ...(usedChanged ? { used: usedJson(state.used) } : {}),
      ...(usedChanged && state.shared.size > 0 ? { shared: usedJson(contributions(state)) } : {}),
      ...(quotasChanged ? { quotas: quotasJson(state.quotas) } : {}),
    });
  };
}

/** Everything the read model holds at the state's version (a fold starting there from a state whose rows are not written: a horizon state). */
export function versionRowOf(state: NamespaceState): VersionRow {
  return {
    version: state.version,
    used: usedJson(state.used),
    ...(state.shared.size > 0 ? { shared: usedJson(contributions(state)) } : {}),
    quotas: quotasJson(state.quotas),
  };
}

/** What the namespace contributes to each shared quota covering it (as the shared series reads the state). */
function contributions(state: NamespaceState): Map<string, ResourceList> {
  return contributionsOf(state.shared, state.sharedUsed);
}

function contributionsOf(shared: NamespaceState['shared'], sharedUsed: NamespaceState['sharedUsed']): Map<string, ResourceList> {
  const out = new Map<string, ResourceList>();
  for (const key of shared.keys()) {
    const used = sharedUsed.get(key);
    if (used) out.set(key, used);
  }
  return out;
}

/** Each shared quota whose contribution moved from `before` to `after`, with the difference, at `atMs`. */
function sharedChanges(
  before: ReadonlyMap<string, ResourceList>,
  after: ReadonlyMap<string, ResourceList>,
  atMs: number,
  emit: (change: SharedChange) => void,
): void {
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const delta = Resources.withoutZeros(Resources.subtract(after.get(key) ?? Resources.EMPTY, before.get(key) ?? Resources.EMPTY));
    if (Object.keys(delta).length > 0) emit({ key, atMs, delta });
  }
}

/** What a state starts the shared usage series with (a fold starting from a horizon state: nothing of it is written yet), at `atMs`. */
export function sharedStartOf(state: NamespaceState, atMs: number, emit: (change: SharedChange) => void): void {
  sharedChanges(new Map(), contributions(state), atMs, emit);
}

function changed<V>(before: ReadonlyMap<string, V>, after: ReadonlyMap<string, V>): boolean {
  if (before.size !== after.size) return true;
  for (const [name, value] of after) if (before.get(name) !== value) return true;
  return false;
}

/** JSON of each usage list, made once per list (lists are immutable, and shared by the versions that carry them). */
const listJson = new WeakMap<ResourceList, string>();

function usedJson(used: ReadonlyMap<string, ResourceList>): string {
  const parts: string[] = [];
  for (const [name, list] of used) {
    let json = listJson.get(list);
    if (json === undefined) {
      json = JSON.stringify(Resources.canonicalResourceList(list));
      listJson.set(list, json);
    }
    parts.push(`${JSON.stringify(name)}:${json}`);
  }
  return `{${parts.join(',')}}`;
}

function quotasJson(quotas: NamespaceState['quotas']): string {
  const list: QuotaHard[] = [...quotas.values()].map((q) => ({ name: q.name, hard: q.definition.spec.hard ?? {} }));
  list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return JSON.stringify(list);
}

/** One instant as the read model answers it. */
export interface VersionPoint {
  readonly at: string;
  /** The last event recorded at or before the instant (0: none). */
  readonly version: number;
  readonly position: string;
  /** The usage, when the read model covers the version (the projection has passed it); else undefined. */
  readonly quotas: UsagePoint['quotas'] | undefined;
}

/**
 * The usage at each instant from the read model, in one statement: per instant, the last
 * event recorded at or before it (as the fold picks it), then the newest row of each table at
 * or below its version, and the version the projection had reached, read in the same snapshot.
 * A point above that version comes back without quotas: the caller folds it.
 */
export async function usageAtInstants(query: Query, namespace: string, instants: readonly string[]): Promise<VersionPoint[]> {
  const rows = await query<{
    ord: string;
    version: string | null;
    position: string | null;
    projected: string | null;
    used: Record<string, RawQuantities> | null;
    quotas: QuotaHard[] | null;
  }>(
    `SELECT i.ord::text AS ord, t.version::text AS version, t.position::text AS position,
            (SELECT p.version FROM projected_namespaces p WHERE p.namespace = $1)::text AS projected, u.used, q.quotas
       FROM unnest($2::timestamptz[]) WITH ORDINALITY AS i(at, ord)
       LEFT JOIN LATERAL (${LAST_EVENT_AT}) t ON true
       LEFT JOIN LATERAL (${USED_AT('used', 't.version')}) u ON true
       LEFT JOIN LATERAL (
         SELECT v.quotas FROM projected_quota_versions v WHERE v.namespace = $1 AND v.version <= t.version
          ORDER BY v.version DESC LIMIT 1) q ON true`,
    [namespace, instants],
  );
  const points = new Array<VersionPoint>(instants.length);
  for (const row of rows) {
    const index = Number(row.ord) - 1;
    const version = Number(row.version ?? 0);
    const covered = version <= Number(row.projected ?? 0);
    const used = row.used ?? {};
    points[index] = {
      at: instants[index] as string,
      version,
      position: row.position ?? '0',
      quotas: covered ? (row.quotas ?? []).map((q) => ({ name: q.name, hard: q.hard, used: used[q.name] ?? {} })) : undefined,
    };
  }
  return points;
}

/** A shared quota's contribution from one namespace at one instant, as the read model has it. */
export interface SharedPoint {
  /** The namespace's last event recorded at or before the instant (0: none). */
  readonly version: number;
  /** Covered by the read model (else the caller folds); `used` is undefined when the quota did not cover the namespace then. */
  readonly covered: boolean;
  readonly used: RawQuantities | undefined;
}

/**
 * What the namespace contributed to the shared quota `key` at each instant (as usageAtInstants, one
 * statement); with `upTo`, as of its last event at or before the instant but at most version `upTo`
 * (what the shared usage series holds of a namespace projected that far).
 */
export async function sharedAtInstants(
  query: Query,
  namespace: string,
  key: string,
  instants: readonly string[],
  upTo?: number,
): Promise<SharedPoint[]> {
  const rows = await query<{ ord: string; version: string | null; projected: string | null; used: RawQuantities | null }>(
    `SELECT i.ord::text AS ord, t.version::text AS version,
            (SELECT p.version FROM projected_namespaces p WHERE p.namespace = $1)::text AS projected, u.shared->$3 AS used
       FROM unnest($2::timestamptz[]) WITH ORDINALITY AS i(at, ord)
       LEFT JOIN LATERAL (${LAST_EVENT_AT}) t ON true
       LEFT JOIN LATERAL (${USED_AT('shared', upTo === undefined ? 't.version' : '(CASE WHEN t.version IS NULL THEN NULL ELSE least(t.version, $4::bigint) END)')}) u ON true`,
    upTo === undefined ? [namespace, instants, key] : [namespace, instants, key, upTo],
  );
  const points = new Array<SharedPoint>(instants.length);
  for (const row of rows) {
    const version = Number(row.version ?? 0);
    points[Number(row.ord) - 1] = { version, covered: version <= Number(row.projected ?? 0), used: row.used ?? undefined };
  }
  return points;
}
