import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defineQuota,
  eventsOfObject,
  eventually,
  ledgerEvents,
  pod,
  uidOf,
  untilCounted,
  untilSettled,
  untilUsed,
} from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// Pods through kube-apiserver and our webhooks, as registered by `quotactl webhook-config`:
// kubectl's answers, the objects kube-apiserver stores, and what our ledger recorded of them.

const counts = { kubectl: 0, admitted: 0, denied: 0, dryRuns: 0 };
let stack: LedgerStack;

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] });
  console.log(`control plane ${stack.plane.version} up in ${stack.plane.timings.total} ms, our stack in ${JSON.stringify(stack.timings)}`);
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
  console.log(
    `webhook e2e: ${counts.kubectl} kubectl writes, ${counts.admitted} admitted, ${counts.denied} denied with our message, ${counts.dryRuns} server-side dry runs`,
  );
});

/** kubectl, counted; answers its exit code and output. */
async function kubectl(args: string[], input?: string) {
  counts.kubectl++;
  const result = await stack.plane.tryKubectl(args, input);
  if (result.code === 0) counts.admitted++;
  return result;
}

const OUR_DENIAL = 'Error from server (Forbidden): admission webhook "validate.quota-ledger.io" denied the request: ';
/** What `kubectl create -f -` says before the server's message. */
const CREATE_DENIAL = OUR_DENIAL.replace('(Forbidden): ', '(Forbidden): error when creating "STDIN": ');

async function managedNamespace(namespace: string, hard: Record<string, string>): Promise<void> {
  await stack.plane.createNamespace(namespace);
  await defineQuota(stack, namespace, 'compute', hard);
  await untilCounted(stack, namespace);
}

