import { randomBytes, randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { fold, type Pod } from '@quota/domain';
import { createPostgresInventory } from '@quota/inventory';
import { reconcileQueue, type QueueBackend } from '@quota/jobs';
import { buildDataSourceOptions, openDataSource, UsageProjection } from '@quota/ledger';
import { Ledger } from '../support/ledger.js';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { poolOf } from '../support/api.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';
import { until } from '../support/wait.js';
import {
  connectionsClosed,
  createReview,
  overHardPoints,
  pod,
  quotaBody,
  repeatedIn,
  restReservation,
  runClients,
  send,
  sleep,
  startApp,
  streamOf,
  usageOf,
  usageOfStream,
  type AppProcess,
} from './support/load.js';

/**
 * Everything that writes or rebuilds at once: an API process admitting (webhook reviews and
 * REST reservations that clients commit, cancel, let expire or abandon), a simulated
 * platform persisting and deleting the admitted objects in its own table, two reconciler
 * replicas on BullMQ/Redis committing, releasing and adopting from that table, a projection
 * worker following the ledger, and projection rebuilds (in-process and `--rebuild`
 * processes) emptying the read models under it. Once the load stops and the reconcilers have
 * caught up with the platform, the ledger matches the platform object for object, nothing
 * was released or committed twice, usage never passed hard, and the read models equal the
 * domain's fold of the ledger.
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const QUOTA_NAMESPACES = ['rec-a', 'rec-b', 'rec-c'];
/** Quota'd tightly, so that admissions are denied and freed capacity is reused. */
const HARD = 15;
/** Where unreserved objects appear (adopted even over hard): its quota is far out of reach. */
const ADOPT_NAMESPACE = 'rec-adopt';
const ADOPT_HARD = 100_000;
const NAMESPACES = [...QUOTA_NAMESPACES, ADOPT_NAMESPACE];
const CLIENTS = 12;
const LOAD_MS = 8_000;
/**
 * Far above the few milliseconds the platform takes to persist an admitted object, so no
 * persisted object is ever taken for lost (its release, then adoption, could pass hard).
 */
const GRACE_MS = 2_000;
const INTERVAL_MS = 250;
const TTL_SECONDS = 1;

let db: TestDatabase & { dataSource: DataSource };
let api: ApiProcess | undefined;
let worker: AppProcess | undefined;
const replicaSources: DataSource[] = [];
let replicas: Reconciler[] = [];
let platform: pg.Pool | undefined;
let rebuildSource: DataSource | undefined;
/** The reconcilers' warnings and errors, for failure messages. */
const reconcilerLog: string[] = [];
const backend: QueueBackend = { kind: 'redis', url: REDIS_URL, prefix: `qlfault-${randomBytes(4).toString('hex')}` };

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlfrecon');
  await db.dataSource.query(
    `CREATE TABLE platform_objects (namespace text NOT NULL, kind text NOT NULL, name text NOT NULL, uid text PRIMARY KEY, object jsonb NOT NULL)`,
  );
  platform = new pg.Pool({ connectionString: db.url, max: 4, application_name: 'fault-platform' });
  rebuildSource = await openDataSource({ url: db.url, poolSize: 2, applicationName: 'fault-rebuild' });
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop().catch(() => undefined)));
  await Promise.all(replicaSources.map((s) => s.destroy().catch(() => undefined)));
  // Leave nothing behind in the shared Redis: the queue, then any key left under the prefix.
  const queue = reconcileQueue(backend);
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  const redis = new Redis(REDIS_URL);
  const leftovers = await redis.keys(`${backend.kind === 'redis' ? backend.prefix : ''}:*`);
  if (leftovers.length > 0) await redis.del(...leftovers);
  redis.disconnect();
  await worker?.stop();
  await api?.stop();
  await platform?.end();
  await rebuildSource?.destroy();
  if (db) await connectionsClosed(poolOf(db.dataSource), db.name);
  await db?.drop();
});

