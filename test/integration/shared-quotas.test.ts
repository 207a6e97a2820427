import fc from 'fast-check';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod, SharedQuotaDefinition } from '@quota/domain';
import {
  ClusterQueries,
  ClusterWriter,
  LedgerClock,
  LedgerCommands,
  SharedUsageQueries,
  UsageProjection,
  type AdmitCommand,
  type SharedQuotaUsagePoint,
} from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { poolOf } from '../support/api.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { disagreements } from '../support/shared-quotas.js';

/**
 * Quotas over several namespaces, on the real ledger: a ClusterResourceQuota and a
 * HierarchicalResourceQuota raced from two command sides at once, labels that move a
 * namespace's usage in and out, and random histories after which every head equals the folds.
 */
let db: TestDatabase & { dataSource: DataSource };
let pool: pg.Pool;
let writer: ClusterWriter;
let queries: ClusterQueries;
let usage: SharedUsageQueries;
let clock: LedgerClock;

beforeAll(async () => {
  db = await createMigratedDatabase('qlshared');
  pool = poolOf(db.dataSource);
  writer = new ClusterWriter(db.dataSource);
  queries = new ClusterQueries(db.dataSource);
  usage = new SharedUsageQueries(db.dataSource);
  clock = new LedgerClock(db.dataSource);
});
afterAll(async () => {
  await writer?.close();
  await db?.drop();
});

const actor = { actor: 'admin' };
let uids = 0;
const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: `uid-${name}-${++uids}` },
  spec: { containers: [{ name: 'app', image: 'nginx' }] },
});
const admitPod = (namespace: string, name: string): AdmitCommand => {
  const object = pod(name);
  return {
    namespace,
    source: 'webhook',
    request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name, object },
    dryRun: false,
    requester: 'alice',
  };
};
const crq = (name: string, labels: Record<string, string>, pods: number): SharedQuotaDefinition => ({
  ref: { kind: 'ClusterResourceQuota', name },
  spec: { hard: { pods: String(pods) } },
  selector: { labels: { matchLabels: labels } },
});
const hrq = (namespace: string, name: string, pods: number): SharedQuotaDefinition => ({
  ref: { kind: 'HierarchicalResourceQuota', name, namespace },
  spec: { hard: { pods: String(pods) } },
});

/** 300 admissions split over the namespaces, from two command sides (two pools) at once. */
async function race(namespaces: readonly string[], total: number): Promise<{ allowed: Map<string, number>; denials: string[] }> {
  const sides = [
    new LedgerCommands(db.dataSource, { retryBaseMs: 1 }),
    new LedgerCommands(db.dataSource, { retryBaseMs: 1, groupsInFlightMax: 4 }),
  ];
  const allowed = new Map(namespaces.map((ns) => [ns, 0]));
  const denials: string[] = [];
  try {
    await Promise.all(
      Array.from({ length: total }, async (_, i) => {
        const namespace = namespaces[i % namespaces.length] as string;
        const side = sides[i % sides.length] as LedgerCommands;
        const { result } = await side.admit(admitPod(namespace, `p-${i}`));
        if (result.allowed) allowed.set(namespace, (allowed.get(namespace) ?? 0) + 1);
        else denials.push(result.message ?? '');
      }),
    );
  } finally {
    await Promise.all(sides.map((s) => s.close()));
  }
  return { allowed, denials };
}

describe('a ClusterResourceQuota over two namespaces', () => {
  it('admits exactly its hard limit in all, neither namespace over its own quota, every head equal to the folds', async () => {
    const commands = new LedgerCommands(db.dataSource);
    for (const ns of ['blue-a', 'blue-b']) {
      await writer.putNamespace({ name: ns, metadata: { labels: { team: 'blue' } } }, actor);
      await commands.putQuota(ns, { name: 'pods', spec: { hard: { pods: '40' } } }, actor);
    }
    await commands.close();
    const put = await writer.putSharedQuota(crq('blue', { team: 'blue' }, 50), actor);
    expect(put.created).toBe(true);
    expect(put.view.namespaces.map((n) => n.namespace)).toEqual(['blue-a', 'blue-b']);

    const { allowed, denials } = await race(['blue-a', 'blue-b'], 300);
    expect((allowed.get('blue-a') ?? 0) + (allowed.get('blue-b') ?? 0)).toBe(50);
    expect(allowed.get('blue-a')).toBeLessThanOrEqual(40);
    expect(allowed.get('blue-b')).toBeLessThanOrEqual(40);
    expect(denials.some((m) => m.includes('exceeded cluster quota: blue, requested: pods=1, used: pods=50, limited: pods=50'))).toBe(true);
    const view = await queries.getSharedQuota('clusterresourcequotas/blue');
    expect(view?.used).toEqual({ pods: '50' });
    expect(await disagreements(pool)).toEqual([]);
  }, 120_000);
});

