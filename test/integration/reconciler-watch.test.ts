import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Inventory, InventorySource, SettleSignal, WatchState } from '@quota/inventory';
import type { ReconcileOutcome } from '@quota/ledger';
import { reconcilerMetrics } from '../../apps/reconciler/src/metrics.js';
import { Reconciler, type ReconcilerLedger } from '../../apps/reconciler/src/reconciler.js';

/**
 * The reconciler's use of an inventory's watch, with stubs: a ledger that records which
 * namespaces were reconciled, an inventory whose watchSettlements hands the test its callbacks.
 * BullMQ runs on the test Redis (its fan-out never reaches these stubs' namespaces: none).
 */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

function stubs() {
  const reconciled: string[] = [];
  const listed: string[] = [];
  const ledger: ReconcilerLedger = {
    now: async () => Date.now(),
    namespaces: async () => [],
    namespaceManaged: async (namespace) => namespace !== 'unmanaged',
    reconcile: async (namespace): Promise<ReconcileOutcome> => {
      reconciled.push(namespace);
      return { namespace, version: 1, actions: [], overHard: [], pending: 0, unconfirmed: 0, uncovered: [], unreadable: [] };
    },
  };
  const watch: { signal?: (change: SettleSignal) => void; state?: (state: WatchState) => void; aborted?: AbortSignal } = {};
  const inventory: InventorySource = {
    kind: 'stub',
    covers: [{ group: '', resource: 'pods' }],
    list: async (namespace): Promise<Inventory> => (
      listed.push(namespace),
      { namespace, covers: [{ group: '', resource: 'pods' }], objects: [] }
    ),
    watchSettlements: (onSignal, signal, onState) => {
      Object.assign(watch, { signal: onSignal, state: onState, aborted: signal });
      return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    close: async () => undefined,
  };
  return { reconciled, listed, ledger, inventory, watch };
}

const backend = () => ({ kind: 'redis' as const, url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` });
const change = (namespace: string): SettleSignal => ({
  namespace,
  groupResource: { group: '', resource: 'pods' },
  uid: 'u1',
  name: 'p1',
  why: 'terminal',
});

describe('the reconciler settles on watch events', () => {
  it('reconciles the namespace of a watch event at once, counts it, and stops its watch on stop()', async () => {
    const { reconciled, listed, ledger, inventory, watch } = stubs();
    const reconciler = new Reconciler(ledger, inventory, backend(), { intervalMs: 600_000, graceMs: 0, concurrency: 1 });
    await reconciler.start();
    try {
      expect(reconciler.watches).toBe(true);
      watch.signal?.(change('team-a'));
      // A namespace nothing is managed in is not listed (nor reconciled): skipped.
      watch.signal?.(change('unmanaged'));
      await reconciler.settler?.idle();
      expect(reconciled).toEqual(['team-a']);
      expect(listed).toEqual(['team-a']);
      watch.state?.({ resource: 'leases.coordination.k8s.io', state: 'failed', error: 'HTTP 403' });
      const metrics = await reconcilerMetrics(reconciler).metrics();
      expect(metrics).toMatch(/^quota_ledger_reconciler_watch_signals_total 2$/m);
      expect(metrics).toMatch(/^quota_ledger_reconciler_watch_settles_total\{outcome="skipped"\} 1$/m);
      expect(metrics).toMatch(/^quota_ledger_reconciler_watch_settles_total\{outcome="settled"\} 1$/m);
      expect(metrics).toMatch(/^quota_ledger_reconciler_watches_failing 1$/m);
    } finally {
      await reconciler.stop();
    }
    expect(watch.aborted?.aborted).toBe(true);
  });

  it('does not watch with watch: false (RECONCILE_WATCH=false)', async () => {
    const { ledger, inventory, watch } = stubs();
    const reconciler = new Reconciler(ledger, inventory, backend(), { intervalMs: 600_000, graceMs: 0, concurrency: 1, watch: false });
    await reconciler.start();
    await reconciler.stop();
    expect(reconciler.watches).toBe(false);
    expect(watch.signal).toBeUndefined();
  });
});