const FLOWS = [
  'webhook',
  'rest-persist-commit',
  'rest-persist',
  'rest-cancel',
  'rest-abandon',
  'rest-late-commit',
  'rest-late-release',
  'rest-ttl-commit',
] as const;
type Flow = (typeof FLOWS)[number];

/** What each step of each flow may answer; anything else fails the test. */
const EXPECTED: Record<string, readonly number[]> = {
  'webhook:admit': [200],
  'rest:reserve': [201, 403],
  'rest-persist-commit:commit': [200],
  'rest-persist-commit:commit-after-delete': [409],
  'rest-cancel:release': [200],
  // Racing the reconciler's stale release (the object never appeared): committed first, or 409 released.
  'rest-late-commit:commit': [200, 409],
  'rest-late-release:release': [200],
  // Racing the TTL and the reconciler's expiry (the grace period is longer): committed in time, or 410 expired.
  'rest-ttl-commit:commit': [200, 410],
};

describe('two reconcilers and projection rebuilds under admission load', () => {
  it('does not adopt an object from a listing that started before a newer listing saw it deleted (two reconcilers, out of order)', async () => {
    // What the load below runs into, step by step: replica 1 starts listing while the pod
    // exists; the pod is deleted; replica 2 lists after the deletion and releases the pod's
    // reservation (deleted); another pod takes the freed quota; replica 1's older listing is
    // applied last. The first pod is gone: adopting it would charge a pod that does not
    // exist, over hard, until the next interval's listing releases it.
    const own = await createMigratedDatabase('qlfphantom');
    let now = Date.UTC(2026, 10, 23, 9, 0, 0);
    const ledger = new Ledger(own.dataSource, { clock: () => now });
    const pods = { group: '', resource: 'pods' };
    const gone = pod('phantom', 'web-1', 'uid-web-1');
    const listing = (objects: Pod[], listedAt: number) => ({
      covers: [pods],
      objects: objects.map((o) => ({ groupResource: pods, uid: o.metadata?.uid as string, name: o.metadata?.name as string, object: o })),
      listedAt,
    });
    const reconcile = (objects: Pod[], listedAt: number) =>
      ledger.reconcile('phantom', listing(objects, listedAt), { actor: 'system:reconciler', graceMs: GRACE_MS });
    try {
      await ledger.putQuota('phantom', { name: 'compute', spec: { hard: { pods: '1' } } }, { actor: 'admin' });
      const admitted = await ledger.admit({
        namespace: 'phantom',
        source: 'webhook',
        request: { operation: 'CREATE', groupResource: pods, namespace: 'phantom', name: 'web-1', object: gone },
        requestKey: 'review:phantom-1',
        dryRun: false,
        requester: 'test',
      });
      now += 1_000;
      expect((await reconcile([gone], now)).actions.map((a) => a.kind)).toEqual(['commit']);

      now += 1_000;
      const slowListingStarted = now; // replica 1 sees the pod
      now += 500; // the pod is deleted; replica 2 lists and releases it
      expect((await reconcile([], now)).actions).toEqual([
        { kind: 'release', reservationId: admitted.result.reservationId, reason: 'deleted', uid: 'uid-web-1' },
      ]);
      // The quota is free again: another pod is admitted.
      now += 100;
      const next = pod('phantom', 'web-2', 'uid-web-2');
      const second = await ledger.admit({
        namespace: 'phantom',
        source: 'webhook',
        request: { operation: 'CREATE', groupResource: pods, namespace: 'phantom', name: 'web-2', object: next },
        requestKey: 'review:phantom-2',
        dryRun: false,
        requester: 'test',
      });
      expect(second.result.allowed).toBe(true);
      now += 400;
      const late = await reconcile([gone], slowListingStarted);
      expect({ actions: late.actions, overHard: late.overHard }).toEqual({ actions: [], overHard: [] });
      expect((await ledger.usage('phantom'))?.quotas[0]?.used).toEqual({ pods: '1' });
    } finally {
      await ledger.close();
      await own.drop();
    }
  });

  it('ends with the ledger matching the platform object for object, nothing settled twice, and read models equal to the fold', async () => {
    const objects = platform as pg.Pool;
    api = await startApiProcess({ DATABASE_URL: db.url, DATABASE_POOL_SIZE: '4' });
    const base = api.base;
    for (const namespace of NAMESPACES) {
      const put = await send(
        'PUT',
        `${base}/v1/namespaces/${namespace}/resourcequotas/compute`,
        quotaBody(namespace === ADOPT_NAMESPACE ? ADOPT_HARD : HARD),
      );
      expect(put.ok && put.status).toBe(201);
    }

    // Small batches and frequent snapshots: many steps for the rebuilds to land between.
    worker = startApp('dist/apps/projection-worker/src/main.js', [], {
      DATABASE_URL: db.url,
      METRICS_PORT: '0',
      PROJECTION_POLL_MS: '100',
      PROJECTION_BATCH_SIZE: '50',
      SNAPSHOT_EVERY: '25',
    });
    for (let i = 0; i < 2; i++) {
      const source = new DataSource(buildDataSourceOptions({ url: db.url, poolSize: 3, applicationName: 'fault-reconciler' }));
      await source.initialize();
      replicaSources.push(source);
    }
    replicas = replicaSources.map(
      (source) =>
        new Reconciler(new Ledger(source), createPostgresInventory({ url: db.url, relation: 'public.platform_objects' }), backend, {
          intervalMs: INTERVAL_MS,
          graceMs: GRACE_MS,
          concurrency: 2,
          log: (level, msg, fields) => void (level !== 'info' && reconcilerLog.push(`${level} ${msg} ${JSON.stringify(fields)}`)),
        }),
    );
    await Promise.all(replicas.map((r) => r.start()));

    const statuses: string[] = [];
    const unexpected: string[] = [];
    const admittedKeys = new Map<string, string>(); // request key -> namespace
    const rogues: string[] = [];
    const lateFlows: Promise<void>[] = [];
    const denials = new Map<string, number>();
    const flowsRun = new Map<Flow, number>();
    let seq = 0;
    let running = true;

    const record = (step: string, attempt: Awaited<ReturnType<typeof send>>): number | undefined => {
      const status = attempt.ok ? attempt.status : undefined;
      statuses.push(`${step}:${status ?? 'error'}`);
      if (status === undefined || !EXPECTED[step]?.includes(status))
        unexpected.push(`${step}: ${attempt.ok ? `${attempt.status} ${attempt.text.slice(0, 300)}` : attempt.error}`);
      return status;
    };
    const persist = (object: Pod) =>
      objects.query(`INSERT INTO platform_objects VALUES ($1, 'Pod', $2, $3, $4)`, [
        object.metadata?.namespace,
        object.metadata?.name,
        object.metadata?.uid,
        JSON.stringify(object),
      ]);
    const restPath = (namespace: string, suffix = '') => `${base}/v1/namespaces/${namespace}/reservations${suffix}`;

    /** One admission, as a platform would make it, and what the platform then does with the object. */
    const admitOne = async (namespace: string): Promise<void> => {
      const n = ++seq;
      const object = pod(namespace, `p-${n}`, `obj-${n}`);
      // The webhook three times as often as each REST flow.
      const flow = (randomInt(FLOWS.length + 2) < 3 ? 'webhook' : FLOWS[randomInt(1, FLOWS.length)]) as Flow;
      flowsRun.set(flow, (flowsRun.get(flow) ?? 0) + 1);
      const denied = () => void denials.set(namespace, (denials.get(namespace) ?? 0) + 1);
      if (flow === 'webhook') {
        const answer = await send('POST', `${base}/v1/admission/validate`, createReview(`rev-${n}`, object));
        if (record('webhook:admit', answer) !== 200 || !answer.ok) return;
        if (answer.body.response?.allowed === true) {
          admittedKeys.set(`review:rev-${n}`, namespace);
          // Most creates persist; the rest fail after admission (the reconciler releases them as stale).
          if (randomInt(4) > 0) await persist(object);
        } else if (answer.body.response?.status?.code === 403) {
          denied();
        } else {
          unexpected.push(`webhook: ${answer.text}`);
        }
        return;
      }
      const body = {
        ...(restReservation(`req-${n}`, object) as object),
        ...(flow === 'rest-ttl-commit' ? { ttlSeconds: TTL_SECONDS } : {}),
      };
      const reserved = await send('POST', restPath(namespace), body);
      const status = record('rest:reserve', reserved);
      if (status === 403) denied();
      if (status !== 201 || !reserved.ok) return;
      admittedKeys.set(`rest:req-${n}`, namespace);
      const id = reserved.body.id as string;
      switch (flow) {
        case 'rest-persist-commit': {
          await persist(object);
          const committed = await send('POST', restPath(namespace, `/${id}/commit`));
          // 409 only when the platform deleted the object meanwhile and a reconciler released the reservation (deleted).
          const gone =
            committed.ok &&
            committed.status === 409 &&
            (await objects.query(`SELECT 1 FROM platform_objects WHERE uid = $1`, [object.metadata?.uid])).rowCount === 0;
          record(gone ? `${flow}:commit-after-delete` : `${flow}:commit`, committed);
          return;
        }
        case 'rest-persist':
          await persist(object);
          return;
        case 'rest-cancel':
          record(`${flow}:release`, await send('DELETE', restPath(namespace, `/${id}`)));
          return;
        case 'rest-abandon':
          return;
        case 'rest-late-commit':
        case 'rest-late-release':
        case 'rest-ttl-commit': {
          // Settled around the moment the reconciler (or the TTL) gives it up, off the client's loop.
          const delayMs = flow === 'rest-ttl-commit' ? TTL_SECONDS * 1000 - 150 + randomInt(300) : GRACE_MS - 200 + randomInt(600);
          const settle =
            flow === 'rest-late-release'
              ? () => send('DELETE', restPath(namespace, `/${id}`))
              : () => send('POST', restPath(namespace, `/${id}/commit`));
          const step = `${flow}:${flow === 'rest-late-release' ? 'release' : 'commit'}`;
          lateFlows.push(sleep(delayMs).then(async () => void record(step, await settle())));
          return;
        }
      }
    };

    /** The platform deletes one of its objects (never a rogue: each must be adopted exactly once) and asks for a prompt reconcile. */
    const deleteOne = async (namespace: string, client: number): Promise<void> => {
      const { rows } = await objects.query(
        `DELETE FROM platform_objects WHERE uid = (SELECT uid FROM platform_objects WHERE namespace = $1 AND uid NOT LIKE 'rogue-%' ORDER BY random() LIMIT 1) RETURNING uid`,
        [namespace],
      );
      if (rows.length > 0) await (replicas[client % replicas.length] as Reconciler).enqueue(namespace, 'after-delete');
    };

    const load = runClients(CLIENTS, async (client) => {
      while (running) {
        const namespace = NAMESPACES[randomInt(NAMESPACES.length)] as string;
        if (client === 0) {
          // An object created while the webhook failed open: nobody reserved it.
          const uid = `rogue-${rogues.length}`;
          rogues.push(uid);
          await persist(pod(ADOPT_NAMESPACE, uid, uid));
          await sleep(40);
        } else if (randomInt(4) === 0) {
          await deleteOne(namespace, client);
        } else {
          await admitOne(namespace);
        }
      }
    });

    // Rebuilds while all of that runs: in-process (reset + replay) and as `--rebuild` processes.
    const rebuilt: number[] = [];
    const rebuildExits: (number | null)[] = [];
    const rebuilds = (async () => {
      const projection = new UsageProjection(rebuildSource as DataSource, { batchSize: 50, snapshotEvery: 25 });
      for (let i = 0; i < 4; i++) {
        await sleep(LOAD_MS / 5);
        if (i % 2 === 0) rebuilt.push(await projection.rebuild());
        else {
          const rebuild = startApp('dist/apps/projection-worker/src/main.js', ['--rebuild'], {
            DATABASE_URL: db.url,
            PROJECTION_BATCH_SIZE: '50',
            SNAPSHOT_EVERY: '25',
          });
          const code = await rebuild.exited;
          rebuildExits.push(code);
          if (code !== 0) unexpected.push(`projection-worker --rebuild exited ${code}: ${rebuild.output()}`);
        }
      }
    })();

    try {
      // However slow the machine, the load runs until it has done what it is for: every
      // quota refused admissions, and every flow ran a few times.
      await sleep(LOAD_MS);
      await until(
        'denials in every quota and every flow run',
        async () =>
          QUOTA_NAMESPACES.every((ns) => (denials.get(ns) ?? 0) >= 3) &&
          flowsRun.size === FLOWS.length &&
          [...flowsRun.values()].every((n) => n >= 3)
            ? true
            : undefined,
        30_000,
      );
    } finally {
      running = false;
      await load;
      await rebuilds;
      await Promise.all(lateFlows);
    }

    expect(unexpected).toEqual([]);
    // Every late settlement was answered (as EXPECTED allows, checked above); the rebuilds all ran.
    expect(statuses.filter((step) => /^rest-(late-commit|late-release|ttl-commit):/.test(step))).toHaveLength(lateFlows.length);
    expect(rebuilt).toHaveLength(2);
    expect(rebuilt.every((applied) => applied > 0)).toBe(true);
    expect(rebuildExits).toEqual([0, 0]);

    // The reconcilers catch up with the platform: every object has exactly one live,
    // committed reservation, and nothing else is live (lost ones released, deleted ones too).
    const ledgerPool = poolOf(db.dataSource);
    const mismatch = async (namespace: string): Promise<string | undefined> => {
      const state = fold(await streamOf(ledgerPool, namespace));
      const { rows } = await objects.query<{ uid: string }>(`SELECT uid FROM platform_objects WHERE namespace = $1 ORDER BY uid`, [
        namespace,
      ]);
      const live = [...state.reservations.values()];
      const liveUids = live.map((r) => r.object.uid ?? '(none)').sort();
      const expected = rows.map((r) => r.uid);
      if (JSON.stringify(liveUids) !== JSON.stringify(expected)) return `${namespace}: live ${liveUids.length}, objects ${expected.length}`;
      const pending = live.filter((r) => r.status !== 'committed');
      return pending.length > 0 ? `${namespace}: ${pending.length} not committed` : undefined;
    };
    await until(
      'the ledger to match the platform',
      async () => {
        for (const namespace of NAMESPACES) if ((await mismatch(namespace)) !== undefined) return undefined;
        return true;
      },
      30_000,
    ).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}: ${(await Promise.all(NAMESPACES.map(mismatch))).filter(Boolean).join('; ')}`);
    });
    await Promise.all(replicas.map((r) => r.stop()));
    const stats = replicas.map((r) => r.stats);
    replicas = [];

    // Nothing settled twice; each rogue adopted exactly once; each admission reserved once.
    expect(await repeatedIn(ledgerPool, 'Released', "data->>'reservationId'")).toEqual([]);
    expect(await repeatedIn(ledgerPool, 'Committed', "data->>'reservationId'")).toEqual([]);
    expect(await repeatedIn(ledgerPool, 'Reserved', "data->>'reservationId'")).toEqual([]);
    expect(await repeatedIn(ledgerPool, 'Reserved', 'request_id')).toEqual([]);
    const { rows: adopted } = await ledgerPool.query<{ uid: string; namespace: string }>(
      `SELECT data->'object'->>'uid' AS uid, namespace FROM ledger_events WHERE type = 'Adopted' ORDER BY 1`,
    );
    // An admitted object adopted means a listing older than its reservation's release was
    // applied after it (the case above): the object was gone, the adoption charges nothing real.
    expect(
      adopted.filter((a) => !a.uid.startsWith('rogue-')),
      'adoptions of admitted objects (phantoms)',
    ).toEqual([]);
    expect(adopted).toEqual([...rogues].sort().map((uid) => ({ uid, namespace: ADOPT_NAMESPACE })));
    const { rows: reserved } = await ledgerPool.query<{ request_id: string; namespace: string }>(
      `SELECT request_id, namespace FROM ledger_events WHERE type = 'Reserved'`,
    );
    expect(new Map(reserved.map((r) => [r.request_id, r.namespace]))).toEqual(admittedKeys);

    // What the replicas counted is exactly what the ledger holds from the reconciler.
    const { rows: byActor } = await ledgerPool.query<{ type: string; n: number }>(
      `SELECT type, count(*)::int AS n FROM ledger_events WHERE actor = 'system:reconciler' GROUP BY type`,
    );
    const fromReconciler = Object.fromEntries(byActor.map((r) => [r.type, r.n]));
    const sum = (key: 'committed' | 'released' | 'adopted' | 'failures') => stats.reduce((n, s) => n + s[key], 0);
    expect({
      Committed: fromReconciler['Committed'] ?? 0,
      Released: fromReconciler['Released'] ?? 0,
      Adopted: fromReconciler['Adopted'] ?? 0,
    }).toEqual({
      Committed: sum('committed'),
      Released: sum('released'),
      Adopted: sum('adopted'),
    });
    expect(stats.every((s) => s.namespaces > 0)).toBe(true);
    // A job may fail only by losing the namespace's transaction too many times to admissions
    // (it appends nothing, and BullMQ runs it again); anything else is a reconciler fault.
    expect(reconcilerLog.filter((line) => !/^warn reconcile job failed .*too busy/.test(line))).toEqual([]);
    expect(reconcilerLog).toHaveLength(sum('failures'));

    // Usage never passed hard at any version (adoption may, by design, but has room here).
    for (const namespace of NAMESPACES) expect(overHardPoints(await streamOf(ledgerPool, namespace)), namespace).toEqual([]);

    // The worker catches up after the rebuilds; its read models are the fold of the ledger.
    await until(
      'the projection worker to catch up',
      async () => {
        const lag = await new UsageProjection(db.dataSource).lag();
        return lag.eventsBehind === 0 ? true : undefined;
      },
      30_000,
    );
    for (const namespace of NAMESPACES) {
      const stream = await streamOf(ledgerPool, namespace);
      const state = fold(stream);
      const expected = usageOf(state);
      const { rows: projected } = await ledgerPool.query<{ quota: string; used: Record<string, string>; version: string }>(
        `SELECT quota, used, version::text AS version FROM projected_quota_usage WHERE namespace = $1 ORDER BY quota`,
        [namespace],
      );
      expect(Object.fromEntries(projected.map((r) => [r.quota, r.used])), namespace).toEqual(expected);
      expect(projected.map((r) => Number(r.version))).toEqual([stream.length]);
      const { rows: live } = await ledgerPool.query<{ id: string }>(
        `SELECT reservation_id AS id FROM projected_reservations WHERE namespace = $1 ORDER BY reservation_id`,
        [namespace],
      );
      expect(live.map((r) => r.id)).toEqual([...state.reservations.keys()].sort());
      // The head row (what admission decides on) and the as-of query (from the rebuilt snapshots) agree.
      const now = await send('GET', `${base}/v1/namespaces/${namespace}/usage`);
      const asOf = await send('GET', `${base}/v1/namespaces/${namespace}/usage?at=${encodeURIComponent(new Date().toISOString())}`);
      for (const usage of [now, asOf]) {
        expect(
          usage.ok && Object.fromEntries(usage.body.quotas.map((q: { name: string; used: unknown }) => [q.name, q.used])),
          namespace,
        ).toEqual(expected);
      }
      const { rows: count } = await objects.query<{ n: number }>(`SELECT count(*)::int AS n FROM platform_objects WHERE namespace = $1`, [
        namespace,
      ]);
      expect(usageOfStream(stream)['compute']?.['pods']).toBe(String(count[0]?.n));
    }
  });
});
