import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterWriter, QueueQueries, type AdmitCommand, type LedgerCommands } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { Ledger } from '../support/ledger.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { disagreements } from '../support/shared-quotas.js';
import { poolOf } from '../support/api.js';

// Random histories on PostgreSQL: reserves with waits, releases, cancels, local hard
// changes, shared-quota hard changes and relabels in and out of a ClusterResourceQuota. After each
// step (and the wake-ups the service runs: the fair drain of a shared quota a write freed, the
// periodic sweep after a relabel or a shared hard change): no admission leaves a quota or the
// shared quota over hard; no waiter is admitted past one ahead of it that was blocking; and a
// further round of drains admits nothing (no waiter that fits was left asleep).
const PASS_MAX = 2;
let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;
let writer: ClusterWriter;
let queue: QueueQueries;
const freed = new Set<string>();

beforeAll(async () => {
  db = await createMigratedDatabase('qlqprop');
  ledger = new Ledger(db.dataSource, {
    retryBaseMs: 1,
    queuePolicy: { passMax: PASS_MAX, passMs: 3_600_000, perNamespaceMax: 20, blockSharePercent: 100 },
  });
  writer = new ClusterWriter(db.dataSource, {
    queuePolicy: { passMax: PASS_MAX, passMs: 3_600_000, perNamespaceMax: 20, blockSharePercent: 100 },
  });
  queue = new QueueQueries(db.dataSource);
  (ledger.commands as LedgerCommands).onSharedFreed((keys) => keys.forEach((key) => freed.add(key)));
});
afterAll(async () => {
  await ledger?.close();
  await writer?.close();
  await db?.drop();
});

type Op =
  | { t: 'reserve'; ns: number; cpu: number; wait: boolean; priority: number }
  | { t: 'release'; ns: number; pick: number }
  | { t: 'cancel'; ns: number; pick: number }
  | { t: 'hard'; ns: number; cpu: number }
  | { t: 'shared'; cpu: number }
  | { t: 'label'; ns: number; on: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('reserve' as const),
      ns: fc.nat(1),
      cpu: fc.integer({ min: 1, max: 3 }),
      wait: fc.boolean(),
      priority: fc.nat(1),
    }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('release' as const), ns: fc.nat(1), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('cancel' as const), ns: fc.nat(1), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('hard' as const), ns: fc.nat(1), cpu: fc.integer({ min: 0, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('shared' as const), cpu: fc.integer({ min: 0, max: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('label' as const), ns: fc.nat(1), on: fc.boolean() }) },
);

// A history random runs found (kept: 15 random runs seldom find it again): a shared waiter left
// asleep by a raised local hard (its namespace's own drain leaves it to the fair drain, which ran not).
const RAISED_LOCAL_HARD: Op[] = [
  { t: 'hard', ns: 1, cpu: 0 },
  { t: 'reserve', ns: 0, cpu: 2, wait: true, priority: 1 },
  { t: 'reserve', ns: 1, cpu: 2, wait: true, priority: 0 },
  { t: 'reserve', ns: 1, cpu: 3, wait: false, priority: 0 },
  { t: 'hard', ns: 1, cpu: 2 },
  { t: 'reserve', ns: 0, cpu: 1, wait: false, priority: 1 },
  { t: 'release', ns: 1, pick: 356140303 },
  { t: 'release', ns: 0, pick: 1816592709 },
  { t: 'reserve', ns: 0, cpu: 3, wait: true, priority: 1 },
];

const count = async (sql: string, params: unknown[]): Promise<number> => Number((await db.dataSource.query(sql, params))[0].n);

describe('random queued histories on PostgreSQL', () => {
  it('never admit over hard, never past a blocking waiter, and leave no waiter that fits asleep', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 30 }), async (ops) => {
        run++;
        const names = [`qp${run}-a`, `qp${run}-b`];
        const key = `clusterresourcequotas/qp${run}`;
        const labels = (on: boolean): { labels: Record<string, string> } => ({ labels: on ? { run: String(run) } : {} });
        for (const name of names) {
          await writer.putNamespace({ name, metadata: labels(true) }, { actor: 't' });
          await ledger.putQuota(name, { name: 'compute', spec: { hard: { cpu: '4' } } }, { actor: 't' });
        }
        await writer.putSharedQuota(
          {
            ref: { kind: 'ClusterResourceQuota', name: `qp${run}` },
            spec: { hard: { cpu: '6' } },
            selector: { labels: { matchLabels: { run: String(run) } } },
          },
          { actor: 't' },
        );
        const live = new Map<string, string[]>(names.map((n) => [n, []]));
        const wakeUps = async (sweep: boolean): Promise<void> => {
          if (sweep) for (const name of names) await ledger.commands.sweepQueue(name, { actor: 'sweep' });
          if (sweep || freed.delete(key)) await writer.drainSharedQueue(key, { actor: 'fair' });
          freed.clear();
        };
        for (const o of ops) {
          const before = new Map(await Promise.all(names.map(async (n) => [n, (await queue.queue(n)).items] as const)));
          const versions = new Map(
            await Promise.all(
              names.map(
                async (n) =>
                  [n, await count(`SELECT coalesce(max(version), 0) AS n FROM ledger_events WHERE namespace = $1`, [n])] as const,
              ),
            ),
          );
          await apply(o, names, live, labels);
          await wakeUps(o.t === 'label' || o.t === 'shared');
          for (const name of names) await checkStep(name, key, versions.get(name) ?? 0, before.get(name) ?? [], live);
          // No lost wake-up: a further round of every drain admits nothing.
          const admittedSoFar = await count(
            `SELECT count(*) AS n FROM ledger_events WHERE namespace = ANY($1) AND type = 'AdmittedFromQueue'`,
            [names],
          );
          await wakeUps(true);
          expect(
            await count(`SELECT count(*) AS n FROM ledger_events WHERE namespace = ANY($1) AND type = 'AdmittedFromQueue'`, [names]),
          ).toBe(admittedSoFar);
        }
        expect(await disagreements(poolOf(db.dataSource))).toEqual([]);
      }),
      { numRuns: 15, examples: [[RAISED_LOCAL_HARD]] },
    );
  }, 300_000);
});

