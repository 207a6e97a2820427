import type { NamespaceState } from '@quota/domain';
import type { DataSource } from 'typeorm';
import { reservationFromJson, stateOf, type HeadJson, type ReservationJson } from './head.js';
import { LedgerError } from './ledger-error.js';
import { select } from './sql.js';

/**
 * What readers of the past need to know about retention (README, "Retention and archiving").
 * Whole months of `ledger_events` leave the ledger with `npm run ledger:archive`; the newest
 * archived month's end is the **retention horizon**. From the horizon on, usage at an instant is
 * exact: each stream's state at its last archived event is kept (`ledger_horizon_states`), and
 * every later event is retained. Before it, the ledger cannot answer: the events are in the
 * NDJSON archive, not here, and a reader says so (`archivedInstant`) instead of folding what is
 * left.
 *
 * For `usage?at=` (and each point of a series), with `horizon = await retentionHorizon(ds)`:
 * - `at` before the horizon: throw `archivedInstant(namespace, at, horizon)` (410);
 * - otherwise the target version is the last retained event recorded at or before `at`, or,
 *   when there is none, the stream's horizon state's version (the namespace may have been idle
 *   since before the horizon); the fold starts from whichever is newer at or below the target,
 *   the newest snapshot or `horizonState(...)`, never from the empty state once a horizon
 *   state exists (the events below it are gone).
 */

/** How long a process trusts the horizon it read: it moves only when an operator archives a month. */
const HORIZON_CACHE_MS = 5_000;

const cache = new WeakMap<DataSource, { readonly horizon: string | undefined; readonly readAt: number }>();

/**
 * The retention horizon (RFC 3339, UTC): events recorded before it were archived. Undefined
 * while nothing was. Read from the data source it is given (a standby answers for the data it
 * holds), cached for a few seconds per data source.
 */
export async function retentionHorizon(dataSource: DataSource): Promise<string | undefined> {
  const cached = cache.get(dataSource);
  if (cached && Date.now() - cached.readAt < HORIZON_CACHE_MS) return cached.horizon;
  const rows = await select<{ horizon: Date | null }>(dataSource, `SELECT max(range_end) AS horizon FROM ledger_retention`);
  const horizon = rows[0]?.horizon?.toISOString();
  cache.set(dataSource, { horizon, readAt: Date.now() });
  return horizon;
}

/** Forgets the cached horizon (the archive command, after it moved it; tests). */
export function forgetRetentionHorizon(dataSource: DataSource): void {
  cache.delete(dataSource);
}

/** Whether the ledger can no longer answer for `at` (RFC 3339): it is before the horizon. */
export function isBeforeHorizon(at: string, horizon: string | undefined): boolean {
  return horizon !== undefined && Date.parse(at) < Date.parse(horizon);
}

/**
 * The answer for an instant before the horizon: 410, as the API server answers a watch from a
 * resourceVersion it no longer holds (Kubernetes Status reason `Expired`), naming the horizon so
 * the caller knows what the ledger still answers and where to look for the rest.
 */
export function archivedInstant(namespace: string, at: string, horizon: string): LedgerError {
  return new LedgerError(
    'Archived',
    `usage of namespace "${namespace}" at ${at} is no longer in the ledger: events recorded before ${horizon} were archived (ask for an instant at or after ${horizon}, or read the archive)`,
    { kind: 'namespaces', name: namespace },
  );
}

/** A stream's state at its last archived event: where a fold of its retained events starts. */
export interface HorizonState {
  readonly namespace: string;
  /** The last archived version; the stream's retained events are those above it. */
  readonly version: number;
  readonly position: string;
  /** When that event was recorded (RFC 3339). */
  readonly recordedAt: string;
  /** The archive that wrote it: its horizon. */
  readonly horizon: string;
  /** The namespace's state at `version`; undefined for a shared quota's stream (definitions only). */
  readonly state?: NamespaceState;
}

/**
 * The newest horizon state of the stream at or below `version` (any, without it), or undefined
 * when none of its events was archived: then its retained events start at version 1.
 */
export async function horizonState(dataSource: DataSource, namespace: string, version?: number): Promise<HorizonState | undefined> {
  const rows = await select<{ version: string; position: string; recorded_at: Date; horizon: Date; state: HeadJson | null; reservations: ReservationJson[] | null }>(
    dataSource,
    `SELECT version::text AS version, position::text AS position, recorded_at, horizon, state, reservations FROM ledger_horizon_states
      WHERE namespace = $1 AND ($2::bigint IS NULL OR version <= $2::bigint)
      ORDER BY ledger_horizon_states.version DESC LIMIT 1`,
    [namespace, version ?? null],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    namespace,
    version: Number(row.version),
    position: row.position,
    recordedAt: row.recorded_at.toISOString(),
    horizon: row.horizon.toISOString(),
    ...(row.state ? { state: stateOf(Number(row.version), row.state, (row.reservations ?? []).map(reservationFromJson)) } : {}),
  };
}
