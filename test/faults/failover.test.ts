import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fold, type RecordedEvent } from '@quota/domain';
import { startFailoverPair, type FailoverPair } from '../support/failover-pair.js';
import { ensureBuilt, freePort, startApiProcess, type ApiProcess } from '../support/processes.js';
import { until } from '../support/wait.js';
import { expiringClient, LoadLog, restClient, webhookClient, type Acknowledged } from './support/failover-load.js';
import { overHardPoints, sleep, startApp, streamOf, usageOf, type AppProcess } from './support/load.js';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis.js';

/**
 * Failover under load: a primary with a synchronous standby, and the built API,
 * projection worker and reconciler processes on `DATABASE_URL=postgres://…:A,…:B/…?
 * target_session_attrs=read-write`. While clients race for quotas (REST reservations with
 * idempotency keys, webhook reviews, one-second TTL reservations the reconciler expires), the
 * primary is killed (SIGKILL of the postmaster and every backend: a crash) and the standby is
 * promoted; then the old primary is rewound into a standby of the new one, made synchronous, and
 * the same is done the other way round. No process is restarted.
 *
 * What must hold: every acknowledged admission (a 201, an allowed review) is in the final
 * primary's ledger under the answer's id; nothing is in it twice; usage never passed hard at any
 * version; every answer short of a decision was a 503 with Retry-After (never a 500, never a hang);
 * the projection worker caught up by itself and its read models equal the fold; the reconciler
 * kept appending after the failovers. It prints the time without a primary that answers writes:
 * from the kill to the first admission acknowledged among those sent after it.
 *
 * The failover manager's part (what Patroni or an operator does) is played by the test: promote
 * at once (no detection delay), turn synchronous replication off on the new primary while it has
 * no standby (else every commit waits for one), and on again once the old primary streams.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MIGRATE = `${ROOT}dist/apps/admission-api/src/migrate.js`;
const DATABASE = 'quota_ledger';
const REST_NS = 'fo-rest';
const HOOK_NS = 'fo-hook';
const TTL_NS = 'fo-ttl';
const REST_HARD = 24;
const QUOTAS: Record<string, Record<string, string>> = {
  [REST_NS]: { 'example.com/gpu': String(REST_HARD) },
  [HOOK_NS]: { pods: '100000', 'requests.cpu': '3' },
  [TTL_NS]: { 'example.com/gpu': '4' },
};

let pair: FailoverPair;
let redis: PrivateRedis;
let api: ApiProcess;
let apiOutput = '';
let worker: AppProcess;
let reconciler: AppProcess;

beforeAll(async () => {
  ensureBuilt();
  pair = await startFailoverPair();
  redis = await startPrivateRedis();
  const env = { DATABASE_URL: pair.multiHostUrl(DATABASE), REDIS_URL: redis.url, LOG_LEVEL: 'warn', METRICS_PORT: '0' };
  const migrated = spawnSync(process.execPath, [MIGRATE], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}${migrated.stdout}`);
  await pair.setSynchronous(true);
  await pair.streaming();
  api = await startApiProcess({ ...env, DATABASE_REQUIRE_SYNCHRONOUS_STANDBY: 'true' }, 60_000);
  api.child.stdout?.on('data', (chunk: Buffer) => (apiOutput += chunk.toString()));
  api.child.stderr?.on('data', (chunk: Buffer) => (apiOutput += chunk.toString()));
  // Each serves /healthz on METRICS_PORT once it has started: a process still connecting when the
  // primary dies fails its start (exit 1, restarted by its supervisor), which is not what this tests.
  const [workerPort, reconcilerPort] = [await freePort(), await freePort()];
  worker = startApp('dist/apps/projection-worker/src/main.js', [], { ...env, PROJECTION_POLL_MS: '200', METRICS_PORT: String(workerPort) });
  reconciler = startApp('dist/apps/reconciler/src/main.js', [], {
    ...env,
    RECONCILE_INTERVAL_SECONDS: '1',
    INVENTORY_SOURCE: 'none',
    METRICS_PORT: String(reconcilerPort),
  });
  for (const [app, port] of [
    [worker, workerPort],
    [reconciler, reconcilerPort],
  ] as const) {
    await until(
      `${app === worker ? 'the projection worker' : 'the reconciler'} started`,
      async () => {
        if (app.child.exitCode !== null) throw new Error(`exited at start: ${app.output()}`);
        return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok ? true : undefined;
      },
      60_000,
    );
  }
  for (const [namespace, hard] of Object.entries(QUOTAS)) {
    const put = await fetch(`${api.base}/v1/namespaces/${namespace}/resourcequotas/compute`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute' }, spec: { hard } }),
    });
    expect(put.status, await put.text()).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await worker?.stop();
  await reconciler?.stop();
  await redis?.destroy();
  await pair?.destroy();
});

async function readyz(): Promise<string> {
  const response = await fetch(`${api.base}/readyz?exclude=unsettled-reservations`);
  return `${response.status} ${await response.text()}`;
}

/** Waits until /readyz's synchronous-standby line is `[+]` (or `[-]`). */
const syncLine = (ok: boolean): Promise<string> =>
  until(
    `/readyz [${ok ? '+' : '-'}]synchronous-standby`,
    async () => {
      const text = await readyz();
      return text.includes(ok ? '[+]synchronous-standby ok' : '[-]synchronous-standby failed: ') ? text : undefined;
    },
    30_000,
  );

