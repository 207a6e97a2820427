import { currentRequestId } from '../observability/logger.js';

/**
 * Kubernetes' `Status` object: every error outside the webhook is answered with one, so a
 * platform engineer's tools (and kubectl-like clients) read our errors as they read the API
 * server's.
 */
export interface KubeStatus {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure';
  readonly message: string;
  readonly reason: string;
  readonly code: number;
  readonly details?: Record<string, unknown>;
}

/** HTTP code → Kubernetes `StatusReason`. */
const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function reasonFor(code: number): string {
  return REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest');
}

/**
 * `details` with the id of the request being answered (the X-Request-Id answered with it), when
 * there is one: a user's report of any refusal, a denial included, finds its log lines.
 */
export function withRequestId(details?: Record<string, unknown>): Record<string, unknown> | undefined {
  const requestId = currentRequestId();
  return requestId === undefined ? details : { ...details, requestId };
}

/** A `Status`; built while a request is served (a denial returned, an error thrown), it names the request in `details.requestId`. */
export function kubeStatus(code: number, message: string, details?: Record<string, unknown>, reason = reasonFor(code)): KubeStatus {
  const named = withRequestId(details);
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...(named ? { details: named } : {}),
  };
}
