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
const RACE_CONSTRAINTS = new Set([
  'ledger_events_stream_version',
  'namespace_heads_pkey',
  'reservations_pkey',
  'admission_decisions_request_key',
]);

/** SQLSTATE 40001 (serialization failure), 40P01 (deadlock), a lost append race. */
export function isRetryableConflict(error: unknown): boolean {
  if (error instanceof VersionConflict) return true;
  const e = error as PgError | undefined;
  if (!e || typeof e.code !== 'string') return false;
  if (e.code === '40001' || e.code === '40P01') return true;
  return e.code === '23505' && e.constraint !== undefined && RACE_CONSTRAINTS.has(e.constraint);
}

/** The server went away or is not accepting connections (restart, pg_terminate_backend, network). */
export function isConnectionError(error: unknown): boolean {
  const e = error as (PgError & { errno?: string }) | undefined;
  if (!e) return false;
  const code = e.code ?? '';
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
  const message = e.message ?? '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(message);
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

/**
 * Keeps a checked-out client's 'error' event from ending the process. While a client is out
 * of the pool, an error the server sends between two statements (pg_terminate_backend, a
 * shutdown) is emitted on it, and an 'error' event nobody listens to is fatal; the next
 * statement fails with a connection error instead, which the caller handles. Returns the undo,
 * to call before the client goes back to the pool.
 */
export function guardCheckedOut(client: { on(event: 'error', listener: () => void): unknown; removeListener(event: 'error', listener: () => void): unknown }): () => void {
  const ignore = (): void => undefined;
  client.on('error', ignore);
  return () => void client.removeListener('error', ignore);
}