interface Failover {
  readonly killedAt: number;
  readonly promoteMs: number;
  readonly rejoinMs: number;
}

/** Kill the primary, promote the standby at once, let the new primary run alone, then rejoin the old one as its synchronous standby. */
async function failover(log: LoadLog): Promise<Failover> {
  const acknowledgedBefore = log.acknowledged.length;
  const killedAt = Date.now();
  pair.killPrimary();
  const promoteMs = await pair.promote();
  await pair.setSynchronous(false);
  // Admissions go on against the promoted standby, alone: /readyz says so.
  await until(
    'admissions acknowledged after the kill',
    async () => (log.acknowledged.slice(acknowledgedBefore).some((a) => a.sentAt >= killedAt) ? true : undefined),
    60_000,
  );
  expect(await syncLine(false)).toMatch(
    /\[-\]synchronous-standby failed: (synchronous_standby_names is empty|no synchronous standby is streaming)/,
  );
  const rejoinMs = await pair.rejoin();
  await pair.setSynchronous(true);
  await pair.streaming();
  await syncLine(true);
  return { killedAt, promoteMs, rejoinMs };
}

/** From the kill to the first acknowledgment among the admissions sent after it. */
function writeDowntimeMs(log: LoadLog, killedAt: number): number {
  const after = log.acknowledged.filter((a) => a.sentAt >= killedAt).map((a) => a.answeredAt);
  return Math.min(...after) - killedAt;
}

