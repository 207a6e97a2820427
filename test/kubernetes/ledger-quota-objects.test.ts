import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/deploy.js';
import { eventually, pod, untilCounted, untilUsed } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// A quota applied with kubectl as a LedgerQuota object (deploy/kubernetes/base/ledgerquota-crd.yaml,
// installed from that file): the reconciler puts it into the ledger, our webhook enforces it, its
// status shows the ledger's used, and deleting the object removes the ledger's quota.

const CRD = join(ROOT, 'deploy/kubernetes/base/ledgerquota-crd.yaml');
const NAMESPACE = 'lq-team';
let stack: LedgerStack;

beforeAll(async () => {
  // QUOTAS_PER_NAMESPACE_MAX for the API and the reconciler alike: the reconciler's syncs decide with the same limits (one composition of the ledger).
  stack = await startLedgerCluster({ controllers: ['namespace'] }, { env: { QUOTAS_PER_NAMESPACE_MAX: '2' } });
  await stack.plane.apply(readFileSync(CRD, 'utf8'));
  await stack.plane.kubectl(['wait', '--for=condition=established', 'crd/ledgerquotas.quota-ledger.io', '--timeout=60s']);
  await stack.plane.createNamespace(NAMESPACE);
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
});

const ledgerQuota = (hard: Record<string, string>, name = 'compute', namespace = NAMESPACE) =>
  JSON.stringify({
    apiVersion: 'quota-ledger.io/v1alpha1',
    kind: 'LedgerQuota',
    // A claimed author is replaced by the one the kube-apiserver names.
    metadata: { name, namespace, annotations: { 'quota-ledger.io/last-applied-by': 'mallory' } },
    spec: { hard },
  });

/** The ledger's quota as its REST API shows it (undefined while it has none). */
async function ledgerQuotaOf(name: string, namespace = NAMESPACE) {
  const answer = await stack.request('GET', `/v1/namespaces/${namespace}/resourcequotas/${name}`);
  return answer.status === 200 ? answer.body : undefined;
}

describe('LedgerQuota objects, applied with kubectl', () => {
  it('reach the ledger, govern admission, show the ledger’s used, and are removed with the object', async () => {
    expect((await stack.plane.kubectl(['apply', '-f', '-'], ledgerQuota({ pods: '1' }))).trim()).toBe(
      'ledgerquota.quota-ledger.io/compute created',
    );

    // In the ledger, through the REST PUT's command, recorded as made by kubectl.
    const quota = await eventually('the LedgerQuota in the ledger', () => ledgerQuotaOf('compute'));
    expect(quota.spec).toEqual({ hard: { pods: '1' } });
    expect(quota.metadata.annotations['quota-ledger.io/managed-by']).toBe('ledgerquotas.quota-ledger.io');
    const history = await stack.request('GET', `/v1/namespaces/${NAMESPACE}/resourcequotas/compute/history`);
    // The admin's client certificate names the user "admin": our mutating webhook stamped it on the object.
    expect(history.body.items.map((c: { type: string; actor: string; onBehalfOf?: string }) => [c.type, c.actor, c.onBehalfOf])).toEqual([
      ['QuotaDefined', 'system:reconciler', 'admin'],
    ]);
    const stamped = await stack.plane.kubectl([
      'get',
      'ledgerquota',
      'compute',
      '-n',
      NAMESPACE,
      '-o',
      'jsonpath={.metadata.annotations.quota-ledger\\.io/last-applied-by}',
    ]);
    expect(stamped).toBe('admin');
    await untilCounted(stack, NAMESPACE);

    // The cluster object is its source of truth: the REST admin API refuses to change or delete it.
    const put = await stack.request('PUT', `/v1/namespaces/${NAMESPACE}/resourcequotas/compute`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'compute' },
      spec: { hard: { pods: '9' } },
    });
    const removal = await stack.request('DELETE', `/v1/namespaces/${NAMESPACE}/resourcequotas/compute`);
    for (const refused of [put, removal]) {
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'Conflict',
        code: 409,
        details: { name: 'compute', kind: 'resourcequotas' },
      });
      expect(refused.body.message).toContain(
        'it is managed by the cluster object ledgerquotas.quota-ledger.io "compute" in namespace "lq-team"',
      );
    }
    expect((await ledgerQuotaOf('compute')).spec).toEqual({ hard: { pods: '1' } });

    // Our webhook enforces it, naming it.
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('first', NAMESPACE))).code).toBe(0);
    await untilUsed(stack, NAMESPACE, 'compute', { pods: '1' });
    const second = await stack.plane.tryKubectl(['create', '-f', '-'], pod('second', NAMESPACE));
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(
      'admission webhook "validate.quota-ledger.io" denied the request: pods "second" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1',
    );

    // The object's status is the ledger's, as kubectl get and describe show it.
    const status = await eventually('status.used from the ledger', async () => {
      const object = JSON.parse(await stack.plane.kubectl(['get', 'ledgerquota', 'compute', '-n', NAMESPACE, '-o', 'json']));
      return object.status?.used?.pods === '1' ? object.status : undefined;
    });
    expect(status).toMatchObject({
      hard: { pods: '1' },
      used: { pods: '1' },
      observedGeneration: 1,
      conditions: [{ type: 'Synced', status: 'True' }],
    });
    const table = await stack.plane.kubectl(['get', 'ledgerquotas', '-n', NAMESPACE]);
    expect(table).toMatch(/^NAME\s+HARD\s+USED\s+SYNCED\s+AGE\ncompute\s+\{"pods":"1"\}\s+\{"pods":"1"\}\s+True\s+/);
    expect(await stack.plane.kubectl(['describe', 'ledgerquota', 'compute', '-n', NAMESPACE])).toMatch(/Used:\s+Pods:\s+1/);

    // Deleted in the cluster, deleted in the ledger: the pod refused before is admitted.
    await stack.plane.kubectl(['delete', 'ledgerquota', 'compute', '-n', NAMESPACE]);
    await eventually('the ledger quota removed', async () => ((await ledgerQuotaOf('compute')) === undefined ? true : undefined));
    const removed = await stack.request('GET', `/v1/namespaces/${NAMESPACE}/resourcequotas/compute/history`);
    expect(removed.body.items.map((c: { type: string }) => c.type)).toEqual(['QuotaDefined', 'QuotaRemoved']);
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('second', NAMESPACE))).code).toBe(0);
  });
});

