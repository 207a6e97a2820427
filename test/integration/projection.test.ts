import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fold, Resources, type Pod, type RecordedEvent } from '@quota/domain';
import { UsageProjection } from '@quota/ledger';
import { Ledger } from '../support/ledger.js';
import { poolOf } from '../support/api.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import type { DataSource } from 'typeorm';

let db: TestDatabase & { dataSource: DataSource };
let pool: pg.Pool;

beforeAll(async () => {
  db = await createMigratedDatabase('qlproj');
  pool = poolOf(db.dataSource);
});
afterAll(async () => {
  await db?.drop();
});

/** Every event of a namespace, as the domain folds them. */
async function streamOf(namespace: string, untilVersion = Number.MAX_SAFE_INTEGER): Promise<RecordedEvent[]> {
  const { rows } = await pool.query<{ version: string; type: string; data: unknown; at_ms: number }>(
    `SELECT version, type, data, (extract(epoch from recorded_at) * 1000)::float8 AS at_ms FROM ledger_events
      WHERE namespace = $1 AND version <= $2 ORDER BY ledger_events.version`,
    [namespace, untilVersion],
  );
  return rows.map((r) => ({ type: r.type, data: r.data, version: Number(r.version), at: Math.floor(r.at_ms) }) as RecordedEvent);
}

/** The fold's usage per quota, canonical, the shape the read models store. */
function usageOfFold(events: readonly RecordedEvent[]): Record<string, Record<string, string>> {
  const state = fold(events);
  return Object.fromEntries(
    [...state.quotas.keys()].sort().map((name) => [name, Resources.canonicalResourceList(state.used.get(name) ?? Resources.EMPTY)]),
  );
}

/** The quotas as usage?at= answers them, by the fold. */
function quotasOfFold(events: readonly RecordedEvent[]): { name: string; hard: Record<string, string>; used: Record<string, string> }[] {
  const state = fold(events);
  return [...state.quotas.values()]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((q) => ({
      name: q.name,
      hard: q.definition.spec.hard ?? {},
      used: Resources.canonicalResourceList(state.used.get(q.name) ?? Resources.EMPTY),
    }));
}

async function projectedUsage(namespace: string): Promise<Record<string, Record<string, string>>> {
  const { rows } = await pool.query<{ quota: string; used: Record<string, string> }>(
    `SELECT quota, used FROM projected_quota_usage WHERE namespace = $1 ORDER BY quota`,
    [namespace],
  );
  return Object.fromEntries(rows.map((r) => [r.quota, r.used]));
}

