import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/deploy.js';
import { defineQuota, eventually, ledgerEvents, pod, untilCounted, untilUsed } from '../support/ledger-reads.js';
import { RECONCILER_SERVICE_ACCOUNT, startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// The webhooks as installed (quotactl webhook-config's default, deploy/kubernetes, the chart):
// only namespaces labelled quota-ledger.io/managed are sent their pods, claims, services and
// counted kinds, and the reconciler labels a namespace the ledger manages before its first count.
// Between a quota appearing and the label reaching the kube-apiserver, writes there skip the
// webhooks and are stored unchecked: the first count must adopt all of them, so it may not begin
// before the label is in place, and until it is done the quota answers `status unknown`. Here the
// reconciler cannot place the label for a while (its RBAC grant for it is taken away), pods are
// created meanwhile, and the count waits; then the label goes on, the count adopts them all, and
// the webhooks refuse the next pod over the quota.

const LABEL = 'quota-ledger.io/managed';
const SINCE = 'quota-ledger.io/managed-since';
const LABEL_GRANT = 'quota-ledger-reconciler-namespace-labels';
const RECONCILER = `system:serviceaccount:${RECONCILER_SERVICE_ACCOUNT.namespace}:${RECONCILER_SERVICE_ACCOUNT.name}`;

let stack: LedgerStack;
const seen: Record<string, unknown> = {};

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] }, { register: false, namespaces: 'managed', intervalSeconds: 3 });
  // A managed namespace for the registration's probe: the webhooks are called there only.
  await stack.plane.createNamespace('mn-probe');
  await defineQuota(stack, 'mn-probe', 'pods', { pods: '100' });
  await untilCounted(stack, 'mn-probe');
  await stack.registerWebhooks([], { probeNamespace: 'mn-probe' });
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
  console.log(`managed namespaces e2e: ${JSON.stringify(seen)}`);
});

const namespaceObject = async (name: string): Promise<{ labels?: Record<string, string>; annotations?: Record<string, string> }> =>
  JSON.parse(await stack.plane.kubectl(['get', 'namespace', name, '-o', 'jsonpath={.metadata}'])) as {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
const storedPods = async (namespace: string): Promise<string[]> =>
  (JSON.parse(await stack.plane.kubectl(['get', 'pods', '-n', namespace, '-o', 'json'])).items as { metadata: { name: string } }[])
    .map((p) => p.metadata.name)
    .sort();
const canLabel = async (): Promise<boolean> =>
  (await stack.plane.tryKubectl(['auth', 'can-i', 'patch', 'namespaces', `--as=${RECONCILER}`])).stdout.trim() === 'yes';
const review = (namespace: string, name: string) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `mn-${name}`,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace,
    name,
    operation: 'CREATE',
    object: JSON.parse(pod(name, namespace)),
    dryRun: true,
    userInfo: { username: 'alice' },
  },
});