describe('a HierarchicalResourceQuota over a parent and its children', () => {
  it('admits exactly its hard limit over the subtree, every head equal to the folds', async () => {
    const commands = new LedgerCommands(db.dataSource);
    for (const ns of ['tree-a', 'tree-b']) {
      await writer.putNamespace(
        { name: ns, metadata: { labels: { 'tree.tree.hnc.x-k8s.io/depth': '1', 'tree-a.tree.hnc.x-k8s.io/depth': '0' } } },
        actor,
      );
      await commands.putQuota(ns, { name: 'pods', spec: { hard: { pods: '40' } } }, actor);
    }
    await commands.close();
    const put = await writer.putSharedQuota(hrq('tree', 'subtree', 50), actor);
    // The owner has no Namespace object and no stream yet: it is covered by name all the same.
    expect(put.view.namespaces.map((n) => n.namespace)).toEqual(['tree', 'tree-a', 'tree-b']);

    const { allowed, denials } = await race(['tree-a', 'tree-b', 'tree'], 300);
    expect([...allowed.values()].reduce((a, b) => a + b, 0)).toBe(50);
    expect(allowed.get('tree-a')).toBeLessThanOrEqual(40);
    expect(allowed.get('tree-b')).toBeLessThanOrEqual(40);
    expect(denials.some((m) => m.includes('exceeded hierarchical quota in namespace "tree": "subtree", requested: pods=1'))).toBe(true);
    expect(await disagreements(pool)).toEqual([]);
  }, 120_000);
});

