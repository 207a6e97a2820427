import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineQuota, eventually, eventsOfObject, ledgerEvents, pod, uidOf, untilCounted } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// A managed control plane's way (docs/install/managed-control-planes.md): the kube-apiserver has
// no webhook credential in its AdmissionConfiguration, so it calls the webhooks with neither a
// token nor a client certificate. Registered at the API's unauthenticated listener
// (WEBHOOK_UNAUTHENTICATED_PORT), admission works as the principal `unauthenticated:kube-apiserver`,
// the user's name is not taken from the review, and the reconciler settles what it reserved.
// Registered at the main port, the same calls are 401s, which `failurePolicy: Fail` makes refusals.

let stack: LedgerStack;
const counts = { admitted: 0, denied: 0, committed: 0, refusedAtMainPort: 0 };

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] }, { webhookAuth: 'none' });
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
  console.log(
    `webhook unauthenticated e2e: ${counts.admitted} admitted, ${counts.denied} denied and ${counts.committed} committed through a kube-apiserver without webhook credentials; ${counts.refusedAtMainPort} refused when registered at the main port`,
  );
});

describe('a kube-apiserver without webhook credentials (managed control plane)', () => {
  it('is served by the unauthenticated listener as unauthenticated:kube-apiserver, with no onBehalfOf', async () => {
    await stack.plane.createNamespace('managed');
    await defineQuota(stack, 'managed', 'compute', { pods: '1' });
    await untilCounted(stack, 'managed');
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('web', 'managed'))).code).toBe(0);
    counts.admitted++;
    const denied = await stack.plane.tryKubectl(['create', '-f', '-'], pod('web-2', 'managed'));
    expect(denied.stderr).toContain(
      'admission webhook "validate.quota-ledger.io" denied the request: pods "web-2" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1',
    );
    counts.denied++;
    const decisions = (await stack.request('GET', '/v1/namespaces/managed/decisions?dryRun=false')).body.items as {
      name: string;
      requester: string;
      onBehalfOf?: string;
    }[];
    expect(decisions.map((d) => [d.name, d.requester, d.onBehalfOf])).toEqual([
      ['web', 'unauthenticated:kube-apiserver', undefined],
      ['web-2', 'unauthenticated:kube-apiserver', undefined],
    ]);
  });

  it('has what it reserved committed by the reconciler from the listing', async () => {
    const uid = await uidOf(stack, 'pod', 'web', 'managed');
    expect(uid).toBeDefined();
    const settled = await eventually('the pod web committed', async () => {
      const events = eventsOfObject(await ledgerEvents(stack, 'managed'), uid!);
      return events.some((e) => e.type === 'Committed') ? events : undefined;
    });
    expect(settled.map((e) => e.type)).toEqual(['Reserved', 'Committed']);
    counts.committed++;
  });

  it('is refused at the main port, where a call without credentials is a 401 and Fail refuses the write', async () => {
    const atMainPort = (await stack.webhookConfig(['--failure-policy', 'Fail'])).replaceAll(
      `127.0.0.1:${stack.unauthenticatedPort}`,
      `127.0.0.1:${stack.port}`,
    );
    expect(atMainPort).toContain(`https://127.0.0.1:${stack.port}/`);
    await stack.plane.apply(atMainPort);
    try {
      const refused = await eventually('a create refused by the main port', async () => {
        const result = await stack.plane.tryKubectl(['create', '-f', '-'], pod('web-3', 'managed'));
        if (result.code === 0) await stack.plane.tryKubectl(['delete', 'pod', 'web-3', '-n', 'managed', '--wait=false']);
        return result.code !== 0 && /failed calling webhook/.test(result.stderr) ? result : undefined;
      });
      expect(refused.stderr).toMatch(/failed calling webhook "(validate|mutate)\.quota-ledger\.io"/);
      // The API's 401 Status, as the kube-apiserver quotes it.
      expect(refused.stderr).toContain('failed to call webhook: authentication required');
      counts.refusedAtMainPort++;
    } finally {
      await stack.registerWebhooks();
    }
  });
});
