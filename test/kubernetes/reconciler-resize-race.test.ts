import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubernetesInventory, type Inventory, type InventorySource } from '@quota/inventory';
import { openDataSource } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { Ledger } from '../support/ledger.js';
import { defineQuota, eventsOfObject, eventually, ledgerEvents, pod, uidOf, untilCounted, untilUsed } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// The report, on a real kube-apiserver with our webhooks: pod ox (500m) resized down to 300m with
// `pods/resize`, then back up to 500m, while the reconciler's listing was taken between the two
// and its commit landed after the second. The race needs the commit at that moment, so the
// reconciler here is the app's Reconciler class run in this process (its real inventory, listing
// this plane with the reconciler's ServiceAccount, and the stack's ledger) with a gate between its
// listing and its commit; the stack's own reconciler is stopped meanwhile, and started again to
// settle what is left. Before the fix the quota's used ended at 300m, below the pod's spec, for
// as long as the pod lived.

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const NS = 'rr-resize';
const STATUS_NS = 'rr-status';
const GRACE_SECONDS = 60;

let stack: LedgerStack;
let dataSource: DataSource;
let ledger: Ledger;
let reconciler: Reconciler;
let kubernetes: InventorySource;
/** Set by a test to hold the next listing between the list and the commit. */
let gate: { listed: (inventory: Inventory) => void; open: Promise<void> } | undefined;

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] }, { graceSeconds: GRACE_SECONDS });
  kubernetes = createKubernetesInventory({ kubeconfigPath: stack.reconcilerKubeconfig });
  const gated: InventorySource = {
    kind: kubernetes.kind,
    covers: kubernetes.covers,
    list: async (namespace, signal) => {
      const inventory = await kubernetes.list(namespace, signal);
      const held = gate;
      gate = undefined;
      if (held) {
        held.listed(inventory);
        await held.open;
      }
      return inventory;
    },
    close: () => kubernetes.close(),
  };
  dataSource = await openDataSource({ url: stack.database.url, poolSize: 2 });
  ledger = new Ledger(dataSource);
  reconciler = new Reconciler(
    ledger,
    gated,
    { kind: 'redis', url: REDIS_URL, prefix: `qltest-${randomBytes(4).toString('hex')}` },
    { intervalMs: 60_000, graceMs: GRACE_SECONDS * 1000, concurrency: 1, watch: false },
  );
});

afterAll(async () => {
  await reconciler?.stop();
  await ledger?.close();
  await dataSource?.destroy();
  await stack?.stop();
  await stack?.plane.stop();
});

/** `kubectl patch --subresource=resize` of the pod's one container, requests and limits alike (it is Guaranteed). */
const resize = (name: string, cpu: string) =>
  stack.plane.kubectl([
    'patch',
    'pod',
    name,
    '-n',
    NS,
    '--subresource=resize',
    '-p',
    JSON.stringify({ spec: { containers: [{ name: 'app', resources: { requests: { cpu }, limits: { cpu } } }] } }),
  ]);

/** What the pod's spec asks, as kube-apiserver stores it. */
async function specCpu(name: string): Promise<string> {
  const stored = JSON.parse(await stack.plane.kubectl(['get', 'pod', name, '-n', NS, '-o', 'json']));
  return stored.spec.containers[0].resources.requests.cpu as string;
}