describe('a namespace whose labels change', () => {
  it('moves its usage into and out of the shared quota as events', async () => {
    const commands = new LedgerCommands(db.dataSource);
    await commands.putQuota('mover', { name: 'pods', spec: { hard: { pods: '10' } } }, actor);
    for (let i = 0; i < 3; i++) expect((await commands.admit(admitPod('mover', `m-${i}`))).result.allowed).toBe(true);
    await writer.putSharedQuota(crq('green', { team: 'green' }, 2), actor);
    expect((await queries.getSharedQuota('clusterresourcequotas/green'))?.used).toEqual({ pods: '0' });

    const joined = await writer.putNamespace({ name: 'mover', metadata: { labels: { team: 'green' } } }, actor);
    expect(joined.view.sharedQuotas).toEqual([{ kind: 'ClusterResourceQuota', name: 'green' }]);
    // Three pods joined a quota of two: over hard, as after a lowered limit, and nothing more is admitted.
    expect((await queries.getSharedQuota('clusterresourcequotas/green'))?.used).toEqual({ pods: '3' });
    expect((await commands.admit(admitPod('mover', 'm-4'))).result.allowed).toBe(false);

    await writer.putNamespace({ name: 'mover', metadata: { labels: { team: 'other' } } }, actor);
    expect((await queries.getSharedQuota('clusterresourcequotas/green'))?.namespaces).toEqual([]);
    expect((await commands.admit(admitPod('mover', 'm-5'))).result.allowed).toBe(true);
    await commands.close();
    const { rows } = await pool.query<{ type: string }>(
      `SELECT type FROM ledger_events WHERE namespace = 'mover' AND type LIKE 'SharedQuota%' ORDER BY version`,
    );
    expect(rows.map((r) => r.type)).toEqual(['SharedQuotaApplied', 'SharedQuotaWithdrawn']);
    expect(await disagreements(pool)).toEqual([]);
  });

  it('withdraws a removed shared quota from every namespace it covered', async () => {
    await writer.deleteSharedQuota({ kind: 'ClusterResourceQuota', name: 'blue' }, actor);
    expect(await queries.getSharedQuota('clusterresourcequotas/blue')).toBeUndefined();
    const { rows } = await pool.query<{ count: string }>(
      `SELECT count(*) FROM namespace_heads WHERE state->'shared' @> '[{"key":"clusterresourcequotas/blue"}]'`,
    );
    expect(Number(rows[0]?.count)).toBe(0);
    expect(await disagreements(pool)).toEqual([]);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('random histories of labels, shared quota changes, admissions and releases', () => {
  it('leave every shared quota holding exactly what the folds of the namespaces it covers contribute, and usage?at= answers what the head held then', async () => {
    const op = fc.oneof(
      fc.record({ t: fc.constant('label' as const), ns: fc.integer({ min: 0, max: 3 }), team: fc.constantFrom('x', 'y', 'none') }),
      fc.record({ t: fc.constant('quota' as const), team: fc.constantFrom('x', 'y'), pods: fc.integer({ min: 0, max: 6 }) }),
      fc.record({ t: fc.constant('unquota' as const), team: fc.constantFrom('x', 'y') }),
      fc.record({ t: fc.constant('admit' as const), ns: fc.integer({ min: 0, max: 3 }), n: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ t: fc.constant('release' as const), ns: fc.integer({ min: 0, max: 3 }) }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 12 }), async (ops) => {
        run++;
        const commands = new LedgerCommands(db.dataSource, { retryBaseMs: 1 });
        const ns = (i: number): string => `prop-${run}-${i}`;
        const live = new Map<string, string[]>();
        const keys = ['x', 'y'].map((team) => `clusterresourcequotas/prop-${run}-${team}`);
        // What each shared quota's head held after each step, and when (no event shares the instant).
        const seen: { at: string; key: string; point: Pick<SharedQuotaUsagePoint, 'defined' | 'hard' | 'used'>; namespaces: unknown }[] =
          [];
        try {
          for (const o of ops) {
            switch (o.t) {
              case 'label':
                await writer.putNamespace(
                  { name: ns(o.ns), metadata: { labels: o.team === 'none' ? {} : { run: String(run), team: o.team } } },
                  actor,
                );
                break;
              case 'quota':
                await writer.putSharedQuota(crq(`prop-${run}-${o.team}`, { run: String(run), team: o.team }, o.pods), actor);
                break;
              case 'unquota':
                await writer
                  .deleteSharedQuota({ kind: 'ClusterResourceQuota', name: `prop-${run}-${o.team}` }, actor)
                  .catch(() => undefined);
                break;
              case 'admit':
                await Promise.all(
                  Array.from({ length: o.n }, async (_, i) => {
                    const { result } = await commands.admit(admitPod(ns(o.ns), `q-${i}`));
                    if (result.reservationId) live.set(ns(o.ns), [...(live.get(ns(o.ns)) ?? []), result.reservationId]);
                  }),
                );
                break;
              case 'release': {
                const id = live.get(ns(o.ns))?.pop();
                if (id) await commands.release(ns(o.ns), id, { actor: 'admin' });
                break;
              }
            }
            expect(await disagreements(pool)).toEqual([]);
            await sleep(2);
            const at = new Date(await clock.now()).toISOString();
            for (const key of keys) {
              const view = await queries.getSharedQuota(key);
              seen.push({
                at,
                key,
                point: view ? { defined: true, hard: view.hard, used: view.used } : { defined: false, hard: {}, used: {} },
                namespaces: view?.namespaces ?? [],
              });
            }
            await sleep(2);
          }
          // Every instant seen, as usage?at= and a series answer it: first by folding the member
          // namespaces (the projection has not run), then from the read model of usage at every
          // version once it has caught up.
          const asOfAgrees = async (): Promise<void> => {
            for (const then of seen) {
              const found = await usage.usageAt(then.key, then.at);
              if (!found) {
                expect(then.point.defined).toBe(false);
                continue;
              }
              expect({ defined: found.defined, hard: found.hard, used: found.used }, `${then.key} at ${then.at}`).toEqual(then.point);
              expect(
                found.namespaces.map(({ namespace, used }) => ({ namespace, used })),
                `${then.key}'s namespaces at ${then.at}`,
              ).toEqual(then.namespaces);
            }
            // A series samples the same usage: each of its points is what usage?at= answers for its instant.
            const [first, last] = [seen[0], seen.at(-1)];
            if (first && last && first.at < last.at) {
              for (const key of keys) {
                const series = await usage.usageSeries(key, { since: first.at, until: last.at, points: 7 });
                for (const point of series?.points ?? []) {
                  const at = await usage.usageAt(key, point.at);
                  expect(point, `${key}'s series at ${point.at}`).toEqual({
                    at: point.at,
                    version: at?.version,
                    defined: at?.defined,
                    hard: at?.hard,
                    used: at?.used,
                  });
                }
              }
            }
          };
          await asOfAgrees();
          // In steps of a few events, each by a new worker, so a namespace's state is taken up
          // again from the read models (not from a worker's memory).
          while ((await new UsageProjection(db.dataSource, { batchSize: 3 }).step(3, 'force')) > 0);
          await asOfAgrees();
          // Nothing admitted ever took a shared quota over its hard limit: only labels and lowered limits may.
        } finally {
          await commands.close();
        }
      }),
      { numRuns: 12 },
    );
  }, 240_000);
});
