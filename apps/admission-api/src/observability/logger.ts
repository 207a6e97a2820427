import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { createLogger as createProcessLogger, type Logger } from '@quota/ops';

export { NestPinoLogger } from '@quota/ops';

interface RequestContext {
  readonly requestId: string;
}

const context = new AsyncLocalStorage<RequestContext>();

/** The id of the request being served, wherever in its async call chain the caller is. */
export function currentRequestId(): string | undefined {
  return context.getStore()?.requestId;
}

/** The process logger with the request id of the request in progress on every line. */
export function createLogger(level: string, app: string, destination?: NodeJS.WritableStream): Logger {
  return createProcessLogger(level, app, {
    ...(destination ? { destination } : {}),
    mixin: () => {
      const requestId = currentRequestId();
      return requestId ? { requestId } : {};
    },
  });
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Gives every request an id (the caller's `X-Request-Id` when it is sane, else a new one),
 * answers it in `X-Request-Id`, runs the rest of the request inside its context, and logs
 * one line when the answer is sent.
 */
export function requestContext(logger: Logger) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const incoming = request.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    request.headers['x-request-id'] = requestId;
    response.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    context.run({ requestId }, () => {
      response.once('finish', () => {
        const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
        const fields = {
          method: request.method,
          path: request.path,
          status: response.statusCode,
          durationMs: Math.round(durationMs * 100) / 100,
        };
        if (QUIET_PATHS.has(request.path)) logger.debug(fields, 'request');
        else if (response.statusCode >= 500) logger.error(fields, 'request');
        else logger.info(fields, 'request');
      });
      next();
    });
  };
}
