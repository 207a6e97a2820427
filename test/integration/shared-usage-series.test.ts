import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SharedQuotaDefinition } from '@quota/domain';
import { ClusterWriter, LedgerClock, LedgerCommands, SharedUsageQueries, UsageProjection } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

/**
 * A shared quota's series from the shared usage series (shared-usage-series.ts) is the sum of its
 * namespaces' usage it replaces, point for point, on a churned history: namespaces join and leave
 * in waves, admit and release, the quota's limits change, it is removed and defined again. Compared
 * before the projection has run (every namespace's part comes from the ledger), while it catches up
 * in steps of a few events by fresh workers (the series' totals plus the parts of the namespaces not
 * caught up with), and once it has.
 */
const NAMESPACES = 24;
const key = 'clusterresourcequotas/waves';
const crq = (hard: Record<string, string>): SharedQuotaDefinition => ({
  ref: { kind: 'ClusterResourceQuota', name: 'waves' },
  spec: { hard },
  selector: { labels: { matchLabels: { tenant: 'waves' } } },
});
const actor = { actor: 'admin' };

let db: TestDatabase & { dataSource: DataSource };
let writer: ClusterWriter;
let commands: LedgerCommands;
let usage: SharedUsageQueries;
let clock: LedgerClock;
const instants: string[] = [];
const live = new Map<string, string[]>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mark = async (): Promise<void> => {
  await sleep(3);
  instants.push(new Date(await clock.now()).toISOString());
  await sleep(3);
};
const ns = (i: number) => `wave-${i}`;
const label = (i: number, tenant: string) => writer.putNamespace({ name: ns(i), metadata: { labels: { tenant } } }, actor);
const admit = async (i: number, pods: string, memory: string) => {
  const namespace = ns(i);
  const { result } = await commands.admit({
    namespace,
    source: 'rest',
    request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace },
    kind: 'Pod',
    resources: { pods, memory },
    dryRun: false,
    requester: 'ci',
  });
  if (result.reservationId) live.set(namespace, [...(live.get(namespace) ?? []), result.reservationId]);
};
const release = async (i: number) => {
  const id = live.get(ns(i))?.shift();
  if (id) await commands.release(ns(i), id, { actor: 'ci' });
};

beforeAll(async () => {
  db = await createMigratedDatabase('qlsharedseries');
  writer = new ClusterWriter(db.dataSource);
  commands = new LedgerCommands(db.dataSource);
  usage = new SharedUsageQueries(db.dataSource);
  clock = new LedgerClock(db.dataSource);
  await writer.putSharedQuota(crq({ pods: '100', memory: '64Gi' }), actor);
  await mark();
  for (let wave = 0; wave < 3; wave++) {
    for (let i = wave * 8; i < NAMESPACES; i++) await label(i, 'waves');
    await mark();
    for (let i = 0; i < NAMESPACES; i += 1 + wave) await admit(i, String(1 + (i % 3)), `${256 * (1 + (i % 4))}Mi`);
    await mark();
    for (let i = wave; i < NAMESPACES; i += 3) await release(i);
    await mark();
    for (let i = 0; i < NAMESPACES; i++) if (i % 4 !== wave) await label(i, 'gone');
    await mark();
  }
  await writer.putSharedQuota(crq({ pods: '7', memory: '1Gi' }), actor);
  await mark();
  await writer.deleteSharedQuota({ kind: 'ClusterResourceQuota', name: 'waves' }, actor);
  await mark();
  for (let i = 0; i < NAMESPACES; i += 2) await label(i, 'waves');
  await writer.putSharedQuota(crq({ pods: '50' }), actor);
  await mark();
  for (let i = 0; i < NAMESPACES; i += 2) await admit(i, '1', '1Gi');
  for (let i = 0; i < NAMESPACES; i += 4) await release(i);
  await mark();
}, 120_000);
afterAll(async () => {
  await commands?.close();
  await writer?.close();
  await db?.drop();
});

/** Ranges of the history: all of it, its waves, after the churn, a point at each recorded instant. */
function ranges(points: number): { since: string; until: string; points: number }[] {
  const first = instants[0] as string;
  const last = instants.at(-1) as string;
  return [
    { since: first, until: last, points },
    { since: instants[2] as string, until: instants[9] as string, points: Math.max(2, Math.floor(points / 2)) },
    { since: instants.at(-4) as string, until: last, points: 3 },
    { since: last, until: last, points: 1 },
  ];
}