describe('the webhooks sent only the namespaces the ledger manages', () => {
  it('sends nothing of a namespace no quota covers: its writes never wait on the ledger', async () => {
    await stack.plane.createNamespace('mn-plain');
    const before = await stack.webhookCalls();
    for (const name of ['a', 'b']) await stack.plane.kubectl(['create', '-f', '-'], pod(name, 'mn-plain'));
    await stack.plane.kubectl(['create', 'configmap', 'c', '-n', 'mn-plain']);
    expect(await stack.webhookCalls()).toEqual(before);
    expect((await namespaceObject('mn-plain')).labels?.[LABEL]).toBeUndefined();
  });

  it('counts a namespace made managed only once its label is in place, adopting what was stored unchecked meanwhile', async () => {
    await stack.plane.createNamespace('mn-race');
    for (const name of ['old-0', 'old-1']) await stack.plane.kubectl(['create', '-f', '-'], pod(name, 'mn-race'));
    // The label cannot reach the kube-apiserver for now.
    await stack.plane.kubectl(['delete', 'clusterrolebinding', LABEL_GRANT]);
    await eventually('the label grant withdrawn', async () => ((await canLabel()) ? undefined : true), 30_000);
    await defineQuota(stack, 'mn-race', 'pods', { pods: '4' });

    // The window: the namespace is managed but not yet labelled, so this is not sent, and stored.
    const calls = await stack.webhookCalls();
    await stack.plane.kubectl(['create', '-f', '-'], pod('window-0', 'mn-race'));
    expect(await stack.webhookCalls()).toEqual(calls);
    // Several count attempts fail to place the label (the reconciler retries, and every 3 s queues it again).
    await eventually(
      'two count attempts refused the label',
      async () => ((stack.logs('reconciler').match(/the managed label could not be set/g) ?? []).length >= 2 ? true : undefined),
      30_000,
    );
    const waiting = await stack.request('GET', '/v1/namespaces/mn-race/usage');
    expect(waiting.body.awaitingFirstCountSince, 'the first count may not happen while the label is not in place').toEqual(
      expect.any(String),
    );
    expect((await ledgerEvents(stack, 'mn-race')).map((e) => e.type)).not.toContain('Counted');
    // What the webhooks are sent there meanwhile (none, yet: a review the API server would send) is refused.
    const unknown = await stack.request('POST', '/v1/admission/validate', review('mn-race', 'asked'), stack.tokens.webhook);
    expect(unknown.body.response).toMatchObject({
      allowed: false,
      status: { code: 403, message: 'pods "asked" is forbidden: status unknown for quota: pods, resources: pods' },
    });

    // The grant back (rbac.yaml as installed): the label goes on, then the count, which adopts all three.
    const restored = Date.now();
    await stack.plane.apply(readFileSync(join(ROOT, 'deploy/kubernetes/base/rbac.yaml'), 'utf8'));
    await untilCounted(stack, 'mn-race');
    seen['countedMsAfterTheGrant'] = Date.now() - restored;
    const marked = await namespaceObject('mn-race');
    expect(marked.labels?.[LABEL]).toBe('true');
    const events = await ledgerEvents(stack, 'mn-race');
    const counted = events.find((e) => e.type === 'Counted');
    // Its listing began after the label was stored, and the propagation delay after that.
    expect(Date.parse(counted?.data.listedAt as string)).toBeGreaterThanOrEqual(Date.parse(marked.annotations?.[SINCE] ?? '') + 1000);
    expect(
      events
        .filter((e) => e.type === 'Adopted')
        .map((e) => e.data.object.name as string)
        .sort(),
    ).toEqual(['old-0', 'old-1', 'window-0']);
    await untilUsed(stack, 'mn-race', 'pods', { pods: '3' });

    // From now on the webhooks are sent the namespace's writes: the fourth fits, the fifth does not.
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('after-0', 'mn-race'))).code).toBe(0);
    const over = await stack.plane.tryKubectl(['create', '-f', '-'], pod('after-1', 'mn-race'));
    expect(over.stderr).toContain(
      'admission webhook "validate.quota-ledger.io" denied the request: pods "after-1" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=4, limited: pods=4',
    );
    expect(await storedPods('mn-race')).toEqual(['after-0', 'old-0', 'old-1', 'window-0']);
    seen['adopted'] = 3;
  });

  it('lets nobody but the reconciler remove the label, and the reconciler change nothing else of a Namespace', async () => {
    const removed = await stack.plane.tryKubectl(['label', 'namespace', 'mn-race', `${LABEL}-`]);
    expect(removed.code).not.toBe(0);
    expect(removed.stderr).toContain(
      'the label quota-ledger.io/managed and the annotation quota-ledger.io/managed-since are the quota-ledger reconciler',
    );
    const relabel = await stack.plane.tryKubectl(['label', 'namespace', 'mn-race', `${LABEL}=false`, '--overwrite']);
    expect(relabel.code).not.toBe(0);
    const other = await stack.plane.tryKubectl(['label', 'namespace', 'mn-race', 'team=red', `--as=${RECONCILER}`]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('the quota-ledger reconciler may change only the label quota-ledger.io/managed');
    expect((await namespaceObject('mn-race')).labels).toMatchObject({ [LABEL]: 'true' });
    expect((await namespaceObject('mn-race')).labels?.['team']).toBeUndefined();
    // Anyone else's other changes go through, and the reconciler's own label change does (above).
    expect((await stack.plane.tryKubectl(['label', 'namespace', 'mn-race', 'team=blue'])).code).toBe(0);
  });

  it('puts back a label removed anyway (the policy unbound by a cluster admin) at its next pass, and takes it off a namespace the ledger does not manage', async () => {
    await stack.plane.kubectl(['delete', 'validatingadmissionpolicybinding', 'quota-ledger-managed-label']);
    await eventually(
      'the label removed by hand',
      async () => ((await stack.plane.tryKubectl(['label', 'namespace', 'mn-race', `${LABEL}-`])).code === 0 ? true : undefined),
      30_000,
    );
    await stack.plane.kubectl(['label', 'namespace', 'mn-plain', `${LABEL}=true`]);
    await eventually('the label back on mn-race and off mn-plain', async () => {
      const [managed, plain] = await Promise.all([namespaceObject('mn-race'), namespaceObject('mn-plain')]);
      return managed.labels?.[LABEL] === 'true' && plain.labels?.[LABEL] === undefined ? true : undefined;
    });
  });
});
