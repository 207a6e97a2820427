import { randomUUID } from 'node:crypto';
import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainError, FIELD_ERRORS_MAX } from '@quota/domain';
import { isConnectionError, LedgerError, type LedgerErrorCode } from '@quota/ledger';
import { BodyRefused, kubeStatus, type KubeStatus } from './kube-status.js';

/** Errors body-parser raises (http-errors) carry an HTTP status, `expose` and usually a `type`. */
interface HttpishError {
  readonly message?: string;
  readonly status?: number;
  readonly statusCode?: number;
  readonly type?: string;
  readonly expose?: boolean;
}

function bodyStatus(error: HttpishError | undefined): KubeStatus | undefined {
  const code = error?.status ?? error?.statusCode;
  if (!error || error.expose !== true || typeof code !== 'number' || code < 400 || code >= 500) return undefined;
  switch (error.type) {
    case 'entity.too.large':
      return kubeStatus(413, 'the request body is larger than the server accepts');
    case 'entity.parse.failed':
      return kubeStatus(400, `the request body is not valid JSON: ${error.message}`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return kubeStatus(415, 'the request body must be UTF-8 JSON');
    default:
      // Aborted, truncated, a length that lies, compressed data that does not inflate.
      return kubeStatus(400, 'the request body could not be read');
  }
}

const LEDGER_CODES: Readonly<Record<LedgerErrorCode, number>> = {
  NamespaceNotFound: 404,
  NotFound: 404,
  Conflict: 409,
  Forbidden: 403,
  Expired: 410,
  Archived: 410,
  Undecodable: 500,
  Unavailable: 503,
  TooManyRequests: 429,
};

/**
 * The one place errors become HTTP answers. Domain errors carry a code and map to 4xx;
 * anything unknown is a 500 that names a request id and shows no internals.
 */
@Catch()
export class KubeStatusFilter implements ExceptionFilter {
  private readonly logger = new Logger('errors');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const status = this.toStatus(error, request);
    if (response.headersSent) return;
    // Every error names its request (also in X-Request-Id), so a user's report finds the log lines.
    const requestId = request.headers['x-request-id'];
    const details = typeof requestId === 'string' ? { ...status.details, requestId } : status.details;
    // A 503 the caller should repeat (the ledger unreachable, a failover, a commit of unknown outcome) says when, as HTTP does.
    const retryAfter = (status.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    if (typeof retryAfter === 'number') response.setHeader('Retry-After', String(retryAfter));
    response.status(status.code).json(details ? { ...status, details } : status);
  }

  private toStatus(error: unknown, request: Request): KubeStatus {
    if (error instanceof BodyRefused) return error.kubeStatus;
    if (error instanceof DomainError) {
      // Readable but invalid objects are 422 Invalid; unreadable ones 400, as the API server answers,
      // a quantity that does not parse among them (it fails decoding there, before validation).
      const code = error.code === 'ObjectInvalid' ? 422 : 400;
      return kubeStatus(code, error.message, error.causes.length ? { causes: error.causes.slice(0, FIELD_ERRORS_MAX) } : undefined);
    }
    if (error instanceof LedgerError) {
      const { retryAfterSeconds, ...details } = error.details;
      return kubeStatus(LEDGER_CODES[error.code], error.message, {
        ...details,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      });
    }
    if (error instanceof HttpException) {
      // Nest wraps body-parser's errors; their `type` says what went wrong with the body.
      const fromBody = bodyStatus(error.cause as HttpishError | undefined);
      if (fromBody) return fromBody;
      const code = error.getStatus();
      if (code === 404 && !request.route) {
        return kubeStatus(404, 'the server could not find the requested resource');
      }
      const body = error.getResponse();
      if (typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'Status') {
        return body as KubeStatus;
      }
      return kubeStatus(code, error.message);
    }
    const fromBody = bodyStatus(error as HttpishError);
    if (fromBody) return fromBody;
    // A read that lost its database (restart, failover, terminated backend): the caller retries, as for writes.
    if (isConnectionError(error)) return kubeStatus(503, 'the ledger database is unreachable; retry', { retryAfterSeconds: 1 });
    const requestId = (request.headers['x-request-id'] as string | undefined) ?? randomUUID();
    this.logger.error({ requestId, err: error instanceof Error ? error.stack : String(error) });
    return kubeStatus(500, `internal error (request id ${requestId})`, { requestId });
  }
}