describe('failover of the ledger database under load', () => {
  it('loses no acknowledged admission, never over-admits, and needs no restart', async () => {
    expect(await syncLine(true)).toMatch(/^200 /);
    const log = new LoadLog(api.base);
    const pids = [api.child.pid, worker.child.pid, reconciler.child.pid];
    for (const [name, child, output] of [
      ['the API', api.child, () => apiOutput],
      ['the projection worker', worker.child, worker.output],
      ['the reconciler', reconciler.child, reconciler.output],
    ] as const) {
      child.once(
        'exit',
        (code, signal) => (log.aborted ??= `${name} exited (${code ?? signal}) during the test: ${output().slice(-3000)}`),
      );
    }
    const load = Promise.all([
      ...[0, 1, 2, 3].map((w) => restClient(log, REST_NS, w, 4)),
      ...[0, 1, 2, 3].map((w) => webhookClient(log, HOOK_NS, w)),
      expiringClient(log, TTL_NS),
    ]);
    const failovers: Failover[] = [];
    try {
      await until('admissions under load', async () => (log.acknowledged.length >= 50 ? true : undefined), 60_000);
      await sleep(1500);
      failovers.push(await failover(log));
      await sleep(2000);
      failovers.push(await failover(log));
      await sleep(2000);
    } finally {
      log.stopping = true;
      await load;
    }
    const problem = `API output:\n${apiOutput.slice(-3000)}\nworker:\n${worker.output().slice(-2000)}\nreconciler:\n${reconciler.output().slice(-2000)}\n${pair.logs()}`;

    // Every answer short of a decision was a clean, retryable 503.
    const undecided = log.exchanges.filter((e) => !(e.what === 'reserve' ? [201, 403] : [200]).includes(e.status));
    expect(
      undecided.filter((e) => e.status !== 503).map((e) => `${e.what} ${e.key}: ${e.status} ${e.error ?? JSON.stringify(e.body)}`),
      problem,
    ).toEqual([]);
    for (const e of undecided) {
      expect(e.body, `${e.what} ${e.key}`).toMatchObject({
        kind: 'Status',
        reason: 'ServiceUnavailable',
        code: 503,
        details: { retryAfterSeconds: 1 },
      });
      expect(e.retryAfter).toBe('1');
    }

    // The processes lived through both failovers.
    expect([api.child.pid, worker.child.pid, reconciler.child.pid]).toEqual(pids);
    for (const child of [api.child, worker.child, reconciler.child]) expect(child.exitCode, problem).toBeNull();

    const pool = new pg.Pool({ connectionString: pair.primary.url(DATABASE), max: 2 });
    try {
      const found = await acknowledgedFound(pool, log.acknowledged);
      expect(found.missing, problem).toEqual([]);
      expect(await repeated(pool)).toEqual([]);
      let overAdmission = 0;
      for (const namespace of Object.keys(QUOTAS)) {
        const points = overHardPoints(await streamOf(pool, namespace));
        overAdmission += points.length;
        expect(points, namespace).toEqual([]);
      }
      await projectionCaughtUp(pool);
      // The reconciler kept working after the last promotion: it released expired TTL reservations there.
      const { rows: expired } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_events WHERE namespace = $1 AND type = 'Released' AND data->>'reason' = 'expired' AND actor = 'system:reconciler' AND recorded_at > to_timestamp($2::float8 / 1000)`,
        [TTL_NS, failovers[1]?.killedAt ?? 0],
      );
      expect(expired[0]?.n, problem).toBeGreaterThan(0);
      const [first, second] = failovers.map((f) => writeDowntimeMs(log, f.killedAt)) as [number, number];
      console.info(
        `acknowledged ${log.acknowledged.length}, found ${found.found}, over-admission ${overAdmission}, write downtime ${(first / 1000).toFixed(1)}s`,
      );
      const reasons = new Map<string, number>();
      for (const e of undecided)
        reasons.set(String(e.body?.message).replace(/ \(.*$/, ''), (reasons.get(String(e.body?.message).replace(/ \(.*$/, '')) ?? 0) + 1);
      console.info(
        `failover back: write downtime ${(second / 1000).toFixed(1)}s; pg_ctl promote ${failovers.map((f) => f.promoteMs).join(' / ')} ms, ` +
          `rejoin (pg_rewind, start, streaming) ${failovers.map((f) => f.rejoinMs).join(' / ')} ms; ${log.exchanges.length} requests, ${undecided.length} answered 503: ${JSON.stringify(Object.fromEntries(reasons))}`,
      );
    } finally {
      await pool.end();
    }
  });
});

/** Each acknowledgment's Reserved event, by request id (and, for REST, the reservation id answered). */
async function acknowledgedFound(pool: pg.Pool, acknowledged: readonly Acknowledged[]): Promise<{ found: number; missing: string[] }> {
  const { rows } = await pool.query<{ namespace: string; request_id: string; id: string }>(
    `SELECT namespace, request_id, data->>'reservationId' AS id FROM ledger_events WHERE type = 'Reserved' AND request_id IS NOT NULL`,
  );
  const reserved = new Map(rows.map((r) => [`${r.namespace} ${r.request_id}`, r.id]));
  const missing = acknowledged.filter((a) => {
    const id = reserved.get(`${a.namespace} ${a.requestId}`);
    return id === undefined || (a.reservationId !== undefined && id !== a.reservationId);
  });
  return {
    found: acknowledged.length - missing.length,
    missing: missing.map((a) => `${a.namespace} ${a.requestId} ${a.reservationId ?? ''}`),
  };
}

/** Request ids or reservations the ledger holds twice. */
async function repeated(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ value: string }>(
    `SELECT 'request ' || request_id AS value FROM ledger_events WHERE type = 'Reserved' AND request_id IS NOT NULL GROUP BY request_id HAVING count(*) > 1
     UNION ALL SELECT 'reservation ' || (data->>'reservationId') FROM ledger_events WHERE type = 'Reserved' GROUP BY data->>'reservationId' HAVING count(*) > 1`,
  );
  return rows.map((r) => r.value);
}

/** The projection worker reaches every head by itself, and its usage is the fold's. */
async function projectionCaughtUp(pool: pg.Pool): Promise<void> {
  await until(
    'the projection worker at every head',
    async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM namespace_heads h LEFT JOIN projected_namespaces p ON p.namespace = h.namespace
          WHERE position('/' IN h.namespace) = 0 AND coalesce(p.version, 0) <> h.version`,
      );
      return rows[0]?.n === 0 ? true : undefined;
    },
    30_000,
  );
  // The reconciler goes on expiring reservations: each namespace is compared at the version projected.
  for (const namespace of Object.keys(QUOTAS)) {
    const { rows } = await pool.query<{ quota: string; used: Record<string, string>; version: string }>(
      `SELECT quota, used, version::text AS version FROM projected_quota_usage WHERE namespace = $1 ORDER BY quota`,
      [namespace],
    );
    const version = Number(rows[0]?.version ?? 0);
    const events: RecordedEvent[] = (await streamOf(pool, namespace)).filter((e) => e.version <= version);
    expect(Object.fromEntries(rows.map((r) => [r.quota, r.used])), `${namespace} at version ${version}`).toEqual(usageOf(fold(events)));
  }
}