async function projectedLive(namespace: string): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT reservation_id AS id FROM projected_reservations WHERE namespace = $1 ORDER BY reservation_id`,
    [namespace],
  );
  return rows.map((r) => r.id);
}

/**
 * Catches up until nothing is behind; returns how many events were applied. One catchUp can stop
 * early on a shared server: a step reads only below the oldest transaction still running in the
 * whole cluster, so another database's open transaction holds it back for a moment.
 */
async function settle(projection: UsageProjection): Promise<number> {
  let applied = 0;
  for (;;) {
    applied += await projection.catchUp();
    if ((await projection.lag()).eventsBehind === 0) return applied;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const pod = (name: string, cpu: string, phase?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
  ...(phase ? { status: { phase } } : {}),
});

describe('the usage projection', () => {
  it('does not skip an event whose transaction took its position first but committed last, and does not wait for it either', async () => {
    const projection = new UsageProjection(db.dataSource);
    const ledger = new Ledger(db.dataSource);
    await projection.catchUp();
    // A writer that takes a position, then holds its transaction open (as the ledger writes: the
    // namespace's head moves with its events).
    const late = new pg.Client({ connectionString: db.url });
    await late.connect();
    try {
      await late.query('BEGIN');
      await late.query(
        `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor) VALUES ('late', 1, 'QuotaDefined', 1, $1, 'test')`,
        [JSON.stringify({ name: 'q', spec: { hard: { pods: '3' } } })],
      );
      await late.query(`INSERT INTO namespace_heads (namespace, version, state) VALUES ('late', 1, '{}')`);
      // Another namespace's transaction commits after it, with a higher position: it is applied
      // at once, an unrelated open transaction holds nothing back.
      await ledger.putQuota('early', { name: 'q', spec: { hard: { pods: '1' } } }, { actor: 'test' });
      expect(await projection.step(1000, 'force')).toBe(1);
      expect(await projectedUsage('early')).toEqual({ q: { pods: '0' } });
      await late.query('COMMIT');
    } finally {
      await late.end();
    }
    // The feed has passed the late event's position; its namespace's head says it is behind.
    expect((await projection.lag()).eventsBehind).toBe(1);
    expect(await settle(projection)).toBe(1);
    expect(await projectedUsage('late')).toEqual({ q: { pods: '0' } });
    await ledger.close();
  });

  it('is not held back by a long transaction in another database of the same server', async () => {
    const projection = new UsageProjection(db.dataSource);
    const ledger = new Ledger(db.dataSource);
    await projection.catchUp();
    const other = await createMigratedDatabase('qlother');
    const long = new pg.Client({ connectionString: other.url });
    await long.connect();
    try {
      // An open transaction with an xid: the cluster-wide pg_snapshot_xmin stays at it.
      await long.query('BEGIN');
      await long.query('SELECT pg_current_xact_id()');
      await ledger.putQuota('busy', { name: 'q', spec: { hard: { pods: '2' } } }, { actor: 'test' });
      expect(await projection.catchUp()).toBe(1);
      expect(await projection.lag()).toMatchObject({ eventsBehind: 0, lagMs: 0 });
      expect(await projectedUsage('busy')).toEqual({ q: { pods: '0' } });
    } finally {
      await long.query('ROLLBACK').catch(() => undefined);
      await long.end();
      await other.drop();
      await ledger.close();
    }
  });

  it('reports its lag: events behind and the age of the oldest one', async () => {
    const projection = new UsageProjection(db.dataSource);
    const ledger = new Ledger(db.dataSource);
    await ledger.putQuota('lagging', { name: 'q', spec: { hard: { pods: '1' } } }, { actor: 'test' });
    await ledger.close();
    const before = await projection.lag();
    expect(before.eventsBehind).toBeGreaterThan(0);
    await settle(projection);
    const after = await projection.lag();
    expect(after).toMatchObject({ name: 'usage', eventsBehind: 0, lagMs: 0 });
    expect(after.position).toBe(after.headPosition);
  });

  /**
   * The law: for any valid history, the incremental projection (caught up at arbitrary
   * points), a rebuild from zero, and the as-of query at the head all equal the domain fold;
   * and the as-of query at any earlier instant equals the fold of the events up to it.
   */
  it('incremental projection = rebuild from zero = as-of at the head = the domain fold, for random histories', async () => {
    let run = 0;
    let terminations = 0;
    const phaseArb = fc.constantFrom('Running', 'Running', 'Succeeded', 'Failed');
    const command = fc.oneof(
      fc.record({
        kind: fc.constant('quota' as const),
        name: fc.constantFrom('a', 'b'),
        cpu: fc.integer({ min: 0, max: 6 }),
        pods: fc.integer({ min: 1, max: 8 }),
        scoped: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('removeQuota' as const), name: fc.constantFrom('a', 'b') }),
      fc.record({ kind: fc.constant('admit' as const), pod: fc.integer({ min: 0, max: 7 }), milli: fc.integer({ min: 0, max: 2500 }) }),
      fc.record({ kind: fc.constant('commit' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
      // A listing: pods nobody reserved, and some admitted ones; either may have turned terminal
      // since an earlier listing, so adoptions, commits, terminations and releases interleave.
      fc.record({
        kind: fc.constant('reconcile' as const),
        exists: fc.array(fc.record({ i: fc.integer({ min: 0, max: 3 }), phase: phaseArb }), { maxLength: 4 }),
        admitted: fc.array(fc.record({ pick: fc.nat(), phase: phaseArb }), { maxLength: 4 }),
        advance: fc.integer({ min: 0, max: 120_000 }),
      }),
      fc.record({ kind: fc.constant('project' as const), fresh: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 15, maxLength: 40 }), async (commands) => {
        const namespace = `prop-${++run}`;
        let now = Date.UTC(2026, 0, 1) + run * 10_000_000;
        const ledger = new Ledger(db.dataSource, { clock: () => (now += 1000) });
        const projection = new UsageProjection(db.dataSource, { snapshotEvery: 10 });
        const reservations: string[] = [];
        const admittedPods: Pod[] = [];
        try {
          await ledger.putQuota(namespace, { name: 'base', spec: { hard: { pods: '5', 'requests.cpu': '4' } } }, { actor: 'test' });
          for (const c of commands) {
            switch (c.kind) {
              case 'quota': {
                const spec = {
                  hard: { pods: String(c.pods), 'requests.cpu': String(c.cpu) },
                  ...(c.scoped ? { scopes: ['NotTerminating'] } : {}),
                };
                await ledger.putQuota(namespace, { name: c.name, spec }, { actor: 'test' });
                break;
              }
              case 'removeQuota':
                await ledger.deleteQuota(namespace, c.name, { actor: 'test' }).catch(() => undefined);
                break;
              case 'admit': {
                const name = `p${c.pod}-${now}`;
                const outcome = await ledger.admit({
                  namespace,
                  source: 'webhook',
                  request: {
                    operation: 'CREATE',
                    groupResource: { group: '', resource: 'pods' },
                    namespace,
                    name,
                    object: pod(name, `${c.milli}m`),
                  },
                  dryRun: false,
                  requester: 'test',
                });
                if (outcome.result.reservationId) reservations.push(outcome.result.reservationId);
                if (outcome.result.allowed) admittedPods.push(pod(name, `${c.milli}m`));
                break;
              }
              case 'commit':
              case 'release': {
                const id = reservations[c.pick % Math.max(1, reservations.length)];
                if (!id) break;
                const op =
                  c.kind === 'commit' ? ledger.commit(namespace, id, { actor: 'test' }) : ledger.release(namespace, id, { actor: 'test' });
                await op.catch(() => undefined);
                break;
              }
              case 'reconcile': {
                const listedAt = now;
                now += c.advance;
                await ledger.reconcile(
                  namespace,
                  {
                    covers: [{ group: '', resource: 'pods' }],
                    objects: [
                      ...c.exists.map(({ i, phase }) => ({
                        groupResource: { group: '', resource: 'pods' },
                        uid: `adopt-${i}`,
                        name: `adopt-${i}`,
                        object: pod(`adopt-${i}`, '100m', phase),
                      })),
                      ...c.admitted.flatMap(({ pick, phase }) => {
                        const admitted = admittedPods[pick % Math.max(1, admittedPods.length)];
                        const uid = admitted?.metadata?.uid;
                        return admitted && uid
                          ? [
                              {
                                groupResource: { group: '', resource: 'pods' },
                                uid,
                                name: admitted.metadata?.name ?? uid,
                                object: { ...admitted, status: { phase } },
                              },
                            ]
                          : [];
                      }),
                    ],
                    listedAt,
                  },
                  { actor: 'test', graceMs: 60_000 },
                );
                break;
              }
              case 'project':
                // The same worker (its remembered states), or another one (state read back from the
                // read models; the first worker's memory is then behind, and must not be used).
                await settle(c.fresh ? new UsageProjection(db.dataSource, { snapshotEvery: 10 }) : projection);
                break;
            }
          }
          const stream = await streamOf(namespace);
          const head = stream.at(-1) as RecordedEvent;
          // Before the projection has caught up (some versions are past what it reached, unless
          // the last command projected): as-of folds what the read model does not cover.
          const unsettled = await ledger.usageAt(namespace, new Date(head.at).toISOString());
          expect(unsettled?.quotas).toEqual(quotasOfFold(stream));
          await settle(projection);
          terminations += stream.filter((e) => e.type === 'Terminated').length;
          const expected = usageOfFold(stream);
          const expectedLive = [...fold(stream).reservations.keys()].sort();
          expect(await projectedUsage(namespace)).toEqual(expected);
          expect(await projectedLive(namespace)).toEqual(expectedLive);

          const asOfHead = await ledger.usageAt(namespace, new Date(head.at).toISOString());
          expect(asOfHead?.quotas).toEqual(quotasOfFold(stream));
          expect(asOfHead?.version).toBe(head.version);
          // Every earlier instant, from the read model of usage at every version: the fold of the
          // events recorded up to it (a transaction's events share their instant), quotas'
          // limits included.
          for (const event of stream) {
            const asOf = await ledger.usageAt(namespace, new Date(event.at).toISOString());
            expect(asOf?.quotas).toEqual(quotasOfFold(stream.filter((e) => e.at <= event.at)));
          }
          // A series over the whole history: every point in one statement, each the fold up to it.
          const first = stream[0] as RecordedEvent;
          const series = await ledger.usageSeries(namespace, {
            since: new Date(first.at - 1).toISOString(),
            until: new Date(head.at).toISOString(),
            points: 50,
          });
          for (const point of series?.points ?? []) {
            const upTo = stream.filter((e) => e.at <= Date.parse(point.at));
            expect({ at: point.at, version: point.version, quotas: point.quotas }).toEqual({
              at: point.at,
              version: upTo.at(-1)?.version ?? 0,
              quotas: quotasOfFold(upTo),
            });
          }
          expect(series?.points).toHaveLength(50);

          await projection.reset();
          await settle(projection);
          expect(await projectedUsage(namespace)).toEqual(expected);
          expect(await projectedLive(namespace)).toEqual(expectedLive);
        } finally {
          await ledger.close();
        }
      }),
      { numRuns: 12, endOnFailure: true },
    );
    // The histories did reach the terminal transitions the law is meant to cover.
    expect(terminations).toBeGreaterThan(0);
  });
});

describe("the projection's snapshots (written after the step that reached them: snapshot-writer.ts)", () => {
  /** Admits `count` pods of 100m into `namespace`, releasing and committing some on the way; returns nothing, the ledger holds it. */
  async function churn(ledger: Ledger, namespace: string, count: number, from = 0): Promise<void> {
    const ids: string[] = [];
    for (let i = from; i < from + count; i++) {
      const name = `s${i}`;
      const outcome = await ledger.admit({
        namespace,
        source: 'webhook',
        request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name, object: pod(name, '100m') },
        dryRun: false,
        requester: 'test',
      });
      expect(outcome.result.allowed).toBe(true);
      ids.push(outcome.result.reservationId as string);
      if (ids.length % 3 === 0) await ledger.release(namespace, ids.at(-2) as string, { actor: 'test' });
      if (ids.length % 4 === 0) await ledger.commit(namespace, ids.at(-4) as string, { actor: 'test' }).catch(() => undefined);
    }
  }

  it('each holds the fold of its namespace up to its version: usage, and every live reservation as it stood', async () => {
    const namespace = 'snapshotted';
    const ledger = new Ledger(db.dataSource);
    const projection = new UsageProjection(db.dataSource, { snapshotEvery: 7 });
    try {
      await ledger.putQuota(namespace, { name: 'q', spec: { hard: { pods: '100', 'requests.cpu': '100' } } }, { actor: 'test' });
      await churn(ledger, namespace, 30);
      // One step takes the whole stream: several snapshots are due inside it, each of a state
      // the same step's later events go on to change.
      while ((await projection.step(1000, 'force')) > 0);
      await projection.snapshotsWritten();
      const { rows } = await pool.query<{
        version: number;
        state: { quotas: { definition: { name: string }; used: Record<string, string> }[] };
        reservations: { id: string; status: string; committedAt?: number }[];
      }>(`SELECT version::int AS version, state, reservations FROM usage_snapshots WHERE namespace = $1 ORDER BY version`, [namespace]);
      expect(rows.length).toBeGreaterThanOrEqual(6);
      for (const row of rows) {
        const stream = await streamOf(namespace, row.version);
        const state = fold(stream);
        expect(Object.fromEntries(row.state.quotas.map((q) => [q.definition.name, q.used])), `usage at ${row.version}`).toEqual(
          usageOfFold(stream),
        );
        const live = (reservations: Iterable<{ id: string; status: string; committedAt?: number }>): string[] =>
          [...reservations].map((r) => `${r.id} ${r.status} ${r.committedAt === undefined ? 'pending' : 'committed'}`).sort();
        expect(live(row.reservations), `live reservations at ${row.version}`).toEqual(live(state.reservations.values()));
      }
    } finally {
      await ledger.close();
    }
  });

  it('one that cannot be written holds no step back: the read models move on, the failure is told, and the next one due is written', async () => {
    const namespace = 'unsnapshotted';
    const ledger = new Ledger(db.dataSource);
    const told: unknown[] = [];
    const projection = new UsageProjection(db.dataSource, { snapshotEvery: 5, onError: (error) => told.push(error) });
    const snapshots = async (): Promise<number> =>
      Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM usage_snapshots WHERE namespace = $1`, [namespace])).rows[0]?.n);
    try {
      await settle(projection);
      await pool.query(`ALTER TABLE usage_snapshots ADD CONSTRAINT test_refuses_snapshots CHECK (namespace <> '${namespace}') NOT VALID`);
      try {
        await ledger.putQuota(namespace, { name: 'q', spec: { hard: { pods: '100', 'requests.cpu': '100' } } }, { actor: 'test' });
        await churn(ledger, namespace, 8);
        while ((await projection.step(1000, 'force')) > 0);
        await expect(projection.snapshotsWritten()).rejects.toThrow(/test_refuses_snapshots/);
        expect(told.length).toBeGreaterThan(0);
        expect((await projection.lag()).eventsBehind).toBe(0);
        expect(await projectedUsage(namespace)).toEqual(usageOfFold(await streamOf(namespace)));
        expect(await snapshots()).toBe(0);
      } finally {
        await pool.query(`ALTER TABLE usage_snapshots DROP CONSTRAINT IF EXISTS test_refuses_snapshots`);
      }
      const failed = told.length;
      await churn(ledger, namespace, 4, 8);
      await settle(projection);
      expect(await snapshots()).toBe(1);
      expect(told).toHaveLength(failed);
    } finally {
      await ledger.close();
    }
  });
});
