import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineQuota, eventually, ledgerEvents, pod, uidOf, untilCounted, untilUsed } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// What `quotactl webhook-config`'s flags mean to a real kube-apiserver: the namespace and object
// selectors it sends by, and its failure policy while our API is down, after which the
// reconciler repairs the books (it adopts what was admitted unseen).

const counts = { sent: 0, notSent: 0, refusedWhileDown: 0, admittedWhileDown: 0, adopted: 0 };
let stack: LedgerStack;

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] });
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
  console.log(
    `webhook registration e2e: ${counts.sent} sent and denied, ${counts.notSent} not sent (selectors), ${counts.refusedWhileDown} refused and ${counts.admittedWhileDown} admitted while our API was down, ${counts.adopted} adopted`,
  );
});

async function namespaceWithQuota(namespace: string, hard: Record<string, string>, labels: Record<string, string> = {}): Promise<void> {
  await stack.plane.createNamespace(namespace);
  if (Object.keys(labels).length)
    await stack.plane.kubectl(['label', 'namespace', namespace, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)]);
  await defineQuota(stack, namespace, 'compute', hard);
  await untilCounted(stack, namespace);
}

/**
 * Creates the pod, retrying while the kube-apiserver still sends by the configuration before
 * (it reads configurations through an informer); answers kubectl's last result.
 */
async function createOnceRegistered(manifest: string, expectCreated: boolean) {
  return eventually(`the pod ${expectCreated ? 'created' : 'refused'}`, async () => {
    const result = await stack.plane.tryKubectl(['create', '-f', '-'], manifest);
    return (result.code === 0) === expectCreated ? result : undefined;
  });
}

