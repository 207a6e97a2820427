import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpInventory, createInventorySource, KNOWN_KINDS, type HttpInventoryOptions } from '@quota/inventory';
import { inventoryFailure } from '../support/inventory.js';

const pod = (name: string, namespace: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, uid: `uid-${name}`, ...metadata },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { cpu: '100m' } } }] },
});
const list = (items: unknown[], metadata: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata, items });

interface Seen {
  readonly url: string;
  readonly authorization: string | undefined;
}

/**
 * A platform endpoint (node:http) whose answer depends on the namespace in the path; `hang`
 * never answers and reports the request (and when the client lets go of it).
 */
const answers: Record<string, (response: ServerResponse) => void> = {
  'team-a': (res) =>
    json(
      res,
      200,
      list([
        pod('a', 'team-a'),
        pod('b', 'team-a'),
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'team-a', uid: 'uid-web' } },
        { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
      ]),
    ),
  'team a/b': (res) => json(res, 200, list([pod('odd', 'team a/b')])),
  'server-error': (res) => json(res, 500, '{"message":"database unavailable"}'),
  unauthorized: (res) => json(res, 401, '{"message":"bad token"}'),
  moved: (res) => {
    res.writeHead(302, { location: '/elsewhere/namespaces/moved/objects' });
    res.end();
  },
  'not-json': (res) => json(res, 200, '<html>maintenance</html>'),
  'no-items': (res) => json(res, 200, '{"kind":"List"}'),
  paged: (res) => json(res, 200, list([pod('a', 'paged')], { continue: 'page-2' })),
  'no-uid': (res) => json(res, 200, list([pod('a', 'no-uid'), pod('web-1', 'no-uid', { uid: undefined })])),
  'no-kind': (res) => json(res, 200, JSON.stringify({ items: [{ metadata: { name: 'a', uid: 'u' } }] })),
  elsewhere: (res) => json(res, 200, list([pod('a', 'team-a')])),
  big: (res) => json(res, 200, list(Array.from({ length: 200 }, (_, i) => pod(`p${i}`, 'big')))),
  'big-streamed': (res) => {
    // No content-length: the limit must hold while the body streams.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"apiVersion":"v1","kind":"List","items":[');
    for (let i = 0; i < 200; i++) res.write(`${i ? ',' : ''}${JSON.stringify(pod(`p${i}`, 'big-streamed'))}`);
    res.end(']}');
  },
  many: (res) => json(res, 200, list([pod('a', 'many'), pod('b', 'many'), pod('c', 'many')])),
};
function json(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

let server: Server;
let base: string;
const seen: Seen[] = [];
let onHang: ((hung: { closed: Promise<void> }) => void) | undefined;

function handle(req: IncomingMessage, res: ServerResponse): void {
  seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
  const match = /^\/platform\/v2\/namespaces\/([^/]+)\/objects$/.exec(req.url ?? '');
  const namespace = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
  if (namespace === 'hang') {
    onHang?.({ closed: new Promise((resolve) => req.socket.once('close', () => resolve())) });
    return;
  }
  const answer = namespace === undefined ? undefined : answers[namespace];
  if (answer) answer(res);
  else json(res, 404, '{"message":"not found"}');
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/platform/v2/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const source = (options: Omit<HttpInventoryOptions, 'url'> = {}) => createHttpInventory({ url: base, ...options });
const failure = inventoryFailure;

describe('http inventory source, against a platform endpoint (GET {url}/namespaces/{ns}/objects)', () => {
  it('GETs the namespace’s objects with the bearer token and keeps the covered ones whole', async () => {
    seen.length = 0;
    const inventory = await source({ token: 's3cret' }).list('team-a');
    expect(seen).toEqual([{ url: '/platform/v2/namespaces/team-a/objects', authorization: 'Bearer s3cret' }]);
    expect(inventory.namespace).toBe('team-a');
    expect(inventory.covers).toHaveLength(KNOWN_KINDS.length);
    expect(inventory.objects.map((o) => [o.groupResource, o.name, o.uid])).toEqual([
      [{ group: '', resource: 'pods' }, 'a', 'uid-a'],
      [{ group: '', resource: 'pods' }, 'b', 'uid-b'],
      [{ group: 'apps', resource: 'deployments' }, 'web', 'uid-web'],
    ]);
    expect(inventory.objects[0]?.object).toEqual(pod('a', 'team-a'));
  });

  it('sends no Authorization header without a token, encodes the namespace, and covers only what it is told', async () => {
    seen.length = 0;
    const inventory = await createInventorySource({ source: 'http', url: base, resources: [{ group: '', resource: 'pods' }] }).list(
      'team a/b',
    );
    expect(seen).toEqual([{ url: '/platform/v2/namespaces/team%20a%2Fb/objects', authorization: undefined }]);
    expect(inventory.covers).toEqual([{ group: '', resource: 'pods' }]);
    expect(inventory.objects.map((o) => o.name)).toEqual(['odd']);
    expect((await source({ resources: [{ group: 'apps', resource: 'deployments' }] }).list('team-a')).objects.map((o) => o.name)).toEqual([
      'web',
    ]);
  });

  it.each([
    ['a 500', 'server-error', /GET http:\/\/127\.0\.0\.1:\d+\/platform\/v2\/namespaces\/server-error\/objects: answered HTTP 500$/],
    ['a 401', 'unauthorized', /answered HTTP 401$/],
    ['a 404 (no such endpoint)', 'nothing-here', /answered HTTP 404$/],
    ['a redirect (not followed)', 'moved', /answered HTTP 302$/],
    ['a body that is not JSON', 'not-json', /the answer is not JSON/],
    ['a body without items', 'no-items', /not a list with an "items" array/],
    ['one page of several', 'paged', /metadata.continue is set/],
    ['an object without a uid, naming it', 'no-uid', /Pod no-uid\/web-1 has no metadata.uid/],
    ['an object without kind or apiVersion', 'no-kind', /object a has no kind or apiVersion/],
    ['an object of another namespace', 'elsewhere', /Pod team-a\/a belongs to namespace team-a/],
    ['a body over maxBytes, by its content-length', 'big', /the answer of \d+ bytes is over the 4096-byte limit/],
    ['a streamed body over maxBytes', 'big-streamed', /the answer is over the 4096-byte limit/],
    ['more objects than maxObjects', 'many', /3 objects, more than the 2 a listing may hold/],
  ])('refuses the whole listing on %s', async (_case, namespace, message) => {
    const error = await failure(source({ token: 's3cret', maxBytes: 4096, maxObjects: 2 }).list(namespace));
    expect(error.source).toBe('http');
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('s3cret');
  });

  it('gives up on an endpoint that does not answer within timeoutMs, and lets go of the connection', async () => {
    let hung: { closed: Promise<void> } | undefined;
    onHang = (h) => (hung = h);
    const error = await failure(source({ timeoutMs: 200 }).list('hang'));
    expect(error.message).toMatch(/\/namespaces\/hang\/objects: no answer within 200 ms$/);
    await hung?.closed;
  });

  it('stops when the caller’s signal aborts', async () => {
    const arrived = new Promise<{ closed: Promise<void> }>((resolve) => (onHang = resolve));
    const controller = new AbortController();
    const listing = failure(source().list('hang', controller.signal));
    const hung = await arrived;
    controller.abort();
    expect((await listing).message).toMatch(/\/namespaces\/hang\/objects: aborted by the caller$/);
    await hung.closed;
  });
});
