import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, pod } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';
import { startRefusingWebhook, type RefusingWebhook } from '../support/refusing-webhook.js';

// Namespace labels as the ledger takes them with NAMESPACE_LABELS_FROM=cluster (the kustomize
// base): our webhook reviews a relabel before kube-apiserver stores it and records nothing; the
// reconciler's namespace-object job reads the stored Namespace back, and its labels move the
// namespace into or out of our ClusterResourceQuotas. A relabel another webhook refuses after
// ours allowed it is never stored, so it never moves usage.

const counts = { relabels: 0, movedIn: 0, movedOut: 0, refusedRelabels: 0 };
let stack: LedgerStack;
let second: RefusingWebhook;

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] });
  second = await startRefusingWebhook(stack.plane, 'second-opinion', (review) =>
    review.resource.resource === 'namespaces' && review.operation === 'UPDATE' && review.object?.metadata?.labels?.tenant === 'blocked'
      ? `namespaces "${review.name}" is forbidden: tenant blocked is not for you`
      : undefined,
  );
  await second.register([{ apiGroups: [''], resources: ['namespaces'], operations: ['UPDATE'], scope: 'Cluster' }], {
    probe: () => stack.plane.tryKubectl(['label', 'namespace', 'default', 'probe=1', '--overwrite', '--dry-run=server']),
  });
});

afterAll(async () => {
  await stack?.stop();
  await second?.close();
  await stack?.plane.stop();
  console.log(
    `namespace labels e2e: ${counts.relabels} relabels with kubectl, ${counts.movedIn} moved into and ${counts.movedOut} out of a ClusterResourceQuota, ${counts.refusedRelabels} refused by another webhook after ours and never recorded`,
  );
});

async function clusterQuota(name: string, tenant: string): Promise<void> {
  const answer = await stack.request('PUT', `/v1/clusterresourcequotas/${name}`, {
    apiVersion: 'quota.openshift.io/v1',
    kind: 'ClusterResourceQuota',
    metadata: { name },
    spec: { selector: { labels: { matchLabels: { tenant } } }, quota: { hard: { pods: '10' } } },
  });
  expect(answer.status).toBe(201);
}

/** The ClusterResourceQuota's status: its total used pods, and each namespace's. */
async function covered(name: string): Promise<{ total: string | undefined; namespaces: Record<string, string | undefined> }> {
  const quota = (await stack.request('GET', `/v1/clusterresourcequotas/${name}`)).body;
  const namespaces = (quota.status?.namespaces ?? []) as { namespace: string; status: { used: Record<string, string> } }[];
  return {
    total: quota.status?.total?.used?.pods,
    namespaces: Object.fromEntries(namespaces.map((n) => [n.namespace, n.status.used.pods])),
  };
}

/** The labels the ledger holds for the namespace (what the reconciler read back). */
const ledgerLabels = async (namespace: string): Promise<Record<string, string>> =>
  (await stack.request('GET', `/v1/namespaces/${namespace}`)).body.metadata?.labels ?? {};

describe('namespace labels from the cluster', () => {
  it('moves a namespace relabelled with kubectl into a ClusterResourceQuota once it is stored, its pods with it, and out again', async () => {
    await clusterQuota('acme', 'acme');
    await stack.plane.createNamespace('nl-a');
    for (const name of ['web-0', 'web-1']) await stack.plane.kubectl(['create', '-f', '-'], pod(name, 'nl-a'));

    await stack.plane.kubectl(['label', 'namespace', 'nl-a', 'tenant=acme']);
    counts.relabels++;
    // Read back, then counted: the two pods admitted before it was managed are adopted.
    expect(
      await eventually('nl-a counted in acme', async () =>
        (await covered('acme')).namespaces['nl-a'] === '2' ? covered('acme') : undefined,
      ),
    ).toEqual({ total: '2', namespaces: { 'nl-a': '2' } });
    counts.movedIn++;
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('web-2', 'nl-a'))).code).toBe(0);
    await eventually('web-2 charged to acme', async () => ((await covered('acme')).total === '3' ? true : undefined));

    await stack.plane.kubectl(['label', 'namespace', 'nl-a', 'tenant-']);
    counts.relabels++;
    expect(
      await eventually('nl-a out of acme', async () =>
        (await covered('acme')).namespaces['nl-a'] === undefined ? covered('acme') : undefined,
      ),
    ).toEqual({ total: '0', namespaces: {} });
    counts.movedOut++;
  });

  it('never moves usage for a relabel another webhook refused after ours allowed it', async () => {
    await clusterQuota('blocked', 'blocked');
    await stack.plane.createNamespace('nl-b');
    await stack.plane.kubectl(['create', '-f', '-'], pod('web-0', 'nl-b'));
    const before = await stack.webhookCalls();
    const refused = await stack.plane.tryKubectl(['label', 'namespace', 'nl-b', 'tenant=blocked']);
    expect(refused.stderr).toContain(
      'admission webhook "second-opinion.test.example.com" denied the request: namespaces "nl-b" is forbidden: tenant blocked is not for you',
    );
    // Ours was asked too (and allowed: kube-apiserver names the one that denied).
    expect((await stack.webhookCalls()).validate).toBeGreaterThan(before.validate);
    counts.refusedRelabels++;

    // A later relabel that is stored is read back: by then the refused one would have been too.
    await stack.plane.kubectl(['label', 'namespace', 'nl-b', 'seen=yes']);
    counts.relabels++;
    const seen: { total: string | undefined; namespaces: Record<string, string | undefined> }[] = [];
    const labels = await eventually('nl-b read back', async () => {
      seen.push(await covered('blocked'));
      const held = await ledgerLabels('nl-b');
      return held['seen'] === 'yes' ? held : undefined;
    });
    expect(labels['tenant']).toBeUndefined();
    // Sampled all along: the blocked quota never covered nl-b.
    expect([...seen, await covered('blocked')].every((s) => s.total === '0' && Object.keys(s.namespaces).length === 0)).toBe(true);
  });
});
