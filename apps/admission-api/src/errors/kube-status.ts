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

export function kubeStatus(code: number, message: string, details?: Record<string, unknown>, reason = reasonFor(code)): KubeStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
    ...(details ? { details } : {}),
  };
}
