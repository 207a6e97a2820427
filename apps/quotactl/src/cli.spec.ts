import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT, run, type Io } from './cli.js';

/** A stand-in HTTP server (not the service: the e2e tests run the CLI against the real one). */
let server: Server;
let base: string;
const seen: Array<{ method: string; url: string; auth: string | undefined; body: unknown }> = [];
const answers = new Map<string, [number, unknown]>();

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization, body: text ? JSON.parse(text) : undefined });
      const [status, body] = answers.get(`${req.method} ${req.url}`) ?? [404, { kind: 'Status', reason: 'NotFound', message: 'nothing here', code: 404 }];
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function io(files: Record<string, string> = {}, devToken?: string): Io & { out: string; err: string } {
  const state = { out: '', err: '' };
  return Object.assign(state, {
    stdout: (t: string) => void (state.out += t),
    stderr: (t: string) => void (state.err += t),
    readFile: (p: string) => {
      if (!(p in files)) throw new Error('ENOENT: no such file');
      return files[p]!;
    },
    readStdin: () => files['-'] ?? '',
    devToken: () => devToken,
    now: () => 0,
  });
}

const defaults = () => ({ server: base, token: undefined, caFile: undefined });

describe('usage errors exit 2 before anything is sent', () => {
  it.each([
    [['get', 'quota', '--bogus']],
    [['get', 'quota']],
    [['get', 'widgets', '-n', 'a']],
    [['apply']],
    [['reserve', '-n', 'a', '--kind', 'Pod']],
    [['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods']],
    [['history', '-n', 'a', '--limit', '0']],
    [['get', 'quota', '-n', 'a', '-o', 'xml']],
    [['frobnicate']],
  ])('%j', async (argv) => {
    const before = seen.length;
    const out = io();
    expect(await run(argv, out, defaults())).toBe(EXIT.usage);
    expect(out.err).toMatch(/^error: /);
    expect(seen.length).toBe(before);
  });

  it('apply refuses a namespace that disagrees with -n', async () => {
    const out = io({ 'q.yaml': 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: a}\nspec: {hard: {pods: "1"}}\n' });
    expect(await run(['apply', '-f', 'q.yaml', '-n', 'b'], out, defaults())).toBe(EXIT.usage);
    expect(out.err).toContain(`does not match the namespace "b"`);
  });

  it('apply refuses invalid YAML and kinds it does not manage', async () => {
    expect(await run(['apply', '-f', 'x.yaml'], io({ 'x.yaml': 'a: [' }), defaults())).toBe(EXIT.usage);
    const pod = io({ 'p.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\n' });
    expect(await run(['apply', '-f', 'p.yaml'], pod, defaults())).toBe(EXIT.usage);
    expect(pod.err).toContain('not "Pod"');
  });
});

describe('talking to the server', () => {
  it('applies every document of a stream with the token, and says created or configured', async () => {
    answers.set('PUT /v1/namespaces/a/resourcequotas/q', [201, {}]);
    answers.set('PUT /v1/namespaces/a/limitranges/l', [200, {}]);
    const out = io({ 'f.yaml': 'kind: ResourceQuota\nmetadata: {name: q}\n---\nkind: LimitRange\nmetadata: {name: l}\n' });
    expect(await run(['apply', '-f', 'f.yaml', '-n', 'a', '--token', 't0k'], out, defaults())).toBe(EXIT.ok);
    expect(out.out).toBe('resourcequota/q created\nlimitrange/l configured\n');
    expect(seen.at(-1)?.auth).toBe('Bearer t0k');
  });

  it('uses the development token of the current directory when no token is given', async () => {
    answers.set('GET /v1/namespaces/a/resourcequotas', [200, { items: [] }]);
    await run(['get', 'quota', '-n', 'a'], io({}, 'dev-123'), defaults());
    expect(seen.at(-1)?.auth).toBe('Bearer dev-123');
  });

  it('exits 3 on a denied reservation and prints the denial', async () => {
    answers.set('POST /v1/namespaces/a/reservations', [403, { kind: 'Status', code: 403, reason: 'Forbidden', message: 'exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1', details: { denial: {} } }]);
    const out = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--name', 'p', '--resources', 'pods=1'], out, defaults())).toBe(EXIT.denied);
    expect(out.err).toBe('Error from server (Forbidden): exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1\n');
    expect(seen.at(-1)?.body).toEqual({ kind: 'Pod', name: 'p', resources: { pods: '1' } });
  });

  it.each([
    [404, EXIT.notFound],
    [401, EXIT.auth],
    [403, EXIT.auth],
    [409, EXIT.refused],
    [422, EXIT.refused],
    [429, EXIT.unavailable],
    [503, EXIT.unavailable],
  ])('maps an HTTP %i Status to exit %i', async (status, code) => {
    answers.set('GET /v1/namespaces/x/resourcequotas/q', [status, { kind: 'Status', reason: 'Something', message: 'because', code: status }]);
    const out = io();
    expect(await run(['get', 'quota', 'q', '-n', 'x'], out, defaults())).toBe(code);
    expect(out.err).toBe('Error from server (Something): because\n');
  });

  it('exits 6 when nothing listens', async () => {
    expect(await run(['get', 'quota', '-n', 'a', '--server', 'http://127.0.0.1:1'], io(), defaults())).toBe(EXIT.unavailable);
  });

  it('prints the server object as JSON or YAML with -o', async () => {
    answers.set('GET /v1/namespaces/a/resourcequotas/q', [200, { kind: 'ResourceQuota', metadata: { name: 'q' } }]);
    const json = io();
    await run(['get', 'quota', 'q', '-n', 'a', '-o', 'json'], json, defaults());
    expect(JSON.parse(json.out)).toEqual({ kind: 'ResourceQuota', metadata: { name: 'q' } });
    const yaml = io();
    await run(['get', 'quota', 'q', '-n', 'a', '-o', 'yaml'], yaml, defaults());
    expect(yaml.out).toBe('kind: ResourceQuota\nmetadata:\n  name: q\n');
  });
});
