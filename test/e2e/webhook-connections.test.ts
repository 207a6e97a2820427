import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';

/**
 * Connections as kube-apiserver's webhook client (Go's HTTP transport) uses them, found against
 * the real one (test/kubernetes/admission-race.test.ts):
 * - it keeps an idle connection 90 s for its next review: the API must not close it first (Node's
 *   default keep-alive timeout is 5 s, and a review sent as the server closed it was reset);
 * - under load it dials spare connections and keeps unused the ones no request needed. Node's
 *   server.close() ends idle keep-alive connections but waits for one that never carried a
 *   request: the API must end those too, and exit 0 promptly instead of at SHUTDOWN_TIMEOUT_MS.
 */
let db: TestDatabase & { dataSource: DataSource };
let api: ApiProcess;

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlconns');
  api = await startApiProcess({ DATABASE_URL: db.url, SHUTDOWN_TIMEOUT_MS: '20000' });
});

afterAll(async () => {
  if (api?.child.exitCode === null && api.child.signalCode === null) await api.stop('SIGKILL');
  await db?.drop();
});

/** One request on `socket` (keep-alive), answering the status line. */
function get(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8').split('\r\n')[0] ?? ''));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  });
}

describe('a keep-alive connection left idle longer than Node keeps one by default', () => {
  it('stays open and serves the next request', async () => {
    const socket = connect(Number(new URL(api.base).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let closed = false;
    socket.once('close', () => (closed = true));
    expect(await get(socket, '/healthz')).toBe('HTTP/1.1 200 OK');
    // The idle time is the scenario: longer than Node's 5 s default.
    await new Promise((resolve) => setTimeout(resolve, 6_500));
    expect(closed).toBe(false);
    expect(await get(socket, '/healthz')).toBe('HTTP/1.1 200 OK');
    socket.destroy();
  });
});

describe('SIGTERM with a connection that never carried a request', () => {
  it('ends it and exits 0 at once, not when the shutdown times out', async () => {
    const { port } = new URL(api.base);
    const unused = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => unused.once('connect', resolve));
    const ended = new Promise((resolve) => unused.once('close', resolve));
    unused.on('error', () => undefined);
    expect((await fetch(`${api.base}/healthz`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => api.child.once('exit', (code) => resolve(code)));
    const signalled = Date.now();
    api.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await ended;
    // The shutdown timeout is 20 s; the ledger's own closing takes well under it.
    expect(Date.now() - signalled).toBeLessThan(10_000);
  });
});
