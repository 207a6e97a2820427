import type { NamespaceState } from '@quota/domain';
import type { DataSource } from 'typeorm';
import { reservationFromJson, stateOf, type HeadJson, type ReservationJson } from '../head.js';
import { LedgerError } from '../ledger-error.js';
import { select } from '../sql.js';

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

/**
 * The stream's last event recorded at or before the instant `i.at` (SQL of a LATERAL subquery
 * on a stream `$1`, columns version and position): among the retained events, or, when every
 * event up to then was archived (a stream idle since before the horizon), the last archived
 * one, which the archive kept in ledger_horizon_states.
 */
export const LAST_EVENT_AT = `(SELECT e.version, e.position FROM ledger_events e WHERE e.namespace = $1 AND e.recorded_at <= i.at
            ORDER BY e.recorded_at DESC, e.version DESC LIMIT 1)
          UNION ALL
          (SELECT h.version, h.position FROM ledger_horizon_states h WHERE h.namespace = $1 AND h.recorded_at <= i.at
            ORDER BY h.version DESC LIMIT 1)
          ORDER BY version DESC LIMIT 1`;

/**
 * Where a fold of namespace `$1` up to version `upTo` (an SQL expression) starts (SQL of a
 * subquery, columns version, state, reservations; no row: from the empty state): the newer of
 * its newest snapshot and its newest horizon state at or below `upTo`. Never a snapshot older
 * than the horizon state: the events between them were archived.
 */
export const FOLD_START = (upTo: string): string => `SELECT s.version, s.state, s.reservations FROM (
         (SELECT u.version, u.state, u.reservations FROM usage_snapshots u WHERE u.namespace = $1 AND u.version <= ${upTo} ORDER BY u.version DESC LIMIT 1)
         UNION ALL
         (SELECT h.version, h.state, h.reservations FROM ledger_horizon_states h WHERE h.namespace = $1 AND h.version <= ${upTo} AND h.state IS NOT NULL
           ORDER BY h.version DESC LIMIT 1)
       ) AS s ORDER BY s.version DESC LIMIT 1`;

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
  return archived(`namespace "${namespace}"`, at, horizon, { kind: 'namespaces', name: namespace });
}

/** As archivedInstant, for a shared quota's usage (its key names its kind and name). */
export function archivedSharedInstant(key: string, at: string, horizon: string): LedgerError {
  const [kind = key, ...name] = key.split('/');
  return archived(`"${key}"`, at, horizon, { kind, name: name.join('/') });
}

function archived(subject: string, at: string, horizon: string, details: { kind: string; name: string }): LedgerError {
  return new LedgerError(
    'Archived',
    `usage of ${subject} at ${at} is no longer in the ledger: events recorded before ${horizon} were archived (ask for an instant at or after ${horizon}, or read the archive)`,
    details,
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
  const rows = await select<{
    version: string;
    position: string;
    recorded_at: Date;
    horizon: Date;
    state: HeadJson | null;
    reservations: ReservationJson[] | null;
  }>(
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
