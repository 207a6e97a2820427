import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

/**
 * What the webhook's port does with what a caller controls, found by attacking it from outside:
 * a body over the limit however it is framed, a client that waits for `100 Continue`, a client
 * that sends slowly, an answer that echoes a query, and a review whose object has no uid.
 */
const APISERVER = { name: 'kube-apiserver', token: 'edge-apiserver-token-0123456789abcdef', roles: ['webhook'] };
const ADMIN = { name: 'admin', token: 'edge-admin-token-0123456789abcdef0123', roles: ['admin'] };
const BODY_LIMIT = 1024 * 1024;
const REQUEST_TIMEOUT_MS = 2_000;
let api: RunningApi;
let port: number;

beforeAll(async () => {
  api = await startApi(
    {
      insecureDev: false,
      tokensFile: writeTokensFile([APISERVER, ADMIN]),
      bodyLimitBytes: BODY_LIMIT,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    },
    'qledge',
  );
  port = Number(new URL(api.base).port);
  const quota = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute', namespace: 'edge' },
    spec: { hard: { pods: '4' } },
  };
  expect((await api.request('PUT', '/v1/namespaces/edge/resourcequotas/compute', quota, bearer(ADMIN.token))).status).toBe(201);
});

afterAll(async () => {
  await api?.close();
});

/** A raw HTTP/1.1 exchange: what the server wrote, until it closed or `waitMs` passed, and when it closed. */
async function exchange(write: (socket: Socket) => void, waitMs: number): Promise<{ text: string; closedAfterMs: number | undefined }> {
  const socket = connect(port, '127.0.0.1');
  const started = performance.now();
  let text = '';
  let closedAfterMs: number | undefined;
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      closedAfterMs = performance.now() - started;
      resolve();
    }),
  );
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  write(socket);
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, waitMs))]);
  socket.destroy();
  return { text, closedAfterMs };
}

const head = (lines: readonly string[]): string =>
  `${['POST /v1/admission/validate HTTP/1.1', 'Host: localhost', 'Content-Type: application/json', ...lines].join('\r\n')}\r\n\r\n`;
const auth = `Authorization: Bearer ${APISERVER.token}`;

describe('a body over the limit', () => {
  it('is refused 413 as its bytes pass the limit, chunked, without reading the rest', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const { text, closedAfterMs } = await exchange((socket) => {
      socket.write(head([auth, 'Transfer-Encoding: chunked']));
      // 8 MB would follow; the answer must come after ~256 KiB, not at the end or the timeout.
      const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      for (let i = 0; i < 128 && !socket.destroyed; i++) socket.write(frame);
    }, 10_000);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toContain('Connection: close');
    expect(closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS);
  });

  it('is refused 413 at once when its declared length is over the limit, with no body sent', async () => {
    const { text, closedAfterMs } = await exchange((socket) => socket.write(head([auth, 'Content-Length: 1000000000'])), 10_000);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(closedAfterMs).toBeLessThan(1_000);
  });
});

describe('a client that waits for 100 Continue', () => {
  it('is told 401 and never to continue when it has no credential', async () => {
    const { text } = await exchange((socket) => socket.write(head(['Content-Length: 2', 'Expect: 100-continue'])), 1_000);
    expect(text).toMatch(/^HTTP\/1\.1 401 /);
    expect(text).not.toContain('100 Continue');
  });

  it('is told to continue once its guard has let it in, and then answered', async () => {
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'continue-1',
        resource: { group: '', version: 'v1', resource: 'configmaps' },
        namespace: 'elsewhere',
        operation: 'DELETE',
      },
    });
    const { text } = await exchange((socket) => {
      socket.write(head([auth, `Content-Length: ${Buffer.byteLength(body)}`, 'Expect: 100-continue']));
      socket.once('data', () => socket.write(body));
    }, 3_000);
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });
});

describe('a slow client', () => {
  it('is closed within a second of HTTP_REQUEST_TIMEOUT_MS, not at Node’s next 30 s check', async () => {
    const { closedAfterMs } = await exchange((socket) => {
      socket.write(head([auth, 'Content-Length: 100']));
      const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write(' ')), 200);
      socket.once('close', () => clearInterval(drip));
    }, 10_000);
    expect(closedAfterMs).toBeGreaterThan(REQUEST_TIMEOUT_MS - 100);
    expect(closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + 1_500);
  });
});

describe('answers that echo what the caller sent', () => {
  it('say their content type is what it is (nosniff), /readyz with its `exclude` values too', async () => {
    const ready = await fetch(`${api.base}/readyz?exclude=<script>alert(1)</script>&verbose`);
    expect(ready.headers.get('x-content-type-options')).toBe('nosniff');
    const refused = await fetch(`${api.base}/v1/admission/validate`, { method: 'POST' });
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('a review whose object has no uid', () => {
  const review = (uid: string, operation: 'CREATE' | 'UPDATE', objectUid?: string) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'edge',
      name: `p-${uid}`,
      operation,
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p-${uid}`, namespace: 'edge', ...(objectUid ? { uid: objectUid } : {}) },
        spec: { containers: [{ name: 'c', image: 'x' }], activeDeadlineSeconds: 5 },
      },
      ...(operation === 'UPDATE'
        ? {
            oldObject: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: `p-${uid}`, namespace: 'edge' },
              spec: { containers: [{ name: 'c', image: 'x' }] },
            },
          }
        : {}),
      dryRun: false,
    },
  });

  it('is refused, and reserves nothing: no API server sends one, and nothing could ever release what it reserved', async () => {
    const before = await api.db.dataSource.query(`SELECT count(*)::int AS n FROM reservations WHERE namespace = 'edge'`);
    for (const [uid, operation] of [
      ['no-uid-create', 'CREATE'],
      ['no-uid-update', 'UPDATE'],
    ] as const) {
      const answer = await api.request('POST', '/v1/admission/validate', review(uid, operation), bearer(APISERVER.token));
      expect(answer.status, uid).toBe(200);
      expect(answer.body.response, uid).toMatchObject({ allowed: false, status: { code: 400, reason: 'BadRequest' } });
      expect(answer.body.response.status.message, uid).toContain('has no metadata.uid');
    }
    expect(await api.db.dataSource.query(`SELECT count(*)::int AS n FROM reservations WHERE namespace = 'edge'`)).toEqual(before);
    // The same pod with its uid is admitted.
    expect(
      (await api.request('POST', '/v1/admission/validate', review('with-uid', 'CREATE', 'uid-1'), bearer(APISERVER.token))).body.response
        .allowed,
    ).toBe(true);
  });
});

describe("an admin's quota with 19,000 resources of bad quantities", () => {
  it('is refused by its size, without parsing a quantity (each bad one cost an error thrown: 0.5 s a request)', async () => {
    const hard = Object.fromEntries(Array.from({ length: 19_000 }, (_, i) => [`example.com/r${i}`, 'x']));
    const quota = {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'many' },
      spec: { selector: { labels: { matchLabels: { a: 'b' } } }, quota: { hard } },
    };
    const answer = await api.request('PUT', '/v1/clusterresourcequotas/many', quota, bearer(ADMIN.token));
    expect(answer.status).toBe(422);
    expect(answer.body.details.causes).toEqual([
      { reason: 'FieldValueTooMany', field: 'spec.quota.hard', message: 'Too many: 19000: must have at most 64 items' },
    ]);
  });
});
