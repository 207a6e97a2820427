/**
 * How the ledger reads PostgreSQL's errors: which mean "another transaction got there first,
 * run it again" and which mean "the connection is gone".
 */

/** An append found the stream's head at another version than it read. */
export class VersionConflict extends Error {
  constructor(namespace: string, expected: number) {
    super(`namespace ${namespace}: the stream moved past version ${expected}`);
    this.name = 'VersionConflict';
  }
}

interface PgError {
  readonly code?: string;
  readonly constraint?: string;
  readonly message?: string;
}

/** Unique keys whose violation means a concurrent writer won the race (retrying re-reads it). */
const RACE_CONSTRAINTS = new Set(['namespace_heads_pkey', 'reservations_pkey', 'admission_decisions_request_key']);

/**
 * A stream's version taken twice: each partition of ledger_events has its own unique
 * (namespace, version) index, `ledger_events_stream_version_<partition>` (a partitioned table
 * cannot have one across partitions; migrations/1795900001000). The heads' compare-and-set is
 * what keeps a version from being written twice; this fires only if it failed within a month.
 */
const STREAM_VERSION_PREFIX = 'ledger_events_stream_version';

const isRaceConstraint = (constraint: string): boolean => RACE_CONSTRAINTS.has(constraint) || constraint.startsWith(STREAM_VERSION_PREFIX);

/** Why a transaction lost to a concurrent one: each is retried from the start. */
export type ConflictCause =
  /** SQLSTATE 40001 (SERIALIZABLE found a dangerous structure, or a concurrent update) or 40P01 (deadlock). */
  | 'serialization'
  /** The head was not at the version read: the compare-and-set wrote nothing. */
  | 'version'
  /** A unique key a concurrent writer took first (the same request key, a first head). */
  | 'unique'
  /** Another writer held the head (row-locked) when the group read it: that namespace alone is retried. */
  | 'locked';

export function conflictCause(error: unknown): ConflictCause | undefined {
  if (error instanceof VersionConflict) return 'version';
  const e = error as PgError | undefined;
  if (!e || typeof e.code !== 'string') return undefined;
  if (e.code === '40001' || e.code === '40P01') return 'serialization';
  return e.code === '23505' && e.constraint !== undefined && isRaceConstraint(e.constraint) ? 'unique' : undefined;
}

/** SQLSTATE 40001 (serialization failure), 40P01 (deadlock), a lost append race. */
export function isRetryableConflict(error: unknown): boolean {
  return conflictCause(error) !== undefined;
}

/**
 * The server went away or is not accepting connections (restart, pg_terminate_backend, network):
 * no connection, one lost or timed out, the server shutting down or starting (57P0x), a
 * connection exception (08xxx); looked for in the driver's error too when TypeORM wraps it. The
 * one check of the write path and the read path (read-path.ts) alike.
 */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown; driverError?: unknown } | undefined;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^(08|57P)/.test(code)) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|the database system is (starting up|shutting down)/i.test(
      message,
    )
  )
    return true;
  return e.driverError !== undefined && e.driverError !== error ? isConnectionError(e.driverError) : false;
}

/** Any error the database raised (as opposed to one our own code threw). */
export function isDatabaseError(error: unknown): boolean {
  const e = error as PgError | undefined;
  return !!e && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code);
}

/** A statement ran past statement_timeout (57014). */
export function isTimeout(error: unknown): boolean {
  return (error as PgError | undefined)?.code === '57014';
}
