import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineQuota, pod, untilCounted } from '../support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../support/ledger-stack.js';

// README, step 5, the other way: the kube-apiserver presents a client certificate (client-
// certificate and client-key in its admission kubeconfig) instead of the webhook token, and the
// API accepts it through TLS_CLIENT_CA_FILE as the webhook role, named by the certificate's CN.

let stack: LedgerStack;
const counts = { admitted: 0, denied: 0 };

beforeAll(async () => {
  stack = await startLedgerCluster({ controllers: ['namespace'] }, { webhookAuth: 'client-certificate' });
});

afterAll(async () => {
  await stack?.stop();
  await stack?.plane.stop();
  console.log(
    `webhook client certificate e2e: ${counts.admitted} admitted and ${counts.denied} denied through a kube-apiserver authenticated by its certificate`,
  );
});

describe('the kube-apiserver authenticated by a client certificate', () => {
  it('is the webhook role, recorded by its CN, with the kubectl user on whose behalf it asks', async () => {
    await stack.plane.createNamespace('cert');
    await defineQuota(stack, 'cert', 'compute', { pods: '1' });
    await untilCounted(stack, 'cert');
    expect((await stack.plane.tryKubectl(['create', '-f', '-'], pod('web', 'cert'))).code).toBe(0);
    counts.admitted++;
    const denied = await stack.plane.tryKubectl(['create', '-f', '-'], pod('web-2', 'cert'));
    expect(denied.stderr).toContain(
      'admission webhook "validate.quota-ledger.io" denied the request: pods "web-2" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1',
    );
    counts.denied++;
    const decisions = (await stack.request('GET', '/v1/namespaces/cert/decisions?dryRun=false')).body.items as {
      name: string;
      requester: string;
      onBehalfOf?: string;
    }[];
    expect(decisions.map((d) => [d.name, d.requester, d.onBehalfOf])).toEqual([
      ['web', 'apiserver-webhook-client', 'admin'],
      ['web-2', 'apiserver-webhook-client', 'admin'],
    ]);
  });
});
