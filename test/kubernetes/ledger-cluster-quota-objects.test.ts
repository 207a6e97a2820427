import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/deploy.js';
import { eventually, pod } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// A quota over several namespaces applied with kubectl as a LedgerClusterQuota object
// (deploy/kubernetes/base/ledgerclusterquota-crd.yaml, cluster-scoped): the reconciler puts it into
// the ledger as the ClusterResourceQuota of the same name, our webhook enforces it over the
// namespaces it selects, its status shows the ledger's total used, and deleting it removes it.

const CRD = join(ROOT, 'deploy/kubernetes/base/ledgerclusterquota-crd.yaml');
const NAMESPACES = ['lcq-a', 'lcq-b'];
let stack: LedgerStack;

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] });
  await stack.plane.apply(readFileSync(CRD, 'utf8'));
  await stack.plane.kubectl(['wait', '--for=condition=established', 'crd/ledgerclusterquotas.quota-ledger.io', '--timeout=60s']);
  for (const namespace of NAMESPACES) {
    await stack.plane.createNamespace(namespace);
    await stack.plane.kubectl(['label', 'namespace', namespace, 'tenant=acme']);
  }
  // The ledger reads the labels back from the cluster (NAMESPACE_LABELS_FROM=cluster).
  for (const namespace of NAMESPACES) {
    await eventually(`${namespace}'s labels in the ledger`, async () =>
      (await stack.request('GET', `/v1/namespaces/${namespace}`)).body.metadata?.labels?.tenant === 'acme' ? true : undefined,
    );
  }
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
});

const clusterQuota = JSON.stringify({
  apiVersion: 'quota-ledger.io/v1alpha1',
  kind: 'LedgerClusterQuota',
  // A claimed author is replaced by the one the kube-apiserver names.
  metadata: { name: 'acme', annotations: { 'quota-ledger.io/last-applied-by': 'mallory' } },
  spec: { selector: { labels: { matchLabels: { tenant: 'acme' } } }, quota: { hard: { pods: '1' } } },
});

/** The ledger's ClusterResourceQuota as its REST API shows it (undefined while it has none). */
async function ledgerClusterQuota(name: string) {
  const answer = await stack.request('GET', `/v1/clusterresourcequotas/${name}`);
  return answer.status === 200 ? answer.body : undefined;
}

describe('LedgerClusterQuota objects, applied with kubectl', () => {
  it('reach the ledger, govern admission across the namespaces they select, show the ledger’s used, and are removed with the object', async () => {
    expect((await stack.plane.kubectl(['apply', '-f', '-'], clusterQuota)).trim()).toBe('ledgerclusterquota.quota-ledger.io/acme created');

    // In the ledger, through the REST PUT's command, on behalf of the user our webhook stamped.
    const quota = await eventually('the LedgerClusterQuota in the ledger', () => ledgerClusterQuota('acme'));
    expect(quota.spec).toEqual({
      selector: { labels: { matchLabels: { tenant: 'acme' } }, annotations: null },
      quota: { hard: { pods: '1' } },
    });
    expect(quota.metadata.annotations['quota-ledger.io/managed-by']).toBe('ledgerclusterquotas.quota-ledger.io');
    const history = await stack.request('GET', '/v1/clusterresourcequotas/acme/history');
    expect(history.body.items.map((c: { type: string; actor: string; onBehalfOf?: string }) => [c.type, c.actor, c.onBehalfOf])).toEqual([
      ['SharedQuotaDefined', 'system:reconciler', 'admin'],
    ]);

    // The cluster object is its source of truth: the REST admin API refuses to change or delete it.
    const put = await stack.request('PUT', '/v1/clusterresourcequotas/acme', {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'acme' },
      spec: { selector: { labels: { matchLabels: { tenant: 'acme' } } }, quota: { hard: { pods: '9' } } },
    });
    const removal = await stack.request('DELETE', '/v1/clusterresourcequotas/acme');
    for (const refused of [put, removal]) {
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        kind: 'Status',
        reason: 'Conflict',
        code: 409,
        details: { name: 'acme', kind: 'clusterresourcequotas' },
      });
      expect(refused.body.message).toContain('it is managed by the cluster object ledgerclusterquotas.quota-ledger.io "acme";');
    }

    // One pod across both namespaces: the first is admitted (once each namespace is counted), the second refused.
    await eventually('the first pod admitted', async () =>
      (await stack.plane.tryKubectl(['create', '-f', '-'], pod('first', 'lcq-a'))).code === 0 ? true : undefined,
    );
    const second = await stack.plane.tryKubectl(['create', '-f', '-'], pod('second', 'lcq-b'));
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(
      'pods "second" is forbidden: exceeded cluster quota: acme, requested: pods=1, used: pods=1, limited: pods=1',
    );

    // The object's status is the ledger's total, as kubectl get shows it.
    const status = await eventually('status.used from the ledger', async () => {
      const object = JSON.parse(await stack.plane.kubectl(['get', 'ledgerclusterquota', 'acme', '-o', 'json']));
      return object.status?.used?.pods === '1' ? object.status : undefined;
    });
    expect(status).toMatchObject({
      hard: { pods: '1' },
      used: { pods: '1' },
      observedGeneration: 1,
      conditions: [{ type: 'Synced', status: 'True' }],
    });
    expect(await stack.plane.kubectl(['get', 'ledgerclusterquotas'])).toMatch(
      /^NAME\s+HARD\s+USED\s+SYNCED\s+AGE\nacme\s+\{"pods":"1"\}\s+\{"pods":"1"\}\s+True\s+/,
    );

    // Deleted in the cluster, deleted in the ledger: the pod refused before is admitted.
    await stack.plane.kubectl(['delete', 'ledgerclusterquota', 'acme']);
    await eventually('the ledger ClusterResourceQuota removed', async () =>
      (await ledgerClusterQuota('acme')) === undefined ? true : undefined,
    );
    const removed = await stack.request('GET', '/v1/clusterresourcequotas/acme/history');
    expect(removed.body.items.map((c: { type: string }) => c.type)).toEqual(['SharedQuotaDefined', 'SharedQuotaRemoved']);
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('second', 'lcq-b'))).code).toBe(0);
  });
});
