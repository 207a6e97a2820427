import type { NextFunction, Request, Response } from 'express';
import { withReadAfter } from '@quota/ledger';
import { POSITION } from '../kube/query-formats.js';

/**
 * Carries a request's `?minPosition=` to the ledger's read path (AsyncLocalStorage): its
 * history reads go to the read replica only once it has replayed that event, else to the primary.
 * The value is validated again by each route's DTO (ReadAfterQuery), which answers 400 for a bad one.
 * A request without a query string (every admission) runs in no scope: the read path then reads
 * any state the standby has, as for an empty one, and the request costs no async scope.
 */
export function readAfterContext(): (request: Request, response: Response, next: NextFunction) => void {
  return (request, _response, next) => {
    const url = request.originalUrl || request.url || '/';
    if (!url.includes('?')) return next();
    const raw = new URL(url, 'http://local').searchParams.get('minPosition');
    withReadAfter(raw !== null && POSITION.test(raw) ? raw : undefined, next);
  };
}
