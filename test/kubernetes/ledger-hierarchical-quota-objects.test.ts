import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/deploy.js';
import { eventually, pod } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// A quota over a namespace and its descendants applied with kubectl as a LedgerHierarchicalQuota
// (deploy/kubernetes/base/ledgerhierarchicalquota-crd.yaml): the reconciler puts it into the ledger
// as the HierarchicalResourceQuota of its namespace and name, our webhook enforces it over the
// subtree (HNC's tree labels, set here by hand: no HNC runs), its status shows the ledger's total
// used, and deleting it removes it.

const CRD = join(ROOT, 'deploy/kubernetes/base/ledgerhierarchicalquota-crd.yaml');
const ROOT_NS = 'lhq-org';
const CHILD = 'lhq-child';
let stack: LedgerStack;

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] });
  await stack.plane.apply(readFileSync(CRD, 'utf8'));
  await stack.plane.kubectl(['wait', '--for=condition=established', 'crd/ledgerhierarchicalquotas.quota-ledger.io', '--timeout=60s']);
  const tree: Record<string, string[]> = {
    [ROOT_NS]: [`${ROOT_NS}.tree.hnc.x-k8s.io/depth=0`],
    [CHILD]: [`${ROOT_NS}.tree.hnc.x-k8s.io/depth=1`, `${CHILD}.tree.hnc.x-k8s.io/depth=0`],
  };
  for (const [namespace, labels] of Object.entries(tree)) {
    await stack.plane.createNamespace(namespace);
    await stack.plane.kubectl(['label', 'namespace', namespace, ...labels]);
  }
  // The ledger reads the labels back from the cluster (NAMESPACE_LABELS_FROM=cluster).
  await eventually(`${CHILD}'s tree labels in the ledger`, async () =>
    (await stack.request('GET', `/v1/namespaces/${CHILD}`)).body.metadata?.labels?.[`${ROOT_NS}.tree.hnc.x-k8s.io/depth`] === '1'
      ? true
      : undefined,
  );
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
});

const hierarchicalQuota = JSON.stringify({
  apiVersion: 'quota-ledger.io/v1alpha1',
  kind: 'LedgerHierarchicalQuota',
  metadata: { name: 'org-pods', namespace: ROOT_NS, annotations: { 'quota-ledger.io/last-applied-by': 'mallory' } },
  spec: { hard: { pods: '1' } },
});

const PATH = `/v1/namespaces/${ROOT_NS}/hierarchicalresourcequotas/org-pods`;

/** The ledger's HierarchicalResourceQuota as its REST API shows it (undefined while it has none). */
async function ledgerQuota() {
  const answer = await stack.request('GET', PATH);
  return answer.status === 200 ? answer.body : undefined;
}

describe('LedgerHierarchicalQuota objects, applied with kubectl', () => {
  it('reach the ledger, govern admission across the subtree, show the ledger’s used, and are removed with the object', async () => {
    expect((await stack.plane.kubectl(['apply', '-f', '-'], hierarchicalQuota)).trim()).toBe(
      'ledgerhierarchicalquota.quota-ledger.io/org-pods created',
    );

    const quota = await eventually('the LedgerHierarchicalQuota in the ledger', () => ledgerQuota());
    expect(quota.spec).toEqual({ hard: { pods: '1' } });
    expect(quota.metadata.annotations['quota-ledger.io/managed-by']).toBe('ledgerhierarchicalquotas.quota-ledger.io');
    const history = await stack.request('GET', `${PATH}/history`);
    expect(history.body.items.map((c: { type: string; actor: string; onBehalfOf?: string }) => [c.type, c.actor, c.onBehalfOf])).toEqual([
      ['SharedQuotaDefined', 'system:reconciler', 'admin'],
    ]);

    const put = await stack.request('PUT', PATH, {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: 'org-pods' },
      spec: { hard: { pods: '9' } },
    });
    const removal = await stack.request('DELETE', PATH);
    for (const refused of [put, removal]) {
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        kind: 'Status',
        reason: 'Conflict',
        code: 409,
        details: { name: 'org-pods', kind: 'hierarchicalresourcequotas' },
      });
      expect(refused.body.message).toContain(
        `it is managed by the cluster object ledgerhierarchicalquotas.quota-ledger.io "org-pods" in namespace "${ROOT_NS}"`,
      );
    }

    // One pod over the subtree: the child's is admitted (once counted), the root's refused.
    await eventually('the child pod admitted', async () =>
      (await stack.plane.tryKubectl(['create', '-f', '-'], pod('first', CHILD))).code === 0 ? true : undefined,
    );
    const second = await stack.plane.tryKubectl(['create', '-f', '-'], pod('second', ROOT_NS));
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(
      `pods "second" is forbidden: exceeded hierarchical quota in namespace "${ROOT_NS}": "org-pods", requested: pods=1, used: pods=1, limited: pods=1`,
    );

    const status = await eventually('status.used from the ledger', async () => {
      const object = JSON.parse(await stack.plane.kubectl(['get', 'ledgerhierarchicalquota', 'org-pods', '-n', ROOT_NS, '-o', 'json']));
      return object.status?.used?.pods === '1' ? object.status : undefined;
    });
    expect(status).toMatchObject({ hard: { pods: '1' }, used: { pods: '1' }, conditions: [{ type: 'Synced', status: 'True' }] });

    await stack.plane.kubectl(['delete', 'ledgerhierarchicalquota', 'org-pods', '-n', ROOT_NS]);
    await eventually('the ledger HierarchicalResourceQuota removed', async () => ((await ledgerQuota()) === undefined ? true : undefined));
    expect((await stack.request('GET', `${PATH}/history`)).body.items.map((c: { type: string }) => c.type)).toEqual([
      'SharedQuotaDefined',
      'SharedQuotaRemoved',
    ]);
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('second', ROOT_NS))).code).toBe(0);
  });
});