describe('a resize up admitted while the resize down before it is unconfirmed', () => {
  it('is charged: the quota ends at what the pod asks, whatever the reconciler committed between them', async () => {
    await stack.plane.createNamespace(NS);
    await defineQuota(stack, NS, 'compute', { pods: '5', 'requests.cpu': '2' });
    await untilCounted(stack, NS);
    await stack.plane.kubectl(['create', '-f', '-'], pod('ox', NS, { cpu: '500m' }));
    const uid = (await uidOf(stack, 'pod', 'ox', NS)) ?? '';
    const ofOx = async () => eventsOfObject(await ledgerEvents(stack, NS), uid);
    await eventually('the CREATE committed', async () => ((await ofOx()).some((e) => e.type === 'Committed') ? true : undefined));
    // From here only this test's reconciler settles the namespace.
    await stack.stopApp('reconciler');
    try {
      await raceTheCommit(uid);
    } finally {
      await stack.startApp('reconciler');
    }
    const resizes = (await ofOx()).filter((e) => e.type === 'Reserved' && e.data.operation === 'UPDATE');
    expect(resizes.map((e) => e.data.objectUsage?.['requests.cpu'])).toEqual(['300m', '500m']);
    const events = await ofOx();
    expect(events.find((e) => e.type === 'Committed' && e.data.reservationId === resizes[1]?.data.reservationId)).toBeDefined();
    expect(await untilUsed(stack, NS, 'compute', { pods: '1', 'requests.cpu': '500m' })).toBeDefined();
  });

  /** Resize down, list, resize up, commit from that listing; then a fresh listing. */
  async function raceTheCommit(uid: string): Promise<void> {
    await resize('ox', '300m');
    let listed!: (inventory: Inventory) => void;
    let open!: () => void;
    const seen = new Promise<Inventory>((resolve) => (listed = resolve));
    gate = { listed, open: new Promise<void>((resolve) => (open = resolve)) };
    const pass = reconciler.reconcileNamespace(NS);
    const listing = await seen;
    const listedPod = listing.objects.find((o) => o.uid === uid)?.object as
      { spec: { containers: { resources: { requests: { cpu: string } } }[] } } | undefined;
    expect(listedPod?.spec.containers[0]?.resources.requests.cpu).toBe('300m');

    // Resized back up while the listing that shows 300m is on its way to the ledger.
    await resize('ox', '500m');
    open();
    await pass;
    expect(await specCpu('ox')).toBe('500m');
    expect((await ledger.usage(NS))?.quotas[0]?.used['requests.cpu']).toBe('500m');

    // A fresh listing confirms the resize up.
    const fresh = await reconciler.reconcileNamespace(NS);
    expect(fresh.actions.filter((a) => a.kind === 'commit')).toHaveLength(1);
  }

  it('reconciles a namespace holding a pod whose status carries a condition reason longer than the ledger takes from a request (the API server bounds none)', async () => {
    await stack.plane.createNamespace(STATUS_NS);
    await defineQuota(stack, STATUS_NS, 'compute', { pods: '5', 'requests.cpu': '2' });
    await untilCounted(stack, STATUS_NS);
    await stack.plane.kubectl(['create', '-f', '-'], pod('chatty', STATUS_NS, { cpu: '100m' }));
    const reason = 'Unschedulable'.padEnd(300, '-');
    const status = { status: { conditions: [{ type: 'PodScheduled', status: 'False', reason, message: 'no nodes' }] } };
    await stack.plane.kubectl([
      'patch',
      'pod',
      'chatty',
      '-n',
      STATUS_NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(status),
    ]);
    expect(JSON.parse(await stack.plane.kubectl(['get', 'pod', 'chatty', '-n', STATUS_NS, '-o', 'json'])).status.conditions[0].reason).toBe(
      reason,
    );
    // Another pod after it: the stack's reconciler settles the namespace on its addition.
    await stack.plane.kubectl(['create', '-f', '-'], pod('after', STATUS_NS, { cpu: '100m' }));
    for (const name of ['chatty', 'after']) {
      const uid = (await uidOf(stack, 'pod', name, STATUS_NS)) ?? '';
      await eventually(`${name} committed`, async () =>
        eventsOfObject(await ledgerEvents(stack, STATUS_NS), uid).some((e) => e.type === 'Committed') ? true : undefined,
      ).catch((error: Error) => {
        // Say why: what the reconciler logged of its failing jobs.
        const failures = stack
          .logs('reconciler')
          .split('\n')
          .filter((line) => line.includes('failed'))
          .slice(-2);
        throw new Error(`${error.message}\n${failures.join('\n')}`);
      });
    }
    await untilUsed(stack, STATUS_NS, 'compute', { pods: '2', 'requests.cpu': '200m' });
    expect(stack.logs('reconciler')).not.toContain('cannot be read');
  });
});