async function expectSeriesEqualSums(points: number): Promise<void> {
  for (const range of ranges(points)) {
    const series = await usage.usageSeries(key, range);
    const sums = await usage.usageSeries(key, range, undefined, 'namespaces');
    expect(series, `${range.since}..${range.until} in ${range.points}`).toEqual(sums);
  }
}

describe("a shared quota's series after churn, from the shared usage series", () => {
  it('equals the sum of its namespaces before the projection has run, while it catches up, and once it has', async () => {
    await expectSeriesEqualSums(40);
    let steps = 0;
    while ((await new UsageProjection(db.dataSource, { batchSize: 7 }).step(7, 'force')) > 0) {
      if (++steps % 15 === 0) await expectSeriesEqualSums(25);
    }
    expect(steps).toBeGreaterThan(30);
    await expectSeriesEqualSums(500);
    // The sums the series reads are not empty: the waves are in them.
    const series = await usage.usageSeries(key, ranges(500)[0] as { since: string; until: string; points: number });
    expect(new Set(series?.points.map((p) => p.used['pods'])).size).toBeGreaterThan(5);
    expect(series?.points.some((p) => !p.defined)).toBe(true);
  }, 240_000);

  it('equals them after a rebuild of the read models', async () => {
    await new UsageProjection(db.dataSource).rebuild();
    await expectSeriesEqualSums(200);
  }, 120_000);
});

describe('the shared usage series when the projection meets changes out of time order', () => {
  const base = Date.parse('2030-01-01T00:00:00Z');
  const seriesOf = (name: string, source?: 'namespaces') =>
    usage.usageSeries(
      `clusterresourcequotas/${name}`,
      { since: new Date(base).toISOString(), until: new Date(base + 20_000).toISOString(), points: 120 },
      undefined,
      source,
    );
  const count = async (sql: string, name: string) => Number((await db.dataSource.query(sql, [`clusterresourcequotas/${name}`]))[0].n);

  it('adds a change projected after later ones to every total from its instant on, across rows; and sums the namespaces of a quota whose namespace went back in time', async () => {
    for (const name of ['late', 'back']) {
      await writer.putSharedQuota(
        {
          ref: { kind: 'ClusterResourceQuota', name },
          spec: { hard: { pods: '1000' } },
          selector: { labels: { matchLabels: { tenant: name } } },
        },
        actor,
      );
    }
    for (const [name, tenant] of [
      ['late-a', 'late'],
      ['late-b', 'late'],
      ['late-d', 'late'],
      ['back-c', 'back'],
    ] as const)
      await writer.putNamespace({ name, metadata: { labels: { tenant } } }, actor);
    await new UsageProjection(db.dataSource).catchUp();
    // A clock set by hand: late-a's 70 admissions come first in the ledger (their positions) at
    // later instants than late-b's (amid them) and late-d's (before them all), which the
    // projection meets after them; back-c's second admission is recorded before its first.
    let now = 0;
    const timed = new LedgerCommands(db.dataSource, { clock: () => base + now });
    const reserve = async (namespace: string, at: number) => {
      now = at;
      await timed.admit({
        namespace,
        source: 'rest',
        request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace },
        kind: 'Pod',
        resources: { pods: '1' },
        dryRun: false,
        requester: 'ci',
      });
    };
    try {
      for (let i = 0; i < 70; i++) await reserve('late-a', 10_000 + i * 100);
      await new UsageProjection(db.dataSource).catchUp();
      await reserve('late-b', 10_050);
      await reserve('late-d', 2_000);
      await reserve('back-c', 12_000);
      await reserve('back-c', 1_000);
    } finally {
      await timed.close();
    }
    await new UsageProjection(db.dataSource).catchUp();
    expect(await count(`SELECT count(*)::int AS n FROM projected_shared_usage WHERE key = $1`, 'late')).toBeGreaterThanOrEqual(3);
    expect(await count(`SELECT count(*)::int AS n FROM projected_shared_unordered WHERE key = $1`, 'late')).toBe(0);
    expect(await seriesOf('late')).toEqual(await seriesOf('late', 'namespaces'));
    expect((await seriesOf('late'))?.points.at(-1)?.used).toEqual({ pods: '72' });
    expect(await count(`SELECT count(*)::int AS n FROM projected_shared_unordered WHERE key = $1`, 'back')).toBe(1);
    expect(await seriesOf('back')).toEqual(await seriesOf('back', 'namespaces'));
  });
});
