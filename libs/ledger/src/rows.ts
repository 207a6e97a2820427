import {
  EVENT_SCHEMA_VERSION,
  LEDGER_EVENT_TYPES,
  originOf,
  type LedgerEventType,
  type RecordedEvent,
  type RecordedReservation,
  type ReleaseReason,
} from '@quota/domain';
import type { ReservationJson } from './head.js';
import { LedgerError } from './ledger-error.js';
import type { AdmissionResult, DecisionView } from './ledger.types.js';

/**
 * The ledger's rows as PostgreSQL returns them, in one place: the columns each read selects,
 * their types, and the decoding of an event row into a domain event, which checks what it
 * is given instead of casting it.
 */

// ------------------------------------------------------------------------ events

/** A `ledger_events` row as the audit reads select it (EVENT_COLUMNS). */
export interface EventRow {
  readonly position: string;
  readonly version: string;
  readonly type: string;
  readonly recorded_at: Date;
  readonly actor: string;
  readonly on_behalf_of: string | null;
  readonly request_id: string | null;
  readonly data: unknown;
}

export const EVENT_COLUMNS = 'position::text AS position, version, type, recorded_at, actor, on_behalf_of, request_id, data';

/** What a fold reads of an event (FOLD_COLUMNS): enough to decode it. */
export interface FoldRow {
  readonly version: string;
  readonly type: string;
  readonly schema_version: number;
  readonly data: unknown;
  readonly at_ms: number;
}

export const FOLD_COLUMNS =
  'version::text AS version, type, schema_version, data, (extract(epoch from recorded_at) * 1000)::float8 AS at_ms';

const KNOWN_TYPES: ReadonlySet<string> = new Set(LEDGER_EVENT_TYPES);

/**
 * An event row as the domain's event. A type this build does not know, or a schema version
 * newer than it writes (a newer replica wrote it during a rolling upgrade), cannot be folded
 * correctly: it is refused with a coded error naming both, never guessed at.
 */
export function decodeEvent(row: FoldRow): RecordedEvent {
  if (!KNOWN_TYPES.has(row.type)) {
    throw new LedgerError(
      'Undecodable',
      `the ledger holds an event of type "${row.type}" (version ${row.version}) that this build does not know; upgrade this replica`,
    );
  }
  if (!Number.isInteger(row.schema_version) || row.schema_version < 1 || row.schema_version > EVENT_SCHEMA_VERSION) {
    throw new LedgerError(
      'Undecodable',
      `the ledger holds a ${row.type} event (version ${row.version}) of schema version ${row.schema_version}; this build reads versions 1 to ${EVENT_SCHEMA_VERSION}; upgrade this replica`,
    );
  }
  if (row.data === null || typeof row.data !== 'object' || Array.isArray(row.data)) {
    throw new LedgerError('Undecodable', `the ledger's ${row.type} event (version ${row.version}) has no data object`);
  }
  return { type: row.type as LedgerEventType, data: row.data, version: Number(row.version), at: Math.floor(row.at_ms) } as RecordedEvent;
}

// ------------------------------------------------------------------------ reservations

/** A `reservations` row as RESERVATION_COLUMNS selects it (released rows included). */
export interface ReservationRow {
  readonly reservation_id: string;
  readonly status: ReservationRecord['status'];
  readonly data: ReservationJson;
  readonly released_at_ms: number | null;
  readonly release_reason: ReleaseReason | null;
  readonly event_versions: (string | number)[];
  readonly request_id: string | null;
}

export const RESERVATION_COLUMNS = `reservation_id, status, data, (extract(epoch from released_at) * 1000)::float8 AS released_at_ms,
  release_reason, event_versions, request_id`;

/** A reservation as the ledger holds it: what the decider is told of it, and the row it is written back as. */
export interface ReservationRecord extends RecordedReservation {
  readonly json: ReservationJson;
  readonly eventVersions: readonly number[];
  readonly requestId?: string;
}

export function recordOf(row: ReservationRow): ReservationRecord {
  return recordFromJson(row.data, row.status, {
    ...(row.released_at_ms === null ? {} : { releasedAt: Math.round(row.released_at_ms) }),
    ...(row.release_reason === null ? {} : { releaseReason: row.release_reason }),
    eventVersions: row.event_versions.map(Number),
    ...(row.request_id === null ? {} : { requestId: row.request_id }),
  });
}

export function recordFromJson(
  json: ReservationJson,
  status: ReservationRecord['status'],
  rest: Pick<ReservationRecord, 'eventVersions' | 'releasedAt' | 'releaseReason' | 'requestId'>,
): ReservationRecord {
  const origin = originOf(json, rest.requestId);
  return {
    id: json.id,
    object: json.object,
    origin,
    status,
    ...(json.expiresAt === undefined ? {} : { expiresAt: json.expiresAt }),
    json,
    ...rest,
  };
}

// ------------------------------------------------------------------------ decisions

export const DECISION_COLUMNS =
  'id::text AS id, decided_at, source, request_key, operation, resource, kind, name, object_uid, requester, on_behalf_of, dry_run, allowed, result';

/** An `admission_decisions` row as DECISION_COLUMNS selects it. */
export interface DecisionRow {
  readonly id: string;
  readonly decided_at: Date;
  readonly source: DecisionView['source'];
  readonly request_key: string | null;
  readonly operation: string;
  readonly resource: string;
  readonly kind: string | null;
  readonly name: string | null;
  readonly object_uid: string | null;
  readonly requester: string;
  readonly on_behalf_of: string | null;
  readonly dry_run: boolean;
  readonly allowed: boolean;
  readonly result: AdmissionResult;
}

/** An event as it will be inserted. */
export interface PendingEvent {
  readonly version: number;
  readonly type: string;
  readonly data: unknown;
  readonly request_id: string | null;
  readonly actor: string;
  readonly on_behalf_of: string | null;
  readonly at: number;
}
