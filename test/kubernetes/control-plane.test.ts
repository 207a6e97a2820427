import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki } from '../support/certificates.js';
import { kubernetesVersions, startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { runKubectl } from '../support/kubectl.js';
import { isAlive } from '../support/supervised.js';
import { until } from '../support/wait.js';

// A real kube-apiserver, etcd and kube-controller-manager (npm run test:kubernetes builds them).
// The controller manager runs the serviceaccount controller, so the ServiceAccount admission plugin
// stays on as in a real cluster and every namespace gets its `default` ServiceAccount; and
// clusterrole-aggregation, without which the view ClusterRole grants nothing.
const CONTROLLERS = ['resourcequota', 'namespace', 'serviceaccount', 'serviceaccount-token', 'clusterrole-aggregation'];
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const pod = (name: string, cpu: string): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'smoke' },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1', resources: { requests: { cpu }, limits: { cpu } } }] },
  });

const quota = JSON.stringify({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'compute', namespace: 'smoke' },
  spec: { hard: { pods: '2', 'requests.cpu': '500m' } },
});

/** A validating webhook (its own CA) that records the Authorization header the apiserver sends. */
function startWebhook(): Promise<{ server: Server; port: number; caBundle: string; authorizations: string[]; pkiDir: string }> {
  const pki = createTestPki();
  const { cert, key } = pki.issue('webhook', { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
  const authorizations: string[] = [];
  const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      authorizations.push(req.headers.authorization ?? '');
      const review = JSON.parse(body) as { request: { uid: string; name: string } };
      const allowed = review.request.name !== 'denied-by-webhook';
      const response = {
        uid: review.request.uid,
        allowed,
        ...(allowed ? {} : { status: { code: 403, message: 'the test webhook says no' } }),
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        caBundle: readFileSync(pki.caCert).toString('base64'),
        authorizations,
        pkiDir: pki.dir,
      }),
    ),
  );
}

const usedPods = async (plane: ControlPlane): Promise<string | undefined> =>
  (await plane.tryKubectl(['get', 'resourcequota', 'compute', '-n', 'smoke', '-o', 'jsonpath={.status.used.pods}'])).stdout || undefined;

describe('a control plane built from the Kubernetes Go modules', () => {
  let plane: ControlPlane;
  let webhook: Awaited<ReturnType<typeof startWebhook>>;

  beforeAll(async () => {
    webhook = await startWebhook();
    plane = await startControlPlane({
      controllers: CONTROLLERS,
      admission: {
        configuration: { validatingWebhooks: [{ server: `127.0.0.1:${webhook.port}`, credentials: { token: 'webhook-secret' } }] },
      },
    });
    console.log(`control plane ${plane.version} up in ${plane.timings.total} ms: ${JSON.stringify(plane.timings)}`);
  });

  afterAll(async () => {
    const stopping = Date.now();
    await plane?.stop();
    console.log(`control plane stopped in ${Date.now() - stopping} ms`);
    webhook?.server.close();
    if (webhook) rmSync(webhook.pkiDir, { recursive: true, force: true });
  });

  it('serves the release pinned in versions.env, to /usr/bin/kubectl', async () => {
    expect(plane.version).toBe(kubernetesVersions().KUBERNETES_VERSION);
    const version = JSON.parse(await plane.kubectl(['version', '-o', 'json'])) as { serverVersion: { gitVersion: string } };
    expect(version.serverVersion.gitVersion).toBe(plane.version);
  });

  it('fills a ResourceQuota status from the controller manager and denies the pod over hard', async () => {
    await plane.createNamespace('smoke');
    await plane.apply(quota);
    // status.used is first written by the resourcequota controller (admission waits for it).
    expect(await until('the quota controller to count the namespace', () => usedPods(plane))).toBe('0');

    await plane.kubectl(['create', '-f', '-'], pod('first', '200m'));
    await plane.kubectl(['create', '-f', '-'], pod('second', '200m'));
    expect(await usedPods(plane)).toBe('2');

    const denied = await plane.tryKubectl(['create', '-f', '-'], pod('third', '200m'));
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(
      /exceeded quota: compute, requested: pods=1,requests\.cpu=200m, used: pods=2,requests\.cpu=400m, limited: pods=2,requests\.cpu=500m/,
    );

    // Admission never gives back: the controller recounts after a delete.
    await plane.kubectl(['delete', 'pod', 'first', '-n', 'smoke', '--wait=false']);
    await until('the quota controller to see the delete', async () => ((await usedPods(plane)) === '1' ? true : undefined));
  });

  it('mints ServiceAccount tokens bound to a ClusterRole', async () => {
    const token = await plane.tokenFor({ namespace: 'smoke', name: 'reader' }, { clusterRole: 'view' });
    const kubeconfig = plane.kubeconfigForToken('reader', token);
    expect((await runKubectl(kubeconfig, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'])).stdout).toBe(
      'system:serviceaccount:smoke:reader',
    );
    expect((await runKubectl(kubeconfig, ['get', 'resourcequota', '-n', 'smoke', '-o', 'name'])).stdout.trim()).toBe(
      'resourcequota/compute',
    );
    const create = await runKubectl(kubeconfig, ['auth', 'can-i', 'create', 'pods', '-n', 'smoke']);
    expect(create.stdout.trim()).toBe('no');
  });

  it('calls admission webhooks with the credentials of its AdmissionConfiguration', async () => {
    await plane.createNamespace('webhooked');
    await plane.apply(
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'test-webhook' },
        webhooks: [
          {
            name: 'test.quota-ledger.dev',
            clientConfig: { url: `https://127.0.0.1:${webhook.port}/validate`, caBundle: webhook.caBundle },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'webhooked' } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            failurePolicy: 'Fail',
          },
        ],
      }),
    );
    // The apiserver picks the configuration up from its informer, shortly.
    const denial = await until('the webhook to be called', async () => {
      const result = await plane.tryKubectl(['create', 'configmap', 'denied-by-webhook', '-n', 'webhooked']);
      return result.code !== 0
        ? result.stderr
        : (await plane.kubectl(['delete', 'configmap', 'denied-by-webhook', '-n', 'webhooked']), undefined);
    });
    expect(denial).toContain('the test webhook says no');
    await plane.kubectl(['create', 'configmap', 'allowed', '-n', 'webhooked']);
    expect(webhook.authorizations.at(-1)).toBe('Bearer webhook-secret');
  });
});

describe('a control plane whose test process is SIGKILLed', () => {
  it('leaves no process and no directory behind', async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', 'test/kubernetes/fixtures/hold-control-plane.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      holder.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
      });
      holder.once('exit', (code) => reject(new Error(`the holder exited with ${code} before its control plane was up`)));
    });
    const { pids, dir } = JSON.parse(line) as { pids: number[]; dir: string };
    expect(pids).toHaveLength(3);
    expect(pids.every(isAlive)).toBe(true);

    holder.kill('SIGKILL');
    await exited;
    const killed = Date.now();
    await until('the control plane to be gone', async () => (pids.some(isAlive) || existsSync(dir) ? undefined : true), 5_000);
    console.log(`after SIGKILL: processes and ${dir} gone in ${Date.now() - killed} ms`);
  });
});