describe('LedgerQuota objects past QUOTAS_PER_NAMESPACE_MAX', () => {
  it('the reconciler refuses the third of a namespace with the configured limit, not the built-in 16', async () => {
    const namespace = 'lq-many';
    await stack.plane.createNamespace(namespace);
    for (const name of ['q1', 'q2', 'q3']) await stack.plane.kubectl(['apply', '-f', '-'], ledgerQuota({ pods: '5' }, name, namespace));
    await eventually('q1 and q2 in the ledger', async () =>
      (await ledgerQuotaOf('q1', namespace)) && (await ledgerQuotaOf('q2', namespace)) ? true : undefined,
    );
    const refused = await eventually('q3 refused', async () => {
      const object = JSON.parse(await stack.plane.kubectl(['get', 'ledgerquota', 'q3', '-n', namespace, '-o', 'json']));
      return object.status?.conditions?.find((c: { type: string }) => c.type === 'Synced');
    });
    expect(refused).toMatchObject({ type: 'Synced', status: 'False', reason: 'Refused' });
    expect(refused.message).toContain(
      `namespace "${namespace}" already has 2 ResourceQuotas, the most it may have (QUOTAS_PER_NAMESPACE_MAX=2)`,
    );
    expect(await ledgerQuotaOf('q3', namespace)).toBeUndefined();
  });
});

describe('LedgerQuota objects counting a kind the webhooks are not sent', () => {
  it('kubectl apply says, as the REST PUT does, that such a count is only counted after the fact', async () => {
    const namespace = 'lq-warn';
    await stack.plane.createNamespace(namespace);
    const unrouted = await stack.plane.tryKubectl(
      ['apply', '-f', '-'],
      ledgerQuota({ 'count/resourcequotas': '2', 'count/configmaps': '5' }, 'budgets', namespace),
    );
    expect(unrouted.code, unrouted.stderr).toBe(0);
    const warnings = unrouted.stderr.split('\n').filter((line) => line.startsWith('Warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('count/resourcequotas is counted only after the fact');
    // A count the webhooks are sent (ConfigMaps, any other kind's) is enforced at admission: no warning.
    const routed = await stack.plane.tryKubectl(
      ['apply', '-f', '-'],
      ledgerQuota({ 'count/configmaps': '5', 'count/poddisruptionbudgets.policy': '2' }, 'maps', namespace),
    );
    expect([routed.code, routed.stderr.trim()]).toEqual([0, '']);
  });
});

describe('LedgerQuota objects ResourceQuota validation refuses', () => {
  it('kubectl apply fails with Kubernetes’ field error, as for a ResourceQuota, and nothing is stored or put into the ledger', async () => {
    const namespace = 'lq-invalid';
    await stack.plane.createNamespace(namespace);
    const invalid = JSON.stringify({
      apiVersion: 'quota-ledger.io/v1alpha1',
      kind: 'LedgerQuota',
      metadata: { name: 'best-effort', namespace },
      spec: { hard: { 'requests.ephemeral-storage': '1Gi' }, scopes: ['BestEffort'] },
    });
    const applied = await stack.plane.tryKubectl(['apply', '-f', '-'], invalid);
    expect(applied.code).not.toBe(0);
    expect(applied.stderr).toContain(
      'admission webhook "mutate-definitions.quota-ledger.io" denied the request: LedgerQuota.quota-ledger.io "best-effort" is invalid: spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource',
    );
    // The same spec as a ResourceQuota: Kubernetes' own validation says the same of it.
    const native = await stack.plane.tryKubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'best-effort', namespace },
        spec: JSON.parse(invalid).spec,
      }),
    );
    expect(native.stderr).toContain('spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource');
    expect((await stack.plane.tryKubectl(['get', 'ledgerquota', 'best-effort', '-n', namespace])).code).not.toBe(0);
    expect(await ledgerQuotaOf('best-effort', namespace)).toBeUndefined();
  });
});
