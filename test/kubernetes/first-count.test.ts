import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineQuota, eventually, ledgerEvents, pod, untilUsed } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// A quota that starts covering objects that already exist (QUOTA_AWAITS_FIRST_COUNT=true, as the
// kustomize base sets it on the API): pods created while their namespace had no quota were
// admitted unmanaged and never recorded; once the quota is defined it answers `status unknown`
// (Kubernetes' words until its quota controller's first sync) until the reconciler's first
// complete listing has adopted them, and from then on it counts what kube-apiserver stores.

const counts = { before: 0, unknown: 0, adopted: 0, after: 0, denied: 0 };
let stack: LedgerStack;

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] });
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
  console.log(
    `first count e2e: ${counts.before} pods before the quota, ${counts.unknown} refused while its status was unknown, ${counts.adopted} adopted by the first count, ${counts.after} admitted after it, ${counts.denied} denied over it`,
  );
});

const storedPods = async (namespace: string): Promise<number> =>
  JSON.parse(await stack.plane.kubectl(['get', 'pods', '-n', namespace, '-o', 'json'])).items.length;

describe('a quota that starts covering existing objects', () => {
  it('answers status unknown until the first count, then counts what kube-apiserver stores', async () => {
    await stack.plane.createNamespace('fc');
    for (const name of ['old-0', 'old-1', 'old-2']) await stack.plane.kubectl(['create', '-f', '-'], pod(name, 'fc'));
    counts.before = 3;
    // Admitted unmanaged: nothing in the ledger for them.
    expect((await ledgerEvents(stack, 'fc')).filter((e) => e.type === 'Reserved')).toEqual([]);

    // No reconciler for now: the count waits for one.
    await stack.stopApp('reconciler');
    await defineQuota(stack, 'fc', 'compute', { pods: '5' });
    const usage = await stack.request('GET', '/v1/namespaces/fc/usage');
    expect(usage.body.awaitingFirstCountSince).toEqual(expect.any(String));
    const unknown = await stack.plane.tryKubectl(['create', '-f', '-'], pod('new-0', 'fc'));
    expect(unknown.stderr).toBe(
      'Error from server (Forbidden): error when creating "STDIN": admission webhook "validate.quota-ledger.io" denied the request: pods "new-0" is forbidden: status unknown for quota: compute, resources: pods\n',
    );
    counts.unknown++;

    await stack.startApp('reconciler');
    const counted = await eventually('the first count', async () => {
      const events = await ledgerEvents(stack, 'fc');
      return events.some((e) => e.type === 'Counted') ? events : undefined;
    });
    const adopted = counted.filter((e) => e.type === 'Adopted');
    expect(adopted.map((e) => e.data.object.name).sort()).toEqual(['old-0', 'old-1', 'old-2']);
    counts.adopted = adopted.length;
    expect((await stack.request('GET', '/v1/namespaces/fc/usage')).body.awaitingFirstCountSince).toBeUndefined();
    await untilUsed(stack, 'fc', 'compute', { pods: String(await storedPods('fc')) });

    for (const name of ['new-0', 'new-1']) expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod(name, 'fc'))).code).toBe(0);
    counts.after = 2;
    const over = await stack.plane.tryKubectl(['create', '-f', '-'], pod('new-2', 'fc'));
    expect(over.stderr).toContain('pods "new-2" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=5, limited: pods=5');
    counts.denied++;
    expect(await storedPods('fc')).toBe(5);
    await untilUsed(stack, 'fc', 'compute', { pods: '5' });
  });
});
