import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';

/**
 * kube-apiserver's HTTP client dials spare connections under load and keeps unused the ones no
 * request needed (test/kubernetes/admission-race.test.ts found one holding our shutdown). Node's
 * server.close() ends idle keep-alive connections but waits for one that never carried a
 * request: the API must end those too, and exit 0 promptly instead of at SHUTDOWN_TIMEOUT_MS.
 */
let db: TestDatabase & { dataSource: DataSource };
let api: ApiProcess;

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlunused');
  api = await startApiProcess({ DATABASE_URL: db.url, SHUTDOWN_TIMEOUT_MS: '20000' });
});

afterAll(async () => {
  if (api?.child.exitCode === null && api.child.signalCode === null) await api.stop('SIGKILL');
  await db?.drop();
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
