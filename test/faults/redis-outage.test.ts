import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, freePort, startApiProcess, type ApiProcess } from '../support/processes.js';
import { until } from '../support/wait.js';
import { withoutReviewExtras } from '../support/review.js';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis.js';

/**
 * The admission API and a reconciler process on BullMQ over a Redis of the test's own, which
 * is stopped and started again empty (no persistence, as a Redis cache node restarts).
 *
 * What must hold: admissions never need Redis (they succeed during the outage, promptly);
 * /readyz reports the queue failing while /readyz?exclude=queue (what the Kubernetes
 * manifests probe) stays ready; the reconciler survives the outage, and once Redis is back it
 * resumes by itself and appends exactly the corrections the inventory calls for: commit the
 * pod that was created, release as deleted the one that went away, release as stale the one
 * never created, adopt the one nobody reserved, and leave the REST reservation of a kind the
 * inventory does not cover alone.
 *
 * The ledger is a fresh database on the machine's PostgreSQL (nothing restarts it here); the
 * inventory is a table in it (INVENTORY_SOURCE=postgres).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RECONCILER_MAIN = `${ROOT}dist/apps/reconciler/src/main.js`;
const NS = 'team';
/** Short, so that the reconciler has run several times within the test: see docs/concepts/reconciliation.md. */
const INTERVAL_SECONDS = 1;
const GRACE_SECONDS = 2;
const OUTAGE_MS = 4000;
/** Admissions answer in milliseconds; the API's queue calls give up after 2 s, so waiting on Redis would show. */
const PROMPT_MS = 1500;

interface Answer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are arbitrary JSON, checked field by field
  readonly body: any;
  readonly ms: number;
}

interface ReconcilerProcess {
  readonly child: ChildProcess;
  readonly metricsBase: string;
  output(): string;
  stop(): Promise<void>;
}

let redis: PrivateRedis;
let db: TestDatabase & { dataSource: DataSource };
let api: ApiProcess;
let reconciler: ReconcilerProcess;
let apiOutput = '';

async function request(base: string, method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<Answer> {
  const started = Date.now();
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain text (/readyz, /metrics)
  }
  return { status: response.status, body: parsed, ms: Date.now() - started };
}

/** The reconciler as production runs it, with its /healthz and /metrics on a port of its own. */
async function startReconciler(env: Record<string, string>): Promise<ReconcilerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [RECONCILER_MAIN], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', METRICS_PORT: String(port), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const metricsBase = `http://127.0.0.1:${port}`;
  await until(
    'the reconciler /healthz',
    async () => {
      if (child.exitCode !== null) throw new Error(`the reconciler exited with ${child.exitCode}: ${output}`);
      return (await fetch(`${metricsBase}/healthz`).catch(() => undefined))?.ok ? true : undefined;
    },
    30_000,
  );
  return {
    child,
    metricsBase,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' }, limits: { cpu: '100m' } } }] },
});

let reviewSeq = 0;
/** An AdmissionReview as kube-apiserver sends it: CREATE with the object, DELETE with the old one. */
const review = (operation: 'CREATE' | 'DELETE', name: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `review-${++reviewSeq}`,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    name,
    namespace: NS,
    operation,
    userInfo: { username: 'system:serviceaccount:ci:deployer' },
    object: operation === 'CREATE' ? pod(name) : null,
    oldObject: operation === 'DELETE' ? pod(name) : null,
    dryRun: false,
    options: { apiVersion: 'meta.k8s.io/v1', kind: operation === 'CREATE' ? 'CreateOptions' : 'DeleteOptions' },
  },
});

