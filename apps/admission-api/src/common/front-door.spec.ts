import { createServer, request as send, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { frontDoor, installFrontDoor } from './front-door.js';

/** A filter that answers what it caught, as KubeStatusFilter answers through `status().json()`. */
const filter: ExceptionFilter = {
  catch(error: unknown, host: ArgumentsHost) {
    host
      .switchToHttp()
      .getResponse<Response>()
      .status(500)
      .json({ caught: error instanceof Error ? error.message : String(error) });
  },
};

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A server made as Nest's ExpressAdapter makes it, with the front door for POST /hook in front of the Express app. */
async function serve(handlers: RequestHandler[]): Promise<number> {
  const app = express();
  app.use((request, response) => void response.json({ by: 'express', path: request.path }));
  const server = createServer(app);
  installFrontDoor(
    server,
    app,
    frontDoor((method, path) => method === 'POST' && path === '/hook', handlers, filter, app),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function call(port: number, method: string, path: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: unknown }> {
  return new Promise((resolve, reject) => {
    const outgoing = send({ port, host: '127.0.0.1', method, path }, (answer) => {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => (text += chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: JSON.parse(text) as unknown }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const echo: RequestHandler = (request: Request, response: Response) =>
  void response.status(201).json({ path: request.path, query: { ...request.query }, params: request.params, same: request.res === response });

describe('the front door before Express', () => {
  it('serves the routes it picks with its handlers, in order, with the parts of Express they read', async () => {
    const seen: string[] = [];
    const port = await serve([
      (_request, _response, next) => {
        seen.push('first');
        next();
      },
      echo,
    ]);
    const answer = await call(port, 'POST', '/hook?a=1&a=2&b=x');
    expect(answer.status).toBe(201);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.body).toEqual({ path: '/hook', query: { a: ['1', '2'], b: 'x' }, params: {}, same: true });
    expect(seen).toEqual(['first']);
  });

  it('leaves every other request to Express: another method, another path, a path in absolute form', async () => {
    const port = await serve([echo]);
    expect((await call(port, 'GET', '/hook')).body).toEqual({ by: 'express', path: '/hook' });
    expect((await call(port, 'POST', '/hook/more')).body).toEqual({ by: 'express', path: '/hook/more' });
    expect((await call(port, 'POST', 'http://example.test/hook')).body).toMatchObject({ by: 'express' });
  });

  it('hands next(error), a thrown error and a request no handler answered to the filter', async () => {
    const passed = await serve([(_request, _response, next) => next(new Error('passed on')), echo]);
    expect(await call(passed, 'POST', '/hook')).toMatchObject({ status: 500, body: { caught: 'passed on' } });
    const thrown = await serve([
      () => {
        throw new Error('thrown');
      },
    ]);
    expect(await call(thrown, 'POST', '/hook')).toMatchObject({ status: 500, body: { caught: 'thrown' } });
    const nobody = await serve([(_request, _response, next) => next()]);
    expect(await call(nobody, 'POST', '/hook')).toMatchObject({ status: 500, body: { caught: 'no handler answered POST /hook' } });
  });

  it('refuses to stand in front of a server that does not call the Express application', () => {
    const app = express();
    expect(() => installFrontDoor(createServer(), app, app)).toThrow(/front door has nothing to stand in front of/);
  });
});