describe('quotactl webhook-config flags, as kube-apiserver applies them', () => {
  it('sends only what --namespace-selector and --object-selector pick, and never kube-system or quota-ledger', async () => {
    // A quota of no pods everywhere: a pod sent to us is denied, one not sent is created.
    await namespaceWithQuota('sel-on', { pods: '0' }, { 'quota-ledger.io/quota': 'enforced' });
    await namespaceWithQuota('sel-off', { pods: '0' });
    await defineQuota(stack, 'quota-ledger', 'compute', { 'count/configmaps': '0' });
    await stack.registerWebhooks(
      ['--namespace-selector', 'quota-ledger.io/quota=enforced', '--object-selector', '!quota-ledger.io/exempt'],
      { probeNamespace: 'sel-on' },
    );
    try {
      await selected();
    } finally {
      await stack.registerWebhooks([]);
    }
  });

  async function selected(): Promise<void> {
    const off = await createOnceRegistered(pod('web', 'sel-off'), true);
    expect(off.stdout).toBe('pod/web created\n');
    counts.notSent++;
    const exempt = await createOnceRegistered(pod('exempt', 'sel-on', { labels: { 'quota-ledger.io/exempt': 'true' } }), true);
    expect(exempt.stdout).toBe('pod/exempt created\n');
    counts.notSent++;
    const sent = await stack.plane.tryKubectl(['create', '-f', '-'], pod('web', 'sel-on'));
    expect(sent.stderr).toContain(
      'admission webhook "validate.quota-ledger.io" denied the request: pods "web" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=0, limited: pods=0',
    );
    counts.sent++;
    // The API's own namespace stays out whatever the selector says (with Fail, it could not restart).
    await stack.plane.kubectl(['label', 'namespace', 'quota-ledger', 'quota-ledger.io/quota=enforced']);
    // (A ConfigMap: the namespace of deploy/kubernetes/base enforces Pod Security "restricted".)
    expect(await stack.plane.kubectl(['create', 'configmap', 'settings', '-n', 'quota-ledger'])).toBe('configmap/settings created\n');
    counts.notSent++;

    // Neither reached us: no decision in sel-off, none about the exempt pod.
    expect((await stack.request('GET', '/v1/namespaces/sel-off/decisions')).body.items).toEqual([]);
    const decided = (await stack.request('GET', '/v1/namespaces/sel-on/decisions?dryRun=false')).body.items.map(
      (d: { name: string }) => d.name,
    );
    expect(decided).not.toContain('exempt');
    expect(decided).toContain('web');
  }

  it('with our API down, Fail refuses; Ignore admits; the reconciler then adopts what was admitted unseen', async () => {
    await namespaceWithQuota('outage', { pods: '2' });
    await stack.stopApp('api');
    const refused = await stack.plane.tryKubectl(['create', '-f', '-'], pod('during-fail', 'outage'));
    expect(refused.code).not.toBe(0);
    // The mutating webhook is called first; kube-apiserver names it and why it failed.
    expect(refused.stderr).toMatch(
      /Internal error occurred: failed calling webhook "mutate\.quota-ledger\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/v1\/admission\/mutate\?timeout=10s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused/,
    );
    expect(await uidOf(stack, 'pod', 'during-fail', 'outage')).toBeUndefined();
    counts.refusedWhileDown++;

    // Registered again with Ignore (kubectl apply needs nothing of our API).
    await stack.registerWebhooks(['--failure-policy', 'Ignore'], { wait: false });
    await createOnceRegistered(pod('unseen-0', 'outage'), true);
    for (const name of ['unseen-1', 'unseen-2']) await stack.plane.kubectl(['create', '-f', '-'], pod(name, 'outage'));
    counts.admittedWhileDown += 3;

    await stack.startApp('api');
    // Three pods the ledger never saw, against a quota of two: adopted, reported over hard, and
    // nothing more admitted until they go.
    const adopted = await eventually('the three pods adopted', async () => {
      const events = (await ledgerEvents(stack, 'outage')).filter((e) => e.type === 'Adopted');
      return events.length === 3 ? events : undefined;
    });
    expect(adopted.map((e) => e.data.object.name).sort()).toEqual(['unseen-0', 'unseen-1', 'unseen-2']);
    counts.adopted += 3;
    await untilUsed(stack, 'outage', 'compute', { pods: '3' });
    await stack.registerWebhooks([]);
    const denied = await createOnceRegistered(pod('after', 'outage'), false);
    expect(denied.stderr).toContain('pods "after" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=3, limited: pods=2');
    await stack.plane.kubectl(['delete', 'pod', 'unseen-0', 'unseen-1', '-n', 'outage', '--wait=false']);
    await untilUsed(stack, 'outage', 'compute', { pods: '1' });
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('after', 'outage'))).code).toBe(0);
  });

  it('with our API down and the default registration, a Secret (only counted: validate-count, Ignore) is created while a pod is refused; the Secret is adopted after', async () => {
    await namespaceWithQuota('count-outage', { pods: '1', 'count/secrets': '1' });
    await stack.registerWebhooks([]);
    await stack.stopApp('api');
    try {
      const refused = await stack.plane.tryKubectl(['create', '-f', '-'], pod('during', 'count-outage'));
      expect(refused.code).not.toBe(0);
      counts.refusedWhileDown++;
      // What a `helm install` writes first (its release Secret) is not hostage to the ledger.
      expect(await stack.plane.kubectl(['create', 'secret', 'generic', 'release-v1', '-n', 'count-outage', '--from-literal=a=b'])).toBe(
        'secret/release-v1 created\n',
      );
      counts.admittedWhileDown++;
    } finally {
      await stack.startApp('api');
    }
    const uid = (await uidOf(stack, 'secret', 'release-v1', 'count-outage')) ?? '';
    await eventually('the Secret adopted', async () =>
      (await ledgerEvents(stack, 'count-outage')).some((e) => e.type === 'Adopted' && e.data.object?.uid === uid) ? true : undefined,
    );
    counts.adopted++;
    await untilUsed(stack, 'count-outage', 'compute', { 'count/secrets': '1' });
    // Counted again: the quota refuses the next one, under validate-count.
    const second = await stack.plane.tryKubectl(['create', 'secret', 'generic', 'release-v2', '-n', 'count-outage', '--from-literal=a=b']);
    expect(second.stderr).toContain(
      'admission webhook "validate-count.quota-ledger.io" denied the request: secrets "release-v2" is forbidden: exceeded quota: compute, requested: count/secrets=1, used: count/secrets=1, limited: count/secrets=1',
    );
  });
});