/** The webhook's answer, which must be an allowed AdmissionReview given promptly. */
async function admitted(operation: 'CREATE' | 'DELETE', name: string): Promise<void> {
  const body = review(operation, name);
  const answer = await request(api.base, 'POST', '/v1/admission/validate', body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(withoutReviewExtras(answer.body.response)).toEqual({ uid: body.request.uid, allowed: true });
  expect(answer.ms, `${operation} ${name} took ${answer.ms} ms`).toBeLessThan(PROMPT_MS);
}

/** The platform persisted the object: the inventory lists it. */
const created = (name: string) =>
  db.dataSource.query(`INSERT INTO platform_objects VALUES ($1, 'Pod', $2, $3, $4)`, [NS, name, `uid-${name}`, JSON.stringify(pod(name))]);
const deleted = (name: string) => db.dataSource.query(`DELETE FROM platform_objects WHERE namespace = $1 AND name = $2`, [NS, name]);

/** The namespace's events after its quota was defined, as `Type object-or-id [reason]`. */
async function corrections(): Promise<string[]> {
  const rows: { type: string; name: string | null; reason: string | null }[] = await db.dataSource.query(
    `SELECT e.type, COALESCE(e.data->'object'->>'name', r.data->'object'->>'name') AS name, e.data->>'reason' AS reason
       FROM ledger_events e LEFT JOIN reservations r ON r.namespace = e.namespace AND r.reservation_id = e.data->>'reservationId'
      WHERE e.namespace = $1 AND e.type IN ('Reserved', 'Committed', 'Released', 'Adopted') ORDER BY e.version`,
    [NS],
  );
  return rows.map((r) => [r.type, r.name, r.reason].filter((part) => part !== null).join(' '));
}

/** The value of one series of the reconciler's /metrics. */
async function metric(series: string): Promise<number | undefined> {
  const text = String((await request(reconciler.metricsBase, 'GET', '/metrics')).body);
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Waits for a condition, naming what the processes said when it does not come. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  return until(what, probe, timeoutMs).catch(async (error: unknown) => {
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\nledger: ${JSON.stringify(await corrections())}\n` +
        `reconciler (exit ${reconciler.child.exitCode}):\n${reconciler.output().slice(-3000)}\nAPI:\n${apiOutput.slice(-2000)}`,
    );
  });
}

beforeAll(async () => {
  ensureBuilt();
  redis = await startPrivateRedis();
  db = await createMigratedDatabase('qlfaultredis');
  await db.dataSource.query(`CREATE TABLE platform_objects (namespace text, kind text, name text, uid text, object jsonb)`);
  // A short shutdown bound: a drain stuck on a failed run must not hold the file for 25 s.
  api = await startApiProcess({ DATABASE_URL: db.url, REDIS_URL: redis.url, LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT_MS: '5000' });
  api.child.stdout?.on('data', (chunk: Buffer) => (apiOutput += chunk.toString()));
  api.child.stderr?.on('data', (chunk: Buffer) => (apiOutput += chunk.toString()));
  reconciler = await startReconciler({
    DATABASE_URL: db.url,
    REDIS_URL: redis.url,
    INVENTORY_SOURCE: 'postgres',
    INVENTORY_DATABASE_URL: db.url,
    INVENTORY_RELATION: 'public.platform_objects',
    RECONCILE_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
    RECONCILE_GRACE_SECONDS: String(GRACE_SECONDS),
    SHUTDOWN_TIMEOUT_MS: '5000',
  });
  const quota = await request(api.base, 'PUT', `/v1/namespaces/${NS}/resourcequotas/compute`, {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { pods: '10', 'requests.cpu': '2', 'example.com/gpu': '4' } },
  });
  expect(quota.status, JSON.stringify(quota.body)).toBe(201);
});

afterAll(async () => {
  // A test that failed during the outage left Redis down: the processes drain against it.
  await redis?.start();
  await reconciler?.stop();
  await api?.stop();
  await redis?.destroy();
  await db?.drop();
});

describe('a Redis outage', () => {
  it('never stops admissions, and the reconciler resumes by itself with exactly the corrections the inventory calls for', async () => {
    // Before: the reconciler commits a pod that was admitted and created.
    await admitted('CREATE', 'a');
    await created('a');
    await eventually('pod a committed', async () => ((await corrections()).includes('Committed a') ? true : undefined), 15_000);
    const ready = await request(api.base, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toBe('[+]database ok\n[+]queue ok\n[+]shutdown ok\n[+]unsettled-reservations ok\nreadyz check passed\n');

    await redis.stop();
    const stoppedAt = Date.now();

    // Admissions go on, promptly: the webhook, a DELETE (whose prompt reconcile cannot be
    // queued: best effort), and a REST reservation.
    await admitted('CREATE', 'b');
    await created('b');
    await admitted('CREATE', 'c'); // never created: stale once the grace period is over
    await admitted('DELETE', 'a');
    await deleted('a');
    await created('e'); // created while the webhook was failing open: nobody reserved it
    const widget = await request(api.base, 'POST', `/v1/namespaces/${NS}/reservations`, {
      requestId: 'w-1',
      kind: 'Widget',
      resource: 'widgets.example.com',
      name: 'w',
      resources: { 'example.com/gpu': '1' },
    });
    expect(widget.status, JSON.stringify(widget.body)).toBe(201);
    expect(widget.ms).toBeLessThan(PROMPT_MS);

    // Readiness: the queue is reported failing; without it the replica stays in service.
    const notReady = await request(api.base, 'GET', '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatch(
      /^\[\+\]database ok\n\[-\]queue failed: .+\n\[\+\]shutdown ok\n\[\+\]unsettled-reservations ok\nreadyz check failed\n$/,
    );
    const excluded = await request(api.base, 'GET', '/readyz?exclude=queue');
    expect(excluded.status).toBe(200);
    expect(excluded.body).toBe(
      '[+]database ok\n[+]shutdown ok\n[+]unsettled-reservations ok\n[+]queue excluded: ok\nreadyz check passed\n',
    );

    // The reconciler rides the outage out: alive, and its probes answer.
    const outageLeft = OUTAGE_MS - (Date.now() - stoppedAt);
    if (outageLeft > 0) await new Promise((resolve) => setTimeout(resolve, outageLeft));
    expect(reconciler.child.exitCode, reconciler.output().slice(-3000)).toBeNull();
    expect((await request(reconciler.metricsBase, 'GET', '/healthz')).status).toBe(200);
    // A scrape must answer within Prometheus' default scrape timeout (10 s; 5 s here) even
    // though the queue-depth gauge cannot be read. Soft: the rest of the scenario still runs.
    const scrape = await request(reconciler.metricsBase, 'GET', '/metrics', undefined, 5000).catch((error: unknown) => ({
      status: 0,
      body: String(error),
      ms: 5000,
    }));
    expect.soft(scrape.status, `a scrape of the reconciler during the outage: ${String(scrape.body).slice(0, 200)}`).toBe(200);
    // Nothing was corrected while the queue was away.
    expect(await corrections()).toEqual(['Reserved a', 'Committed a', 'Reserved b', 'Reserved c', 'Reserved w']);

    // Redis comes back empty: the job scheduler (upsertJobScheduler's repeat entry) and every
    // job are gone. The reconciler must resume its every-interval reconciles anyway; a one-off
    // job does not count (the API's after-delete job, sent while Redis was down, may still
    // reach it from ioredis' offline queue and reconcile the namespace once).
    await redis.start();
    const expected = ['Committed b', 'Released a deleted', 'Released c stale', 'Adopted e'];
    await eventually(
      'the corrections after the restart',
      async () => {
        const now = await corrections();
        return expected.every((e) => now.includes(e)) ? true : undefined;
      },
      20_000,
    );
    const rounds = (await metric('quota_ledger_reconciler_namespaces_total')) ?? 0;
    await eventually(
      `interval reconciles after the restart (namespace reconciles stuck at ${rounds}: the job scheduler was lost with Redis' data and nothing registered it again)`,
      async () => (((await metric('quota_ledger_reconciler_namespaces_total')) ?? 0) >= rounds + 3 ? true : undefined),
      5 * INTERVAL_SECONDS * 1000 + 5000,
    );
    // Those rounds changed nothing: each correction was appended once.
    const events = await corrections();
    expect(events.slice(0, 5)).toEqual(['Reserved a', 'Committed a', 'Reserved b', 'Reserved c', 'Reserved w']);
    expect(events.slice(5).sort()).toEqual([...expected].sort());

    // Usage: b (committed), e (adopted) and the widget, which the pods inventory does not cover.
    const usage = await request(api.base, 'GET', `/v1/namespaces/${NS}/usage`);
    expect(usage.body.quotas).toEqual([
      {
        name: 'compute',
        hard: { pods: '10', 'requests.cpu': '2', 'example.com/gpu': '4' },
        used: { pods: '2', 'requests.cpu': '200m', 'example.com/gpu': '1' },
      },
    ]);
    await eventually(
      '/readyz 200 again',
      async () => ((await request(api.base, 'GET', '/readyz')).status === 200 ? true : undefined),
      10_000,
    );
    expect(reconciler.child.exitCode).toBeNull();
    expect(api.child.exitCode).toBeNull();
  });
});
