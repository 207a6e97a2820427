import { CliConfigError } from '@quota/config';
import { ApiError, TlsError, Unavailable } from './client.js';

/**
 * quotactl's exit codes, a contract for scripts (the help text lists them too):
 *
 * - 0 done;
 * - 1 the server refused (a 4xx not listed below: 400, 409, 410, 422, …), or any other error;
 * - 2 usage error (bad flags or arguments, an unreadable file, invalid YAML): found before
 *   anything was sent;
 * - 3 admission denied (a reservation answered 403 with the decision in `details`);
 * - 4 not found (404);
 * - 5 unauthorized or forbidden (401, or a 403 that is not an admission decision);
 * - 6 server unavailable (refused connection, timeout, 429, 5xx): trying again later may work.
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  denied: 3,
  notFound: 4,
  unauthorized: 5,
  unavailable: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Bad input from the command line or a file; nothing was sent. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A reservation the admission chain refused (ResourceQuota or LimitRanger), not a refused caller. */
export function isAdmissionDenial(error: unknown): error is ApiError {
  return error instanceof ApiError && isDecision(error);
}

/** A 403 from the admission chain carries the decision (`denial`, `stage`); an auth 403 does not. */
function isDecision(error: ApiError): boolean {
  const details = error.details;
  return error.status === 403 && details !== undefined && (details['denial'] !== undefined || details['stage'] !== undefined);
}

export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof UsageError || error instanceof CliConfigError) return EXIT.usage;
  if (error instanceof Unavailable) return EXIT.unavailable;
  if (error instanceof TlsError) return EXIT.failed;
  if (error instanceof ApiError) {
    if (isDecision(error)) return EXIT.denied;
    if (error.status === 404) return EXIT.notFound;
    if (error.status === 401 || error.status === 403) return EXIT.unauthorized;
    // 429 is the rate limiter: like a 5xx, the same request succeeds later.
    if (error.status === 429 || error.status >= 500) return EXIT.unavailable;
    return EXIT.failed;
  }
  return EXIT.failed;
}

/** The line kubectl would print: `Error from server (Reason): message` for an answer, `error: …` otherwise. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (!error.reason) return `Error from server: ${error.message}`;
    return `Error from server (${error.reason}): ${error.message}`;
  }
  if (error instanceof CliConfigError) return `error: ${error.message}`;
  if (error instanceof Error) return `error: ${error.message}`;
  return `error: ${String(error)}`;
}
