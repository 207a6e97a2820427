import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { kubeApi, type KubeApi } from '../support/kube-api.js';
import {
  defineQuota,
  eventsOfObject,
  eventually,
  ledgerEvents,
  pod,
  uidOf,
  untilCounted,
  untilUsed,
  usedOf,
} from '../support/ledger-reads.js';
import { prepareLedgerStack, startLedgerStack, type LedgerStack } from '../support/ledger-stack.js';

// The reconciler as built against a real kube-apiserver: the kinds it settles come from
// discovery, so a count/poddisruptionbudgets.policy quota holds past the grace period, and its
// watches settle a finished pod's compute at once. The webhook is sent PodDisruptionBudgets
// (webhook-config --custom-resource) but the reconciler is not told of them (no CUSTOM_RESOURCES):
// only discovery can make it list them.

const GRACE_SECONDS = 2;
const PODS = 20;
const CONFIGMAPS = 10;
const figures = {
  budgetsHeldSeconds: 0,
  settle: { p50: 0, p99: 0, max: 0, samples: 0 },
  deleted: { p50: 0, p99: 0, max: 0, samples: 0 },
};

let plane: ControlPlane;
let stack: LedgerStack;
let kube: KubeApi;

beforeAll(async () => {
  const prepared = await prepareLedgerStack();
  plane = await startControlPlane({ controllers: ['namespace'], admission: { configuration: prepared.admission } });
  stack = await startLedgerStack(plane, prepared, {
    graceSeconds: GRACE_SECONDS,
    intervalSeconds: 1,
    webhookFlags: ['--custom-resource', 'poddisruptionbudgets.policy/v1=PodDisruptionBudget'],
    // The API's own prompt reconcile after a DELETE is put off, so that only the watch can settle a deletion at once.
    appEnv: { api: { RECONCILE_AFTER_DELETE_SECONDS: '600' } },
  });
  kube = kubeApi(plane);
});

afterAll(async () => {
  kube?.close();
  await stack?.stop();
  await plane?.stop();
  const { settle, deleted } = figures;
  console.log(
    `reconciler watch: count/poddisruptionbudgets.policy held ${figures.budgetsHeldSeconds} s past a ${GRACE_SECONDS} s grace; ` +
      `pod Succeeded -> compute back: p50 ${settle.p50} ms, p99 ${settle.p99} ms, max ${settle.max} ms over ${settle.samples} pods; ` +
      `configmap deleted -> count back: p50 ${deleted.p50} ms, p99 ${deleted.p99} ms over ${deleted.samples}`,
  );
});

async function namespaceWithQuota(namespace: string, hard: Record<string, string>): Promise<void> {
  await plane.createNamespace(namespace);
  await defineQuota(stack, namespace, 'compute', hard);
  await untilCounted(stack, namespace);
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
const summary = (latencies: readonly number[]) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0, samples: sorted.length };
};

