import { readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestPki } from '../../../test/support/certificates.js';
import { ApiClient, ApiError, TlsError, Unavailable, warningTexts } from './client.js';
import { EXIT, exitCodeOf } from './errors.js';

/** Local servers started inside the spec (no network beyond 127.0.0.1). */
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const http = async (handler: RequestListener): Promise<string> => `http://127.0.0.1:${await listen(createHttpServer(handler))}`;

describe('ApiClient', () => {
  it('sends JSON with the bearer token and the query, and reads the JSON answer', async () => {
    let seen: { method?: string; url?: string; auth?: string; type?: string; body?: string } = {};
    const server = await http((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen = { method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body };
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"r-1"}');
      });
    });
    const client = new ApiClient({ server: `${server}/prefix`, token: 'tok', timeoutMs: 5000 });
    const answer = await client.call('POST', '/v1/x', { a: 1 }, { limit: '5', after: undefined });
    expect(answer).toEqual({ status: 201, body: { id: 'r-1' } });
    expect(seen).toEqual({ method: 'POST', url: '/prefix/v1/x?limit=5', auth: 'Bearer tok', type: 'application/json', body: '{"a":1}' });
  });

  it('reads a Status answer as an ApiError with its reason and message', async () => {
    const server = await http((_req, res) =>
      res.writeHead(409, { 'content-type': 'application/json' }).end('{"kind":"Status","code":409,"reason":"Conflict","message":"stale"}'),
    );
    const error = await new ApiClient({ server, timeoutMs: 5000 }).call('GET', '/v1/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, reason: 'Conflict', message: 'stale' });
  });

  it("words a proxy's non-Status 502 as kubectl does, and it counts as unavailable", async () => {
    const server = await http((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>'));
    const error = await new ApiClient({ server, timeoutMs: 5000 }).call('GET', '/v1/x').catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 502,
      reason: 'InternalError',
      message: 'an error on the server ("<html>Bad Gateway</html>") has prevented the request from succeeding',
    });
    expect(exitCodeOf(error)).toBe(EXIT.unavailable);
  });

  it('follows no redirect: the token must not travel to another place', async () => {
    let followed = false;
    const elsewhere = await http((_req, res) => {
      followed = true;
      res.end('{}');
    });
    const server = await http((_req, res) => res.writeHead(307, { location: `${elsewhere}/v1/x` }).end());
    const error = await new ApiClient({ server, token: 't', timeoutMs: 5000 }).call('GET', '/v1/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as Error).message).toContain('follows no redirects');
    expect(followed).toBe(false);
    expect(exitCodeOf(error)).toBe(EXIT.failed);
  });

  it('gives up after the request timeout, and that is unavailable', async () => {
    const server = await http(() => {
      // never answers
    });
    const started = Date.now();
    const error = await new ApiClient({ server, timeoutMs: 200 }).call('GET', '/v1/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Unavailable);
    expect((error as Error).message).toMatch(/no answer from http:\/\/127\.0\.0\.1:\d+ within 200ms/);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(exitCodeOf(error)).toBe(EXIT.unavailable);
  });

  it('bounds the whole exchange, not only the silence: a trickling answer times out too', async () => {
    const server = await http((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const tick = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(tick));
    });
    const error = await new ApiClient({ server, timeoutMs: 300 }).call('GET', '/v1/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Unavailable);
  });

  describe('over HTTPS', () => {
    const pki = createTestPki();
    const { cert, key } = pki.issue('server', { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
    afterAll(() => rmSync(pki.dir, { recursive: true, force: true }));
    const https = async (): Promise<string> => {
      const server = createHttpsServer({ cert: readFileSync(cert), key: readFileSync(key) }, (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
      );
      return `https://127.0.0.1:${await listen(server as unknown as Server)}`;
    };

    it('trusts the CA it is given', async () => {
      const client = new ApiClient({ server: await https(), ca: readFileSync(pki.caCert, 'utf8'), timeoutMs: 5000 });
      expect((await client.call('GET', '/v1/x')).body).toEqual({ ok: true });
    });

    it('refuses a certificate from an unknown CA, with exit 1 (retrying will not help)', async () => {
      const error = await new ApiClient({ server: await https(), timeoutMs: 5000 }).call('GET', '/v1/x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TlsError);
      expect((error as Error).message).toContain('--certificate-authority');
      expect(exitCodeOf(error)).toBe(EXIT.failed);
    });

    it('accepts any certificate with --insecure-skip-tls-verify', async () => {
      const client = new ApiClient({ server: await https(), insecureSkipTlsVerify: true, timeoutMs: 5000 });
      expect((await client.call('GET', '/v1/x')).status).toBe(200);
    });
  });
});

describe('warningTexts: Warning headers as client-go reads them', () => {
  it.each([
    ['one warning', ['299 - "text"'], ['text']],
    ['escaped quotes and backslashes', ['299 - "quota \\"compute\\": a\\\\b"'], ['quota "compute": a\\b']],
    ['a list in one header, commas inside quotes kept', ['299 - "a, b", 299 - "c"'], ['a, b', 'c']],
    ['a date after the text', ['299 kube-apiserver "t" "Sat, 23 Nov 2026 10:00:00 GMT", 299 - "u"'], ['t', 'u']],
    ['only code 299, and not an empty text', ['199 - "misc", 299 - "", 299 - "kept"'], ['kept']],
    ['each header on its own; a malformed one ends its own list only', ['299 - "a", garbage, 299 - "lost"', '299 - "b"'], ['a', 'b']],
    ['an unterminated quote', ['299 - "open'], []],
  ])('%s', (_, headers, expected) => {
    expect(warningTexts(headers)).toEqual(expected);
  });
});