async function apply(
  o: Op,
  names: readonly string[],
  live: Map<string, string[]>,
  labels: (on: boolean) => { labels: Record<string, string> },
): Promise<void> {
  const name = names[('ns' in o ? o.ns : 0) % names.length] as string;
  switch (o.t) {
    case 'reserve': {
      const command: AdmitCommand = {
        namespace: name,
        source: 'rest',
        request: { operation: 'CREATE', groupResource: { group: 'batch.example.com', resource: 'jobs' }, namespace: name },
        kind: 'Job',
        resources: { cpu: String(o.cpu) },
        dryRun: false,
        requester: 't',
        ...(o.wait ? { wait: { seconds: 3600, priority: o.priority } } : {}),
      };
      const { result } = await ledger.admit(command);
      if (result.code === 200 && result.reservationId) live.get(name)?.push(result.reservationId);
      return;
    }
    case 'release': {
      const ids = live.get(name) ?? [];
      const [id] = ids.splice(o.pick % Math.max(1, ids.length), 1);
      if (id) await ledger.release(name, id, { actor: 't', reason: 'cancelled' });
      return;
    }
    case 'cancel': {
      const items = (await queue.queue(name)).items;
      const item = items[o.pick % Math.max(1, items.length)];
      if (item) await ledger.commands.cancelQueued(name, item.id, { actor: 't' });
      return;
    }
    case 'hard':
      await ledger.putQuota(name, { name: 'compute', spec: { hard: { cpu: String(o.cpu) } } }, { actor: 't' });
      return;
    case 'shared': {
      const run = names[0]?.slice(2, names[0].indexOf('-')) ?? '';
      await writer.putSharedQuota(
        {
          ref: { kind: 'ClusterResourceQuota', name: `qp${run}` },
          spec: { hard: { cpu: String(o.cpu) } },
          selector: { labels: { matchLabels: { run } } },
        },
        { actor: 't' },
      );
      return;
    }
    case 'label':
      await writer.putNamespace({ name, metadata: labels(o.on) }, { actor: 't' });
      return;
  }
}

/** The laws of one step in one namespace, from the events it appended there. */
async function checkStep(
  name: string,
  key: string,
  fromVersion: number,
  before: readonly { id: string; passed: number }[],
  live: Map<string, string[]>,
): Promise<void> {
  const appended: { type: string; id: string }[] = await db.dataSource.query(
    `SELECT type, data->>'reservationId' AS id FROM ledger_events WHERE namespace = $1 AND version > $2 ORDER BY version`,
    [name, fromVersion],
  );
  const admitted = appended.filter((e) => e.type === 'AdmittedFromQueue').map((e) => e.id);
  for (const id of admitted) live.get(name)?.push(id);
  if (!appended.some((e) => e.type === 'Reserved')) return;
  const head = (await db.dataSource.query(`SELECT state FROM namespace_heads WHERE namespace = $1`, [name]))[0].state;
  for (const quota of head.quotas)
    expect(Number(quota.used.cpu ?? 0), `${name} ${quota.definition.name}`).toBeLessThanOrEqual(Number(quota.definition.spec.hard.cpu));
  if ((head.shared ?? []).some((q: { key: string }) => q.key === key)) {
    const shared = (await db.dataSource.query(`SELECT state FROM shared_quota_heads WHERE key = $1`, [key]))[0].state;
    const used = Object.values(shared.members as Record<string, { cpu?: string }>).reduce((sum, m) => sum + Number(m.cpu ?? 0), 0);
    expect(used, key).toBeLessThanOrEqual(Number(shared.definition.spec.hard.cpu));
  }
  // Never past a blocking waiter: every one ahead of an admitted one, still waiting, was not blocking.
  const waiting = new Set((await queue.queue(name)).items.map((w) => w.id));
  for (const id of admitted) {
    const at = before.findIndex((w) => w.id === id);
    for (const ahead of before.slice(0, Math.max(0, at)))
      if (waiting.has(ahead.id)) expect(ahead.passed, `${ahead.id} passed by ${id}`).toBeLessThan(PASS_MAX);
  }
}