/** Milliseconds from `change` (awaited) to `done` answering true, polled every 10 ms. */
async function timeUntil(change: () => Promise<unknown>, done: () => Promise<boolean>, timeoutMs = 30_000): Promise<number> {
  const start = performance.now();
  await change();
  while (!(await done())) {
    if (performance.now() - start > timeoutMs) throw new Error(`not settled within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Math.round(performance.now() - start);
}

describe('the reconciler against kube-apiserver: discovered kinds and watches', () => {
  it('keeps a count/poddisruptionbudgets.policy quota holding past the grace period: the PodDisruptionBudgets are listed (discovered) and committed, not released as uncovered', async () => {
    await namespaceWithQuota('rw-sa', { 'count/poddisruptionbudgets.policy': '2' });
    await plane.kubectl(['create', 'poddisruptionbudget', 'builder', '-n', 'rw-sa', '--selector=app=builder', '--min-available=1']);
    await plane.kubectl(['create', 'poddisruptionbudget', 'deployer', '-n', 'rw-sa', '--selector=app=deployer', '--min-available=1']);
    await untilUsed(stack, 'rw-sa', 'compute', { 'count/poddisruptionbudgets.policy': '2' });
    const uids = [
      await uidOf(stack, 'poddisruptionbudget', 'builder', 'rw-sa'),
      await uidOf(stack, 'poddisruptionbudget', 'deployer', 'rw-sa'),
    ];
    for (const uid of uids) {
      await eventually(`PodDisruptionBudget ${uid} committed`, async () =>
        eventsOfObject(await ledgerEvents(stack, 'rw-sa'), uid ?? '').some((e) => e.type === 'Committed') ? true : undefined,
      );
    }
    // Several grace periods and reconcile intervals later, it still holds.
    const heldFrom = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 4 * GRACE_SECONDS * 1000));
    figures.budgetsHeldSeconds = Math.round((Date.now() - heldFrom) / 1000);
    expect((await usedOf(stack, 'rw-sa'))['compute']).toMatchObject({ 'count/poddisruptionbudgets.policy': '2' });
    const denied = await plane.tryKubectl([
      'create',
      'poddisruptionbudget',
      'third',
      '-n',
      'rw-sa',
      '--selector=app=third',
      '--min-available=1',
    ]);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('exceeded quota');
    const events = await ledgerEvents(stack, 'rw-sa');
    expect(events.filter((e) => e.type === 'Released' && e.data.reason === 'uncovered')).toEqual([]);
    // A deletion gives it back.
    await plane.kubectl(['delete', 'poddisruptionbudget', 'builder', '-n', 'rw-sa']);
    await untilUsed(stack, 'rw-sa', 'compute', { 'count/poddisruptionbudgets.policy': '1' });
  });

  it(`gives a pod's compute back within a second of its phase turning Succeeded (${PODS} pods), and a deleted object's count (${CONFIGMAPS} configmaps; the periodic pass every 600 s)`, async () => {
    await namespaceWithQuota('rw-pods', { pods: '100', 'requests.cpu': '100', 'count/configmaps': '100' });
    // ConfigMaps committed by the periodic pass (every second so far), to be deleted at the end.
    for (let i = 0; i < CONFIGMAPS; i++)
      expect((await kube.create('/api/v1/namespaces/rw-pods/configmaps', { metadata: { name: `c${i}` } })).status).toBe(201);
    await eventually('every configmap committed', async () =>
      (await ledgerEvents(stack, 'rw-pods')).filter((e) => e.type === 'Committed').length === CONFIGMAPS ? true : undefined,
    );
    // Only the watch can settle within the measurement: the periodic pass runs every 10 minutes.
    await stack.stopApp('reconciler');
    await stack.startApp('reconciler', { RECONCILE_INTERVAL_SECONDS: '600' });
    for (let i = 0; i < PODS; i++) {
      const created = await kube.create('/api/v1/namespaces/rw-pods/pods', JSON.parse(pod(`p${i}`, 'rw-pods', { cpu: '1' })));
      expect(created.status).toBe(201);
    }
    await untilUsed(stack, 'rw-pods', 'compute', { pods: String(PODS), 'requests.cpu': String(PODS) });
    // Let the watches start (a reconciler just restarted lists and watches each kind).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const cpu = async (): Promise<number> => Number((await usedOf(stack, 'rw-pods'))['compute']?.['requests.cpu'] ?? NaN);
    const latencies: number[] = [];
    for (let i = 0; i < PODS; i++) {
      const before = await cpu();
      latencies.push(
        await timeUntil(
          async () =>
            expect(
              (await kube.patch(`/api/v1/namespaces/rw-pods/pods/p${i}/status`, { status: { phase: 'Succeeded' } }, 'merge')).status,
            ).toBe(200),
          async () => (await cpu()) === before - 1,
        ),
      );
    }
    figures.settle = summary(latencies);
    expect((await ledgerEvents(stack, 'rw-pods')).filter((e) => e.type === 'Terminated' && e.data.reason === 'Succeeded')).toHaveLength(
      PODS,
    );
    expect(figures.settle.p99, `latencies (ms): ${JSON.stringify(latencies)}`).toBeLessThan(1000);
    // What the reconciler says of it: every finished pod a watch signal, each settle counted, no watch failing
    // (rbac.yaml grants watch on each kind it watches; discovered kinds it does not grant fail and are counted).
    const metrics = await (await fetch(stack.metricsUrl('reconciler'))).text();
    const value = (series: string): number =>
      Number(
        metrics
          .split('\n')
          .find((line) => line.startsWith(`${series} `))
          ?.slice(series.length + 1) ?? NaN,
      );
    expect(value('quota_ledger_reconciler_watch_signals_total')).toBeGreaterThanOrEqual(PODS);
    expect(value('quota_ledger_reconciler_watch_settles_total{outcome="settled"}')).toBeGreaterThanOrEqual(1);
    expect(value('quota_ledger_reconciler_watch_settles_total{outcome="failed"}')).toBe(0);

    // A deleted object's count comes back the same way (a metadata-only watch): the API's own
    // reconcile after the DELETE is 10 minutes away.
    const configmaps = async (): Promise<number> => Number((await usedOf(stack, 'rw-pods'))['compute']?.['count/configmaps'] ?? NaN);
    const deletes: number[] = [];
    for (let i = 0; i < CONFIGMAPS; i++) {
      const before = await configmaps();
      deletes.push(
        await timeUntil(
          async () => expect((await kube.delete(`/api/v1/namespaces/rw-pods/configmaps/c${i}`)).status).toBe(200),
          async () => (await configmaps()) === before - 1,
        ),
      );
    }
    figures.deleted = summary(deletes);
    expect(figures.deleted.p99, `latencies (ms): ${JSON.stringify(deletes)}`).toBeLessThan(1000);
  });
});
