/** HTTP code → Kubernetes `StatusReason`: what the API puts in a `Status`, and what quotactl names an answer that is not one. */
export const STATUS_REASONS: Readonly<Record<number, string>> = {
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
  502: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** The reason for an HTTP code; a code the table lacks is an InternalError (5xx) or a BadRequest. */
export function statusReason(code: number): string {
  return STATUS_REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest');
}

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
