import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * Whether the process is on its way out (main.ts: SIGTERM or SIGINT). From that moment
 * /readyz fails its `shutdown` check, as kube-apiserver's does, so that load balancers and
 * the Service's endpoints stop sending here, while every request that still arrives is served
 * as before: a rollout refuses nothing. Only when the drain is over does the server close.
 */
@Injectable()
export class ShutdownState {
  private signal: string | undefined;

  /** The signal that started the shutdown; undefined while the process is serving normally. */
  get reason(): string | undefined {
    return this.signal;
  }

  begin(signal: string): void {
    this.signal ??= signal;
  }
}

/**
 * Once the shutdown has begun, every answer asks its client to close the connection: a client
 * that keeps connections alive (kube-apiserver does) then opens its next one through the
 * Service, to a replica that stays. Closing idle connections from this side instead would race
 * with a request being sent on one, and that request would fail.
 */
export function closeConnectionsWhenShuttingDown(state: ShutdownState) {
  return (_request: Request, response: Response, next: NextFunction): void => {
    if (state.reason !== undefined) response.setHeader('Connection', 'close');
    next();
  };
}
