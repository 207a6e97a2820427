import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@quota/config';
import { listenUnauthenticatedWebhook } from '../../apps/admission-api/src/common/tls/unauthenticated-webhook.js';
import { startApi, type RunningApi } from '../support/api.js';
import { createTestPki } from '../support/certificates.js';
import { freePort } from '../support/processes.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

/**
 * Managed control planes: the API servers of EKS, GKE and AKS present no credential to a
 * webhook. WEBHOOK_UNAUTHENTICATED_PORT opens a second HTTPS listener serving the webhook routes
 * only, to whoever reaches it, as `unauthenticated:kube-apiserver` (userInfo never trusted,
 * limited by address). (The real kube-apiserver calling it without credentials:
 * test/kubernetes.)
 */
/** An answer's status and parsed body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
type Answer = { status: number; body: any };
const ADMIN = 'unauth-admin-0123456789abcdef0123456789ab';
let api: RunningApi;
let ca: Buffer;
let port: number;

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        ca,
        servername: 'localhost',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
      },
      (res) => {
        let data = '';
        res.on('data', (chunk: Buffer) => (data += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

let seq = 0;
const review = (namespace: string, username = 'jane@example.com') => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `unauth-${++seq}`,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace,
    name: `p-${seq}`,
    operation: 'CREATE',
    userInfo: { username },
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p-${seq}`, namespace, uid: `u-${seq}` },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    },
    dryRun: false,
  },
});

beforeAll(async () => {
  const pki = createTestPki();
  const serving = pki.issue('server', { commonName: 'quota-ledger', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  ca = readFileSync(pki.caCert);
  port = await freePort();
  api = await startApi(
    {
      insecureDev: false,
      tokensFile: writeTokensFile([{ name: 'admin', token: ADMIN, roles: ['admin', 'auditor'] }]),
      tls: {
        certFile: serving.cert,
        keyFile: serving.key,
        clientCaFile: undefined,
        clientCertRole: 'webhook',
        clientCertTrustUserInfo: true,
      },
      namespaceLabelsFrom: 'cluster',
      webhookUnauthenticatedPort: port,
      rateLimitPerSecond: 1,
      rateLimitBurst: 5,
      webhookUnauthenticatedRate: { perSecond: 1, burst: 5 },
    },
    'qlunauth',
  );
  await listenUnauthenticatedWebhook(api.app, {
    ...loadConfig({}),
    host: '127.0.0.1',
    tls: {
      certFile: serving.cert,
      keyFile: serving.key,
      clientCaFile: undefined,
      clientCertRole: 'webhook',
      clientCertTrustUserInfo: true,
    },
    webhookUnauthenticatedPort: port,
    requestTimeoutMs: 30_000,
  });
});
afterAll(async () => {
  await api?.close();
});

describe('the unauthenticated webhook listener', () => {
  it('answers reviews with no credential, recording the unauthenticated API server as the actor and no user it claims', async () => {
    const { status, body } = await post('/v1/admission/validate', review('team-u'));
    expect(status).toBe(200);
    expect(body.response).toMatchObject({ allowed: true });
    expect((await post('/v1/admission/mutate', review('team-u'))).body.response).toMatchObject({ allowed: true });
    // A managed namespace, so that decisions are recorded.
    const headers = { ...bearer(ADMIN), 'content-type': 'application/json' };
    const https = (path: string, method: string, body?: unknown) => fetchTls(path, method, headers, body);
    expect(
      (
        await https('/v1/namespaces/team-u/resourcequotas/compute', 'PUT', {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          spec: { hard: { pods: '5' } },
        })
      ).status,
    ).toBe(201);
    const allowed = await post('/v1/admission/validate', review('team-u', 'system:masters-admin'));
    expect(allowed.body.response.allowed).toBe(true);
    const decisions = await https('/v1/namespaces/team-u/decisions?order=newest&limit=1', 'GET');
    expect(decisions.body.items[0]).toMatchObject({ requester: 'unauthenticated:kube-apiserver' });
    expect(decisions.body.items[0]).not.toHaveProperty('onBehalfOf');
  });

  it('serves nothing else: reservations, reads and definitions are 404 there, whatever token comes along', async () => {
    for (const path of ['/v1/namespaces/team-u/reservations', '/v1/namespaces/team-u/resourcequotas/compute', '/v1/admission/validate/x']) {
      const answer = await post(path, { kind: 'Pod', resources: { pods: '1' } }, bearer(ADMIN));
      expect(answer.status, path).toBe(404);
      expect(answer.body).toMatchObject({ kind: 'Status', code: 404 });
    }
  });

  it('leaves the main listener as it was: a review there still needs the webhook role', async () => {
    const main = await fetchTls(
      '/v1/admission/validate',
      'POST',
      { 'content-type': 'application/json' },
      review('team-u'),
      Number(new URL(api.base).port),
    );
    expect(main.status).toBe(401);
  });
  // Last: the address's bucket is then spent, on both listeners alike.
  it('limits by address at its own rate (WEBHOOK_UNAUTHENTICATED_RATE_PER_SECOND), not as the exempt kube-apiserver of the main listener', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12 && !statuses.includes(429); i++) statuses.push((await post('/v1/admission/validate', review('team-v'))).status);
    expect(statuses).toContain(429);
  });
});

describe('its configuration', () => {
  it.each([
    [{ WEBHOOK_UNAUTHENTICATED_PORT: '8443' }, 'needs TLS_CERT_FILE'],
    [{ WEBHOOK_UNAUTHENTICATED_PORT: '8443', TLS_CERT_FILE: 'c', TLS_KEY_FILE: 'k' }, 'needs NAMESPACE_LABELS_FROM=cluster'],
    [
      { WEBHOOK_UNAUTHENTICATED_PORT: '8443', PORT: '8443', TLS_CERT_FILE: 'c', TLS_KEY_FILE: 'k', NAMESPACE_LABELS_FROM: 'cluster' },
      'must differ from PORT',
    ],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

function fetchTls(path: string, method: string, headers: Record<string, string>, body?: unknown, onPort?: number): Promise<Answer> {
  const target = onPort ?? Number(new URL(api.base).port);
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: target,
        path,
        method,
        ca,
        servername: 'localhost',
        agent: false,
        headers: { ...headers, ...(text ? { 'content-length': Buffer.byteLength(text) } : {}) },
      },
      (res) => {
        let data = '';
        res.on('data', (chunk: Buffer) => (data += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}
