import { Server as HttpServer, type IncomingMessage, type Server } from 'node:http';
import { Server as HttpsServer } from 'node:https';
import { Server as NetServer, type Socket } from 'node:net';
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

/** How long connections still open when the drain ends get to deliver a request, in ms (each is then served and closed). */
export const CLOSE_GRACE_MS = 1000;
const CLOSE_POLL_MS = 25;

/**
 * The end of the drain, before app.close(): stop accepting connections, then give those still
 * open up to `graceMs` to finish. http.Server's close() would at once destroy every connection
 * with no request in progress, and that includes one accepted a moment ago whose request has
 * arrived but is not parsed yet (or a TLS connection still shaking hands): its client sees a
 * reset after it sent its request, and cannot tell whether it was admitted (seen: 15 of
 * 4,163 in one run). Here only the listener closes; a request that arrives on an open connection
 * within the grace is served, with Connection: close, and its connection then closes. Whatever
 * is still open after the grace is left to app.close(): connections that never sent anything.
 * A connection the kernel completed but this process never accepted is refused by the kernel
 * when the listener closes; nothing here can serve it.
 */
export async function stopAccepting(server: Server, graceMs = CLOSE_GRACE_MS): Promise<void> {
  NetServer.prototype.close.call(server);
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && (await openConnections(server)) > 0) await new Promise((resolve) => setTimeout(resolve, CLOSE_POLL_MS));
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}

/**
 * Once the server closes (app.close(), after the drain), a connection that never carried a
 * request is ended too. Node's server.close() ends idle keep-alive connections but waits for
 * those, and kube-apiserver leaves some: under load Go's HTTP client dials spare connections
 * and keeps in its pool those a request did not need. One of them held every shutdown of ours
 * until SHUTDOWN_TIMEOUT_MS, which then exited 1. Ending it races a request only as Node's own
 * closing of idle connections does.
 */
export function endUnusedConnectionsOnClose(server: HttpServer | HttpsServer): void {
  const unused = new Set<Socket>();
  // Over TLS a request's socket is the TLSSocket of 'secureConnection', not the TCP one.
  const connected = server instanceof HttpsServer ? 'secureConnection' : 'connection';
  server.on(connected, (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  server.on('request', (request: IncomingMessage) => unused.delete(request.socket));
  server.prependListener('close', () => unused.clear());
  const close = server.close.bind(server);
  server.close = (callback?: (error?: Error) => void) => {
    const closing = close(callback);
    for (const socket of unused) socket.destroy();
    return closing;
  };
}
