import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Inventory, InventorySource } from '@quota/inventory';
import type { ReconcileOutcome } from '@quota/ledger';
import { reconcilerMetrics } from '../../apps/reconciler/src/metrics.js';
import { Reconciler, type ReconcilerLedger } from '../../apps/reconciler/src/reconciler.js';
import { UNCOVERED_NAMESPACES_MAX } from '../../apps/reconciler/src/uncovered.js';

/**
 * The reconciler's map of uncovered reservations (per namespace, the live
 * reservations of kinds the inventory does not list) grew without bound: a namespace that
 * disappeared, or that another replica reconciled from then on, stayed in it, and in the gauge,
 * for the life of the process. Here the ledger is a stub on the machine's clock (the reconciler
 * times listings on it) and the queue is never started.
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const INTERVAL_MS = 1000;
const WIDGETS = 'widgets.example.com';

let now = Date.now();
/** Namespaces whose reconcile finds no uncovered reservation. */
const settled = new Set<string>(['settled']);
const ledger: ReconcilerLedger = {
  now: async () => now,
  namespaces: async () => [],
  reconcile: async (namespace): Promise<ReconcileOutcome> => ({
    namespace,
    version: 1,
    actions: [],
    overHard: [],
    pending: 0,
    unconfirmed: 0,
    uncovered: settled.has(namespace) ? [] : [{ resource: WIDGETS, count: 1 }],
    unreadable: [],
  }),
};
const inventory: InventorySource = {
  kind: 'stub',
  covers: [{ group: '', resource: 'pods' }],
  list: async (namespace): Promise<Inventory> => ({ namespace, covers: [], objects: [] }),
  close: async () => undefined,
};
const reconciler = new Reconciler(
  ledger,
  inventory,
  { kind: 'redis', url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` },
  { intervalMs: INTERVAL_MS, graceMs: 0, concurrency: 1 },
);
afterAll(async () => {
  await reconciler.stop();
});

const gauge = async (): Promise<string | undefined> =>
  (await reconcilerMetrics(reconciler).metrics())
    .split('\n')
    .find((line) => line.startsWith(`quota_ledger_reconciler_uncovered_reservations{resource="${WIDGETS}"}`));

describe('the uncovered reservations the reconciler remembers', () => {
  it('forget a namespace no reconcile has reported on for two intervals, and one whose reconcile found none', async () => {
    now = Date.now();
    await reconciler.reconcileNamespace('gone');
    await reconciler.reconcileNamespace('later');
    expect(reconciler.uncovered.size).toBe(2);
    expect(await gauge()).toMatch(/ 2$/);
    await reconciler.reconcileNamespace('settled');
    expect(reconciler.uncovered.size).toBe(2);

    // Two intervals later 'gone' was not reconciled again (deleted, or another replica has it).
    now += 2 * INTERVAL_MS + 1;
    settled.add('later');
    await reconciler.reconcileNamespace('later');
    expect(reconciler.uncovered.size).toBe(0);
  });

  it(`keep at most ${UNCOVERED_NAMESPACES_MAX} namespaces, the oldest report going first`, async () => {
    now = Date.now();
    for (let i = 0; i <= UNCOVERED_NAMESPACES_MAX; i++) await reconciler.reconcileNamespace(`ns-${i}`);
    expect(reconciler.uncovered.size).toBe(UNCOVERED_NAMESPACES_MAX);
    expect(reconciler.uncovered.has('ns-0')).toBe(false);
    expect(reconciler.uncovered.has(`ns-${UNCOVERED_NAMESPACES_MAX}`)).toBe(true);
    expect(await gauge()).toMatch(new RegExp(` ${UNCOVERED_NAMESPACES_MAX}$`));
  });
});
