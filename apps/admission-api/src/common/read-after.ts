import type { NextFunction, Request, Response } from 'express';
import { withReadAfter } from '@quota/ledger';
import { POSITION } from './query-formats.js';

/**
 * Carries a request's `?minPosition=` to the ledger's read path (AsyncLocalStorage): its
 * history reads go to the read replica only once it has replayed that event, else to the primary.
 * The value is validated again by each route's DTO (ReadAfterQuery), which answers 400 for a bad one.
 */
export function readAfterContext(): (request: Request, response: Response, next: NextFunction) => void {
  return (request, _response, next) => {
    const raw = new URL(request.originalUrl || request.url || '/', 'http://local').searchParams.get('minPosition');
    withReadAfter(raw !== null && POSITION.test(raw) ? raw : undefined, next);
  };
}
