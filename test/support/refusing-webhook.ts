import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ControlPlane } from './control-plane.js';

/**
 * A second validating webhook, another admission step than ours: an HTTPS server of the test that
 * refuses the requests `refuse` names (a message) and allows the rest. kube-apiserver calls every
 * validating webhook, so ours may have admitted (and reserved) what this one refuses: the object
 * is then never stored, which only the reconciler can find out.
 */
export interface ReviewRequest {
  readonly uid: string;
  readonly operation: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly resource: { readonly resource: string };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the reviewed objects, as the tests read them
  readonly object?: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly oldObject?: any;
}

export interface RefusingWebhook {
  readonly url: string;
  /** Every request it was sent, and those it refused. */
  readonly seen: ReviewRequest[];
  readonly refused: ReviewRequest[];
  /** Registers it (kubectl apply) for these resources and waits until the kube-apiserver calls it. */
  register(
    rules: readonly { apiGroups: string[]; resources: string[]; operations: string[]; scope?: string }[],
    options?: { probe?: () => Promise<unknown> },
  ): Promise<void>;
  close(): Promise<void>;
}

export async function startRefusingWebhook(
  plane: ControlPlane,
  name: string,
  refuse: (request: ReviewRequest) => string | undefined,
): Promise<RefusingWebhook> {
  const serving = plane.issueCertificate(`${name}-webhook`, { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
  const seen: ReviewRequest[] = [];
  const refused: ReviewRequest[] = [];
  const server: Server = createServer({ cert: readFileSync(serving.cert), key: readFileSync(serving.key) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: ReviewRequest }).request;
      seen.push(request);
      const message = refuse(request);
      if (message) refused.push(request);
      const response = { uid: request.uid, allowed: !message, ...(message ? { status: { code: 403, message } } : {}) };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  // As a webhook should (and ours does): kube-apiserver, not the server, closes idle connections.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/validate`;
  return {
    url,
    seen,
    refused,
    async register(rules, { probe } = {}) {
      await plane.apply(
        JSON.stringify({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name },
          webhooks: [
            {
              name: `${name}.test.example.com`,
              clientConfig: { url, caBundle: readFileSync(plane.caCert).toString('base64') },
              rules: rules.map((rule) => ({ apiVersions: ['*'], scope: '*', ...rule })),
              sideEffects: 'None',
              admissionReviewVersions: ['v1'],
              failurePolicy: 'Fail',
              timeoutSeconds: 10,
            },
          ],
        }),
      );
      // The kube-apiserver picks the configuration up from an informer, shortly.
      const deadline = Date.now() + 30_000;
      const before = seen.length;
      while (seen.length === before) {
        if (Date.now() > deadline) throw new Error(`the kube-apiserver did not call webhook ${name} within 30 s`);
        await probe?.();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // kube-apiserver keeps connections, some never used, which close() alone waits for.
        server.closeAllConnections();
      }),
  };
}