describe('pods through kube-apiserver and our webhooks', () => {
  it('stores LimitRange defaults from our mutating webhook, and charges them', async () => {
    await managedNamespace('wh-pods', { pods: '3', 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '2' });
    const limitRange = {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'defaults' },
      spec: {
        limits: [{ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '250m', memory: '128Mi' } }],
      },
    };
    expect((await stack.request('PUT', '/v1/namespaces/wh-pods/limitranges/defaults', limitRange)).status).toBe(201);

    expect((await kubectl(['run', 'web', '-n', 'wh-pods', '--image=registry.invalid/web:1', '--restart=Never'])).stdout).toBe(
      'pod/web created\n',
    );
    const stored = JSON.parse(await stack.plane.kubectl(['get', 'pod', 'web', '-n', 'wh-pods', '-o', 'json']));
    expect(stored.spec.containers[0].resources).toEqual({
      requests: { cpu: '250m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
    expect(
      await untilUsed(stack, 'wh-pods', 'compute', { pods: '1', 'requests.cpu': '250m', 'requests.memory': '128Mi', 'limits.cpu': '500m' }),
    ).toBeDefined();
  });

  it('reserves nothing for an update quota does not count, and charges a resize its increase', async () => {
    const before = (await ledgerEvents(stack, 'wh-pods')).filter((e) => e.type === 'Reserved').length;
    expect((await kubectl(['label', 'pod', 'web', '-n', 'wh-pods', 'tier=front'])).code).toBe(0);
    expect((await ledgerEvents(stack, 'wh-pods')).filter((e) => e.type === 'Reserved')).toHaveLength(before);

    // In-place resize (the pods/resize subresource), which our validate rules name.
    const resize = (cpu: string, limit = '500m') => [
      'patch',
      'pod',
      'web',
      '-n',
      'wh-pods',
      '--subresource=resize',
      '-p',
      JSON.stringify({ spec: { containers: [{ name: 'web', resources: { requests: { cpu }, limits: { cpu: limit } } }] } }),
    ];
    expect((await kubectl(resize('400m'))).code).toBe(0);
    const uid = (await uidOf(stack, 'pod', 'web', 'wh-pods')) ?? '';
    const resized = eventsOfObject(await ledgerEvents(stack, 'wh-pods'), uid)
      .filter((e) => e.type === 'Reserved')
      .at(-1);
    expect(resized?.data).toMatchObject({ operation: 'UPDATE', charged: { 'requests.cpu': '150m' } });
    await untilUsed(stack, 'wh-pods', 'compute', { 'requests.cpu': '400m' });
    // Once the reconciler has seen it stored, a further resize is charged over it (until then,
    // over the state before both: either change might never have happened).
    await eventually('the resize committed', async () =>
      eventsOfObject(await ledgerEvents(stack, 'wh-pods'), uid).some(
        (e) => e.type === 'Committed' && e.data.reservationId === resized?.data.reservationId,
      )
        ? true
        : undefined,
    );

    const tooBig = await kubectl(resize('1200m', '1200m'));
    counts.denied++;
    expect(tooBig.stderr).toBe(
      `${OUR_DENIAL}pods "web" is forbidden: exceeded quota: compute, requested: requests.cpu=800m, used: requests.cpu=400m, limited: requests.cpu=1\n`,
    );
    expect(
      JSON.parse(await stack.plane.kubectl(['get', 'pod', 'web', '-n', 'wh-pods', '-o', 'json'])).spec.containers[0].resources.requests.cpu,
    ).toBe('400m');
  });

  it("denies a create over the quota with kubectl's error carrying our message, and stores nothing", async () => {
    for (const name of ['web-2', 'web-3'])
      expect((await kubectl(['create', '-f', '-'], pod(name, 'wh-pods', { cpu: '100m', memory: '64Mi' }))).code).toBe(0);
    const denied = await kubectl(['create', '-f', '-'], pod('web-4', 'wh-pods', { cpu: '100m', memory: '64Mi' }));
    counts.denied++;
    expect(denied.code).toBe(1);
    expect(denied.stderr).toBe(
      `${CREATE_DENIAL}pods "web-4" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=3, limited: pods=3\n`,
    );
    expect(await uidOf(stack, 'pod', 'web-4', 'wh-pods')).toBeUndefined();
    // kubectl printed our near-limit warning when the third pod filled the quota.
  });

  it('writes nothing in our ledger for kubectl --dry-run=server, yet decides (a denial is still one)', async () => {
    const before = await untilSettled(stack, 'wh-pods');
    const dry = async (args: string[], input?: string) => {
      counts.dryRuns++;
      return kubectl([...args, '--dry-run=server'], input);
    };
    expect((await dry(['label', 'pod', 'web', '-n', 'wh-pods', 'tier=back', '--overwrite'])).code).toBe(0);
    expect((await dry(['delete', 'pod', 'web-2', '-n', 'wh-pods'])).stdout).toBe('pod "web-2" deleted (server dry run)\n');
    const over = await dry(['create', '-f', '-'], pod('web-5', 'wh-pods'));
    expect(over.stderr).toContain(
      `${CREATE_DENIAL}pods "web-5" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=3, limited: pods=3`,
    );
    await stack.plane.kubectl(['delete', 'pod', 'web-3', '-n', 'wh-pods', '--wait=false']);
    await untilUsed(stack, 'wh-pods', 'compute', { pods: '2' });
    const fits = await dry(['create', '-f', '-'], pod('web-6', 'wh-pods', { cpu: '100m', memory: '64Mi' }));
    expect(fits.stdout).toBe('pod/web-6 created (server dry run)\n');

    // web-3's release, and nothing of the dry runs.
    const written = (await ledgerEvents(stack, 'wh-pods')).slice(before.length);
    expect(written.map((e) => [e.type, e.data.reason])).toEqual([['Released', 'deleted']]);
    expect(await uidOf(stack, 'pod', 'web-2', 'wh-pods')).toBeDefined();
    const decisions = await stack.request('GET', '/v1/namespaces/wh-pods/decisions?dryRun=true');
    expect(decisions.body.items.map((d: { name: string; allowed: boolean }) => [d.name, d.allowed])).toEqual(
      expect.arrayContaining([
        ['web-5', false],
        ['web-6', true],
      ]),
    );
  });

  it('charges a pod created with generateName under the name kube-apiserver generated', async () => {
    const created = await kubectl(
      ['create', '-o', 'name', '-f', '-'],
      pod('batch-', 'wh-pods', { cpu: '100m', memory: '64Mi', generateName: true }),
    );
    const name = created.stdout.trim().replace('pod/', '');
    expect(name).toMatch(/^batch-[a-z0-9]{5}$/);
    const uid = (await uidOf(stack, 'pod', name, 'wh-pods')) ?? '';
    const events = await eventually('its reservation committed', async () => {
      const mine = eventsOfObject(await ledgerEvents(stack, 'wh-pods'), uid);
      return mine.some((e) => e.type === 'Committed') ? mine : undefined;
    });
    expect(events[0]?.data.object).toMatchObject({ kind: 'Pod', name, uid });
  });

  it('records the kube-apiserver as the actor and the kubectl user as onBehalfOf', async () => {
    const decisions = await stack.request('GET', '/v1/namespaces/wh-pods/decisions?dryRun=false&limit=5');
    expect(decisions.body.items.length).toBeGreaterThan(0);
    for (const decision of decisions.body.items) expect(decision).toMatchObject({ requester: 'kube-apiserver', onBehalfOf: 'admin' });
  });

  it("refuses AdmissionReviews sent with a tenant's admission token (403): the webhook role is the kube-apiserver's", async () => {
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'forged-1',
        operation: 'DELETE',
        resource: { group: '', version: 'v1', resource: 'pods' },
        namespace: 'wh-pods',
        name: 'web',
      },
    };
    const forged = await stack.request('POST', '/v1/admission/validate', review, stack.tokens.admission);
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ kind: 'Status', reason: 'Forbidden' });
  });

  it('admits pods at once in a namespace deleted and created again under the same name', async () => {
    await managedNamespace('wh-again', { pods: '2' });
    expect((await kubectl(['run', 'first', '-n', 'wh-again', '--image=registry.invalid/x:1', '--restart=Never'])).code).toBe(0);
    await stack.plane.kubectl(['delete', 'namespace', 'wh-again', '--timeout=60s']);
    // The reconciler's listing records the Namespace gone (and releases its pod).
    await eventually('the namespace recorded gone', async () =>
      (await ledgerEvents(stack, 'wh-again')).some((e) => e.type === 'NamespaceRemoved') ? true : undefined,
    );
    await stack.plane.kubectl(['create', 'namespace', 'wh-again']);
    const again = await kubectl(['run', 'second', '-n', 'wh-again', '--image=registry.invalid/x:1', '--restart=Never']);
    expect(again.stderr).toBe('');
    expect(again.stdout).toBe('pod/second created\n');
    await untilUsed(stack, 'wh-again', 'compute', { pods: '1' });
  });
});
