/** Each network call of a source gives up after this long unless configured otherwise. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Most objects one listing may hold; past it the listing fails rather than exhaust memory. */
export const DEFAULT_MAX_OBJECTS = 50_000;
/** Largest response body a source reads (per page for Kubernetes). */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** A limit option: a positive whole number, or the default. A bad value is a configuration error. */
export function positiveInteger(source: string, name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new Error(`${source} inventory: ${name} must be a positive whole number, got ${value}`);
  return value;
}

/** One network call's signal: the caller's, joined with the call's own timeout. */
export interface CallDeadline {
  readonly signal: AbortSignal;
  /** Why the signal fired, for the error message; undefined while it has not. */
  why(): string | undefined;
}

export function callDeadline(timeoutMs: number, ...callers: readonly (AbortSignal | undefined)[]): CallDeadline {
  const timeout = AbortSignal.timeout(timeoutMs);
  const given = callers.filter((s): s is AbortSignal => s !== undefined);
  const signal = given.length === 0 ? timeout : AbortSignal.any([...given, timeout]);
  return {
    signal,
    why: () => (given.some((s) => s.aborted) ? 'aborted by the caller' : timeout.aborted ? `no answer within ${timeoutMs} ms` : undefined),
  };
}

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 500);
