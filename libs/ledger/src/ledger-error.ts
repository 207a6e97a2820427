/**
 * Failures of a ledger operation that the caller should answer, each with a code the HTTP
 * edge maps to a Kubernetes Status (anything else is a bug: 500).
 */
export type LedgerErrorCode =
  /** The namespace has no stream: no quota or limit range was ever defined there (404). */
  | 'NamespaceNotFound'
  /** The quota, limit range or reservation does not exist (404). */
  | 'NotFound'
  /** A stale `resourceVersion`, or a reservation that cannot take this step any more (409). */
  | 'Conflict'
  /** A write the namespace's limits refuse: one ResourceQuota or LimitRange too many (403, as Kubernetes refuses a count over quota). */
  | 'Forbidden'
  /** A REST reservation whose TTL ran out before it was committed; it has been released (410). */
  | 'Expired'
  /** An instant before the retention horizon: its events were archived out of the ledger (410; retention.ts). */
  | 'Archived'
  /**
   * The ledger holds an event this build cannot read (an unknown type, a newer schema version):
   * a server problem, answered 500 with the reason, never folded by guessing.
   */
  | 'Undecodable'
  /** A bound of the reservation queue is reached (QUEUE_TOTAL_MAX): retry later (429). */
  | 'TooManyRequests'
  /** The request was not decided: serialization retries ran out, or the database is unreachable (503). */
  | 'Unavailable';

export class LedgerError extends Error {
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
    /** Kubernetes StatusDetails fields: `kind` and `name` of the object concerned. */
    readonly details: { readonly kind?: string; readonly name?: string; readonly retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = 'LedgerError';
  }
}
