import { Resources, type NamespaceState, type RawQuantities, type Reservation } from '@quota/domain';
import type pg from 'pg';
import { headOf, headRestOf } from '../head.js';
import type { FeedRow } from './projection-feed.js';
import type { Definitions } from './projection-rows.js';
import type { DueSnapshot } from './snapshot-writer.js';
import { SharedSeriesWrites } from '../read/shared-usage-series.js';
import { sharedStartOf, USED_VERSIONS_PER_ROW, versionRowOf, type SharedChange, type VersionRow } from '../read/usage-versions.js';

/**
 * What one step of the usage projection (projection.ts) writes to the read models, gathered as
 * it folds and sent as one statement per table.
 */

/**
 * A row for each reservation of a namespace's horizon state that its first step leaves live:
 * their making events were archived, so project() does not know them as made in the step
 * (loadReservations reads them back from the horizon state). Rows it changes in the same step
 * are updated after this insert (BatchWrites.flush's order).
 */
export function keepHorizonReservations(out: BatchWrites, namespace: string, start: NamespaceState, after: NamespaceState): void {
  for (const id of start.reservations.keys()) {
    const live = after.reservations.get(id);
    if (live) out.insertReservation(namespace, live, undefined);
  }
}

/** The writes of one step, sent as one statement per table (unnest of arrays); its snapshots go to `snapshotsDue`. */
export class BatchWrites {
  constructor(private readonly snapshotsDue: DueSnapshot[]) {}

  private readonly inserts = {
    ns: [] as string[],
    id: [] as string[],
    version: [] as number[],
    committed: [] as (number | null)[],
    terminated: [] as (number | null)[],
  };
  private readonly commits = { ns: [] as string[], id: [] as string[], committed: [] as number[] };
  private readonly terminations = { ns: [] as string[], id: [] as string[], version: [] as number[] };
  private readonly deletes = { ns: [] as string[], id: [] as string[] };
  private readonly namespaces = {
    ns: [] as string[],
    version: [] as number[],
    position: [] as string[],
    used: [] as string[],
    released: [] as number[],
    at: [] as number[],
    snapshot: [] as number[],
    rest: [] as (string | null)[],
  };
  private readonly definitions = { ns: [] as string[], state: [] as string[] };
  /** Rows of projected_used_versions and projected_quota_versions, as JSON records (one jsonb parameter each: no array escaping). */
  private readonly usedVersions: string[] = [];
  private readonly quotaVersions: string[] = [];
  /** The usage row being filled, per namespace (usage-versions.ts: up to USED_VERSIONS_PER_ROW versions a row). */
  private readonly usedRows = new Map<string, { versions: number[]; used: string[]; shared: (string | undefined)[] }>();
  private readonly sharedSeries = new SharedSeriesWrites();

  /** A change of what a namespace contributes to a shared quota (shared-usage-series.ts). */
  readonly sharedChange: (change: SharedChange) => void = this.sharedSeries.add;

  /** Everything the read models hold of a state a fold starts from unwritten (a horizon state), at its version. */
  start(namespace: string, state: NamespaceState): void {
    this.version(namespace, versionRowOf(state));
    // Its events were archived: its contribution counts from its last one (before the retention horizon, which no read goes past).
    sharedStartOf(state, state.lastEventAt ?? 0, this.sharedChange);
  }

  /** What changed at one version of a namespace (usage-versions.ts); a namespace's come in version order. */
  version(namespace: string, row: VersionRow): void {
    if (row.quotas !== undefined)
      this.quotaVersions.push(`{"namespace":${JSON.stringify(namespace)},"version":${row.version},"quotas":${row.quotas}}`);
    if (row.used === undefined) return;
    let open = this.usedRows.get(namespace);
    if (open && open.versions.length >= USED_VERSIONS_PER_ROW) {
      this.closeUsedRow(namespace, open);
      open = undefined;
    }
    if (!open) {
      open = { versions: [], used: [], shared: [] };
      this.usedRows.set(namespace, open);
    }
    open.versions.push(row.version);
    open.used.push(row.used);
    open.shared.push(row.shared);
  }

  private closeUsedRow(namespace: string, row: { versions: number[]; used: string[]; shared: (string | undefined)[] }): void {
    const shared = row.shared.some((s) => s !== undefined) ? `[${row.shared.map((s) => s ?? 'null').join(',')}]` : 'null';
    this.usedVersions.push(
      `{"namespace":${JSON.stringify(namespace)},"version":${row.versions[0]},"versions":[${row.versions.join(',')}],"used":[${row.used.join(',')}],"shared":${shared}}`,
    );
    this.usedRows.delete(namespace);
  }

  /** A reservation made in this step; `terminatedVersion` is its Terminated event's, when the step holds one. */
  insertReservation(namespace: string, reservation: Reservation, terminatedVersion: number | undefined): void {
    this.inserts.ns.push(namespace);
    this.inserts.id.push(reservation.id);
    this.inserts.version.push(reservation.version);
    this.inserts.committed.push(
      reservation.operation !== 'ADOPT' && reservation.committedAt !== undefined ? reservation.committedAt : null,
    );
    this.inserts.terminated.push(terminatedVersion ?? null);
  }

  commitReservation(namespace: string, reservation: Reservation): void {
    this.commits.ns.push(namespace);
    this.commits.id.push(reservation.id);
    this.commits.committed.push(reservation.committedAt as number);
  }

