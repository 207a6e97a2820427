import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineQuota, eventually, pod, untilCounted, untilUsed } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// The cluster's own LimitRange (v1), applied with kubectl: the reconciler copies it into the ledger,
// our mutating webhook defaults pods with it, and deleting the object removes it from the ledger.
// The kube-apiserver's built-in LimitRanger plugin is off in the first plane, so that every default
// seen is ours; on in the second, as on managed control planes, where it defaults and checks first
// and the pod the ledger charges is the same.

const NAMESPACE = 'lr-team';
let stack: LedgerStack;

/** A plane (the built-in LimitRanger on or off) with our stack, and NAMESPACE, for the describe block it is called in. */
function planeWithLimitRanger(builtIn: boolean): void {
  beforeAll(async () => {
    stack = await startLedgerCluster({
      controllers: ['namespace'],
      admission: { disable: builtIn ? ['ServiceAccount'] : ['ServiceAccount', 'LimitRanger'] },
    });
    await stack.plane.createNamespace(NAMESPACE);
  });
  afterAll(async () => {
    await stack?.stop();
    await stack?.plane.stop();
  });
}

const limitRange = JSON.stringify({
  apiVersion: 'v1',
  kind: 'LimitRange',
  // A claimed author is replaced by the one the kube-apiserver names.
  metadata: { name: 'defaults', namespace: NAMESPACE, annotations: { 'quota-ledger.io/last-applied-by': 'mallory' } },
  spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '250m' } }] },
});

/** The ledger's LimitRange as its REST API shows it (undefined while it has none). */
async function ledgerLimitRange(name: string) {
  const answer = await stack.request('GET', `/v1/namespaces/${NAMESPACE}/limitranges/${name}`);
  return answer.status === 200 ? answer.body : undefined;
}

const requestsOf = async (name: string): Promise<string> =>
  stack.plane.kubectl(['get', 'pod', name, '-n', NAMESPACE, '-o', 'jsonpath={.spec.containers[0].resources.requests.cpu}']);

describe('LimitRange objects, applied with kubectl', () => {
  planeWithLimitRanger(false);

  it('reach the ledger, default pods through our webhook, and are removed with the object', async () => {
    // A quota on requests.cpu: a pod that names none is refused unless a LimitRange defaults it.
    await defineQuota(stack, NAMESPACE, 'compute', { 'requests.cpu': '1' });
    await untilCounted(stack, NAMESPACE);
    expect((await stack.plane.kubectl(['apply', '-f', '-'], limitRange)).trim()).toBe('limitrange/defaults created');

    // In the ledger, through the REST PUT's command, recorded as made by the user our webhook stamped.
    const stored = await eventually('the LimitRange in the ledger', () => ledgerLimitRange('defaults'));
    expect(stored.spec).toEqual({ limits: [{ type: 'Container', defaultRequest: { cpu: '250m' } }] });
    expect(stored.metadata.annotations['quota-ledger.io/managed-by']).toBe('limitranges');
    const history = await stack.request('GET', `/v1/namespaces/${NAMESPACE}/limitranges/defaults/history`);
    expect(history.body.items.map((c: { type: string; actor: string; onBehalfOf?: string }) => [c.type, c.actor, c.onBehalfOf])).toEqual([
      ['LimitRangeDefined', 'system:reconciler', 'admin'],
    ]);
    const stamped = await stack.plane.kubectl([
      'get',
      'limitrange',
      'defaults',
      '-n',
      NAMESPACE,
      '-o',
      'jsonpath={.metadata.annotations.quota-ledger\\.io/last-applied-by}',
    ]);
    expect(stamped).toBe('admin');

    // The cluster object is its source of truth: the REST admin API refuses to change or delete it.
    const put = await stack.request('PUT', `/v1/namespaces/${NAMESPACE}/limitranges/defaults`, {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'defaults' },
      spec: { limits: [] },
    });
    const removal = await stack.request('DELETE', `/v1/namespaces/${NAMESPACE}/limitranges/defaults`);
    for (const refused of [put, removal]) {
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        kind: 'Status',
        reason: 'Conflict',
        code: 409,
        details: { name: 'defaults', kind: 'limitranges' },
      });
      expect(refused.body.message).toContain(`it is managed by the cluster object limitranges "defaults" in namespace "${NAMESPACE}"`);
    }

    // A pod without requests: our webhook gives it the LimitRange's, and the ledger charges them.
    const before = await stack.webhookCalls();
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('defaulted', NAMESPACE))).code).toBe(0);
    expect(await requestsOf('defaulted')).toBe('250m');
    const annotation = await stack.plane.kubectl([
      'get',
      'pod',
      'defaulted',
      '-n',
      NAMESPACE,
      '-o',
      'jsonpath={.metadata.annotations.kubernetes\\.io/limit-ranger}',
    ]);
    expect(annotation).toBe('LimitRanger plugin set: cpu request for container app');
    expect((await stack.webhookCalls()).mutate).toBeGreaterThan(before.mutate);
    await untilUsed(stack, NAMESPACE, 'compute', { 'requests.cpu': '250m' });

    // Deleted in the cluster, deleted in the ledger: a pod without requests is no longer defaulted, so the quota refuses it.
    await stack.plane.kubectl(['delete', 'limitrange', 'defaults', '-n', NAMESPACE]);
    await eventually('the ledger LimitRange removed', async () => ((await ledgerLimitRange('defaults')) === undefined ? true : undefined));
    const removed = await stack.request('GET', `/v1/namespaces/${NAMESPACE}/limitranges/defaults/history`);
    expect(removed.body.items.map((c: { type: string; actor: string }) => [c.type, c.actor])).toEqual([
      ['LimitRangeDefined', 'system:reconciler'],
      ['LimitRangeRemoved', 'system:reconciler'],
    ]);
    const bare = await stack.plane.tryKubectl(['create', '-f', '-'], pod('bare', NAMESPACE));
    expect(bare.code).not.toBe(0);
    expect(bare.stderr).toContain('must specify requests.cpu');
  });
});

describe('LimitRange objects with the built-in LimitRanger also on', () => {
  planeWithLimitRanger(true);

  it('default a pod once, with the same value the ledger charges, and the built-in plugin refuses what breaks a limit first', async () => {
    await defineQuota(stack, NAMESPACE, 'compute', { 'requests.cpu': '1' });
    await untilCounted(stack, NAMESPACE);
    const withMax = JSON.stringify({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'defaults', namespace: NAMESPACE },
      spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '250m' }, max: { cpu: '500m' } }] },
    });
    await stack.plane.kubectl(['apply', '-f', '-'], withMax);
    await eventually('the LimitRange in the ledger', () => ledgerLimitRange('defaults'));

    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('defaulted', NAMESPACE))).code).toBe(0);
    const container = JSON.parse(
      await stack.plane.kubectl(['get', 'pod', 'defaulted', '-n', NAMESPACE, '-o', 'jsonpath={.spec.containers[0].resources}']),
    );
    // The API server's defaulting gave the item default = max; LimitRanger set both, ours found nothing left to add.
    expect(container).toEqual({ requests: { cpu: '250m' }, limits: { cpu: '500m' } });
    await untilUsed(stack, NAMESPACE, 'compute', { 'requests.cpu': '250m' });

    // Over the max: the built-in plugin, which runs before every webhook, refuses it.
    const over = await stack.plane.tryKubectl(['create', '-f', '-'], pod('over', NAMESPACE, { cpu: '1' }));
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain('pods "over" is forbidden: maximum cpu usage per Container is 500m, but limit is 1');
    expect(over.stderr).not.toContain('admission webhook');
  });
});
