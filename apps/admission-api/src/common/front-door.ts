import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { Buffer } from 'node:buffer';
import { parse } from 'node:querystring';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import type { Request, RequestHandler, Response } from 'express';

/** The few parts of Express's request and response that the front door's handlers read, on Node's own objects. */
interface ExpressShaped {
  path: string;
  originalUrl: string;
  query: Record<string, unknown>;
  params: Record<string, string>;
  res: ServerResponse;
}

function status(this: ServerResponse, code: number): ServerResponse {
  this.statusCode = code;
  return this;
}

/** As Express's `res.json()` answers: one JSON text, `application/json; charset=utf-8`, its length (no ETag: nobody asks for one). */
function json(this: ServerResponse, body: unknown): ServerResponse {
  const text = JSON.stringify(body) ?? '';
  if (!this.hasHeader('content-type')) this.setHeader('Content-Type', 'application/json; charset=utf-8');
  this.setHeader('Content-Length', Buffer.byteLength(text));
  this.end(text);
  return this;
}

/**
 * Gives Node's request and response the parts of Express's that our middleware, guards, handlers
 * and filter use (`path`, `query`, `params`, `originalUrl`, `res`; `status()`, `json()`): own
 * properties set in the same order every time. Express instead swaps both objects' prototypes
 * on every request (app.handle), which on Node 20 costs more than Node's whole HTTP parsing
 * (bench/frameworks.ts' setprototypeof variant: docs/benchmarks.md, "Frameworks beside the floor").
 */
function expressShaped(request: IncomingMessage, response: ServerResponse, path: string, queryAt: number): [Request, Response] {
  const url = request.url ?? '/';
  const shaped = request as IncomingMessage & ExpressShaped;
  shaped.path = path;
  shaped.originalUrl = url;
  // Express 5's default query parser ('simple') is node:querystring's, and Express parses on
  // each read: a query string is parsed only by whoever reads it (JsonHygiene, after the
  // AuthGuard), never for a stranger's request that authentication refuses.
  if (queryAt < 0) shaped.query = {};
  else Object.defineProperty(shaped, 'query', { configurable: true, enumerable: true, get: () => parse(url.slice(queryAt + 1)) });
  shaped.params = {};
  shaped.res = response;
  Object.assign(response, { req: request, status, json });
  return [request as unknown as Request, response as unknown as Response];
}

/**
 * The admission webhook's way in, before Express: kube-apiserver calls it for every write it
 * admits, and Express's own per-request work (prototype swaps, its router's layers, a final
 * handler) was a fifth of the API's CPU per admission on Node 20 (docs/benchmarks.md,
 * "Frameworks beside the floor"). A request that `handled` picks (by method and path: `POST`, a
 * path without `?`-part or scheme) runs through `handlers` in order, as Express would run them
 * (`next()` goes on, `next(error)` or a throw goes to `filter`, as Nest's would). They are the
 * same functions `app.use` runs for every other request, which goes on to Express unchanged.
 */
export function frontDoor(handled: (method: string, path: string) => boolean, handlers: readonly RequestHandler[], filter: ExceptionFilter, express: RequestListener): RequestListener {
  return (request, response) => {
    const url = request.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    if (!path.startsWith('/') || !handled(request.method ?? '', path)) return express(request, response);
    const [req, res] = expressShaped(request, response, path, queryAt);
    const fail = (error: unknown): void => filter.catch(error, hostOf(req, res));
    let at = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined && error !== null) return fail(error);
      const handler = handlers[at++];
      // None answered: the last handler is the route's, which always does; Express would 404 here.
      if (!handler) return fail(new Error(`no handler answered ${request.method} ${path}`));
      try {
        void handler(req, res, next);
      } catch (thrown) {
        fail(thrown);
      }
    };
    next();
  };
}

/** What an exception filter reads of a request in Nest: switchToHttp() and the two objects. */
function hostOf(request: Request, response: Response): ArgumentsHost {
  const args = [request, response];
  const http = { getRequest: () => request, getResponse: () => response, getNext: () => () => undefined };
  return { getArgs: () => args, getArgByIndex: (index: number) => args[index], getType: () => 'http', switchToHttp: () => http } as unknown as ArgumentsHost;
}

/** Puts `door` in front of the Express application that `server` was created with (Nest's ExpressAdapter: http.createServer(app)). */
export function installFrontDoor(server: Server | HttpsServer, express: RequestListener, door: RequestListener): void {
  if (!server.listeners('request').includes(express)) throw new Error('the HTTP server does not call the Express application: the front door has nothing to stand in front of');
  server.removeListener('request', express);
  server.on('request', door);
}
