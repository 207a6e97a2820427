import { statusReason, type KubeStatus } from '@quota/api';
import { currentRequestId } from '../observability/logger.js';

export type { KubeStatus } from '@quota/api';

/** HTTP code → Kubernetes `StatusReason` (the contract's table, shared with quotactl). */
export const reasonFor = statusReason;

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

/** A refusal raised while reading a body: its Status is the answer. */
export class BodyRefused extends Error {
  readonly type = 'quota-ledger.body.refused';
  /** body-parser (http-errors) keeps the status of an error its `verify` throws. */
  status: number;
  statusCode: number;
  constructor(readonly kubeStatus: KubeStatus) {
    super(kubeStatus.message);
    this.name = 'BodyRefused';
    this.status = this.statusCode = kubeStatus.code;
  }
}
