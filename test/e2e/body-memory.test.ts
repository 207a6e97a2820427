import { readFileSync } from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

/**
 * The first attack finding, as it was reported: one unauthenticated request with a 3.2 MB
 * JSON body of 1.6 million array elements took the API from 142 to 466 MB of RSS (the body
 * was parsed before routing and then walked with a path string per element), three took it
 * to 804 MB, and under `--max-old-space-size=256` (the 512Mi container) the first one killed
 * it. Here the compiled API runs with that heap and gets the same body on every kind of route.
 */
const ADMIN = 'memory-admin-0123456789abcdef0123456789ab';
const ADMISSION = 'memory-admission-0123456789abcdef012345';
const JUNK = Buffer.from(`{"junk":[${'0,'.repeat(1_600_000 - 1)}0]}`);

let db: TestDatabase;
let api: ApiProcess;

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlmem');
  const tokensFile = writeTokensFile([
    { name: 'admin', token: ADMIN, roles: ['admin'] },
    { name: 'kube-apiserver', token: ADMISSION, roles: ['webhook', 'admission'] },
  ]);
  api = await startApiProcess(
    { DATABASE_URL: db.url, QUOTA_LEDGER_INSECURE_DEV: 'false', TOKENS_FILE: tokensFile, DATABASE_POOL_SIZE: '2' },
    30_000,
    ['--max-old-space-size=256'],
  );
}, 120_000);
afterAll(async () => {
  await api?.stop();
  await db?.drop();
});

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) * 1024;
}

/** Any method, any body (GET with a body too, which fetch refuses to send). */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${api.base}${path}`,
      { method, headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers }, agent: false },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text, ms: performance.now() - started }));
      },
    );
    // The server may answer before reading the body and close: that is not a failure here.
    request.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET'
        ? resolve({ status: -1, text: '', ms: performance.now() - started })
        : reject(error),
    );
    request.end(body);
  });
}

const TARGETS: readonly [string, string, string, Record<string, string>, number][] = [
  ['the liveness probe, no token', 'GET', '/healthz', {}, 200],
  ['the metrics scrape, no token', 'GET', '/metrics', {}, 200],
  ['an unknown path, no token', 'POST', '/v1/nothing-here', {}, 404],
  ['the webhook, no token', 'POST', '/v1/admission/validate', {}, 401],
  ['the webhook, a wrong token', 'POST', '/v1/admission/validate', bearer('not-a-token'), 401],
  ['the webhook, authenticated', 'POST', '/v1/admission/validate', bearer(ADMISSION), 400],
  ['a reservation, authenticated', 'POST', '/v1/namespaces/team-a/reservations', bearer(ADMISSION), 400],
  ['a quota PUT, authenticated (a smaller limit: 413 unread)', 'PUT', '/v1/namespaces/team-a/resourcequotas/q', bearer(ADMIN), 413],
];

describe('a 3.2 MB body of 1.6 million array elements, under a 256 MB heap', () => {
  it('is answered on every kind of route, three times each and all at once, and the API stays up with its memory bounded', async () => {
    const before = rssBytes(api.child.pid as number);
    const answers = await Promise.all(
      TARGETS.flatMap(([name, method, path, headers, expected]) =>
        [0, 1, 2].map(async () => ({ name, expected, ...(await send(method, path, headers, JUNK)) })),
      ),
    );
    for (const answer of answers) {
      // -1: answered and closed before the body was all sent (the client saw the reset first).
      // 429: a body route whose principal already holds its share of the bodies being read at
      // once (json-body.ts) refuses the next one unread; which ones depends on timing.
      const bounded = answer.expected === 400 ? [429] : [];
      expect([answer.expected, -1, ...bounded], answer.name).toContain(answer.status);
      // A liveness bound, not a benchmark: the reported request took 1.5 s and then killed the process.
      expect(answer.ms, answer.name).toBeLessThan(15_000);
    }
    const refused = answers.find((a) => a.name === 'the webhook, authenticated' && a.status === 400);
    expect(JSON.parse(refused?.text ?? '{}')).toMatchObject({
      kind: 'Status',
      code: 400,
      message: 'body.junk[199998] holds more than 200000 values',
    });
    expect(api.child.exitCode).toBeNull();
    expect((await fetch(`${api.base}/healthz`)).status).toBe(200);
    const after = rssBytes(api.child.pid as number);
    // 24 bodies of 3.2 MB were in flight at once (77 MB in all); before the fix one of them added 324 MB.
    expect(after - before).toBeLessThan(160 * 1024 * 1024);
  });
});