  /** An older reservation (committed or adopted) terminated in this step, by its event at `version`. */
  terminateReservation(namespace: string, id: string, version: number): void {
    this.terminations.ns.push(namespace);
    this.terminations.id.push(id);
    this.terminations.version.push(version);
  }

  deleteReservation(namespace: string, id: string): void {
    this.deletes.ns.push(namespace);
    this.deletes.id.push(id);
  }

  namespace(namespace: string, state: NamespaceState, last: FeedRow, snapshotVersion: number, definitionsChanged: boolean): void {
    const used: Record<string, RawQuantities> = {};
    for (const name of state.quotas.keys()) used[name] = Resources.canonicalResourceList(state.used.get(name) ?? Resources.EMPTY);
    this.namespaces.ns.push(namespace);
    this.namespaces.version.push(state.version);
    this.namespaces.position.push(last.position);
    this.namespaces.used.push(JSON.stringify(used));
    this.namespaces.released.push(state.releasedCount);
    this.namespaces.at.push(last.at_ms);
    this.namespaces.snapshot.push(snapshotVersion);
    const rest = headRestOf(state);
    this.namespaces.rest.push(Object.keys(rest).length > 0 ? JSON.stringify(rest) : null);
    if (definitionsChanged) {
      const head = headOf(state);
      const definitions: Definitions = { quotas: head.quotas.map(({ used: _, ...q }) => q), limitRanges: head.limitRanges };
      this.definitions.ns.push(namespace);
      this.definitions.state.push(JSON.stringify(definitions));
    }
  }

  /** A snapshot due at `last`: not written by this step's flush but after it commits (snapshot-writer.ts). */
  snapshot(namespace: string, state: NamespaceState, last: FeedRow): void {
    this.snapshotsDue.push({ namespace, state, position: last.position, atMs: last.at_ms });
  }

  async flush(client: pg.PoolClient): Promise<void> {
    if (this.deletes.ns.length > 0) {
      await client.query(
        `DELETE FROM projected_reservations r USING unnest($1::text[], $2::text[]) AS k(ns, id) WHERE r.namespace = k.ns AND r.reservation_id = k.id`,
        [this.deletes.ns, this.deletes.id],
      );
    }
    if (this.inserts.ns.length > 0) {
      await client.query(
        `INSERT INTO projected_reservations (namespace, reservation_id, version, committed_at, terminated_version)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])`,
        [this.inserts.ns, this.inserts.id, this.inserts.version, this.inserts.committed, this.inserts.terminated],
      );
    }
    if (this.commits.ns.length > 0) {
      await client.query(
        `UPDATE projected_reservations r SET committed_at = k.committed
           FROM unnest($1::text[], $2::text[], $3::bigint[]) AS k(ns, id, committed)
          WHERE r.namespace = k.ns AND r.reservation_id = k.id`,
        [this.commits.ns, this.commits.id, this.commits.committed],
      );
    }
    const t = this.terminations;
    if (t.ns.length > 0) {
      await client.query(
        `UPDATE projected_reservations r SET terminated_version = k.version
           FROM unnest($1::text[], $2::text[], $3::bigint[]) AS k(ns, id, version)
          WHERE r.namespace = k.ns AND r.reservation_id = k.id`,
        [t.ns, t.id, t.version],
      );
    }
    const n = this.namespaces;
    await client.query(
      `INSERT INTO projected_namespaces (namespace, version, position, used, released_count, last_event_at, projected_at, snapshot_version, head_rest)
       SELECT ns, version, position, used, released, to_timestamp(at / 1000), clock_timestamp(), snapshot, rest
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::jsonb[], $5::bigint[], $6::float8[], $7::bigint[], $8::jsonb[]) AS t(ns, version, position, used, released, at, snapshot, rest)
       ON CONFLICT (namespace) DO UPDATE SET version = EXCLUDED.version, position = EXCLUDED.position, used = EXCLUDED.used,
         released_count = EXCLUDED.released_count, last_event_at = EXCLUDED.last_event_at, projected_at = EXCLUDED.projected_at,
         snapshot_version = EXCLUDED.snapshot_version, head_rest = EXCLUDED.head_rest`,
      [n.ns, n.version, n.position, n.used, n.released, n.at, n.snapshot, n.rest],
    );
    const d = this.definitions;
    if (d.ns.length > 0) {
      await client.query(
        `INSERT INTO projected_definitions (namespace, state) SELECT * FROM unnest($1::text[], $2::jsonb[])
         ON CONFLICT (namespace) DO UPDATE SET state = EXCLUDED.state WHERE projected_definitions.state IS DISTINCT FROM EXCLUDED.state`,
        [d.ns, d.state],
      );
    }
    for (const [namespace, row] of this.usedRows) this.closeUsedRow(namespace, row);
    if (this.usedVersions.length > 0) {
      await client.query(
        `INSERT INTO projected_used_versions (namespace, version, versions, used, shared)
         SELECT r.namespace, r.version, r.versions, r.used, r.shared
           FROM jsonb_to_recordset($1::jsonb) AS r(namespace text, version bigint, versions bigint[], used jsonb, shared jsonb)`,
        [`[${this.usedVersions.join(',')}]`],
      );
    }
    if (this.quotaVersions.length > 0) {
      await client.query(
        `INSERT INTO projected_quota_versions (namespace, version, quotas)
         SELECT r.namespace, r.version, r.quotas FROM jsonb_to_recordset($1::jsonb) AS r(namespace text, version bigint, quotas jsonb)`,
        [`[${this.quotaVersions.join(',')}]`],
      );
    }
    await this.sharedSeries.flush(client);
  }
}
