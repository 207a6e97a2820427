import { copyFileSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { createTestPki, type TestPki } from '../support/certificates.js';
import { bearer, writeTokensFile } from '../support/tokens.js';
import { until } from '../support/wait.js';

interface Answer {
  status: number;
  body: string;
  peer: PeerCertificate;
}

function get(
  port: number,
  path: string,
  options: { ca: Buffer; cert?: Buffer; key?: Buffer; headers?: Record<string, string> },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        headers: options.headers,
        agent: false,
        servername: 'localhost',
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peer }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const ADMIN = 'tls-admin-0123456789abcdef0123456789abcdef';
let pki: TestPki;
let api: RunningApi;
let port: number;
let serving: { cert: string; key: string };

beforeAll(async () => {
  pki = createTestPki();
  const first = pki.issue('server-1', { commonName: 'quota-ledger', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  // The API watches these paths; the test swaps their contents to rotate the certificate.
  serving = { cert: `${pki.dir}/serving.crt`, key: `${pki.dir}/serving.key` };
  copyFileSync(first.cert, serving.cert);
  copyFileSync(first.key, serving.key);
  api = await startApi(
    {
      insecureDev: false,
      tokensFile: writeTokensFile([{ name: 'admin', token: ADMIN, roles: ['admin'] }]),
      tls: {
        certFile: serving.cert,
        keyFile: serving.key,
        clientCaFile: pki.caCert,
        clientCertRole: 'admission',
        clientCertTrustUserInfo: true,
      },
    },
    'qltls',
  );
  port = Number(new URL(api.base).port);
});
afterAll(async () => {
  await api?.close();
});

describe('HTTPS', () => {
  it('serves with the configured certificate, verified against the CA', async () => {
    const answer = await get(port, '/healthz', { ca: readFileSync(pki.caCert) });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('ok');
    expect(answer.peer.subject.CN).toBe('quota-ledger');
  });

  it('does not answer plain HTTP', async () => {
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('authenticates the kube-apiserver by its client certificate, with the configured role', async () => {
    const client = pki.issue('apiserver', { commonName: 'kube-apiserver', client: true });
    const tls = { ca: readFileSync(pki.caCert), cert: readFileSync(client.cert), key: readFileSync(client.key) };
    expect((await get(port, '/v1/namespaces/team-a/resourcequotas', tls)).status).toBe(200);
    // The certificate's role is admission: quota writes stay forbidden, and the message names it.
    const answer = await get(port, '/v1/namespaces/team-a/events', tls);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).message).toContain('"kube-apiserver"');
  });

  it('refuses a client certificate from another CA (401), while a bearer token still works', async () => {
    const other = createTestPki().issue('stranger', { commonName: 'stranger', client: true });
    const tls = { ca: readFileSync(pki.caCert), cert: readFileSync(other.cert), key: readFileSync(other.key) };
    expect((await get(port, '/v1/namespaces/team-a/resourcequotas', tls)).status).toBe(401);
    expect((await get(port, '/v1/namespaces/team-a/resourcequotas', { ...tls, headers: bearer(ADMIN) })).status).toBe(200);
  });

  it('picks up a renewed certificate without a restart', async () => {
    const renewed = pki.issue('server-2', { commonName: 'quota-ledger-renewed', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    copyFileSync(renewed.key, serving.key);
    copyFileSync(renewed.cert, serving.cert);
    const served = await until(
      'the renewed certificate is served',
      async () => {
        const { peer } = await get(port, '/healthz', { ca: readFileSync(pki.caCert) });
        return peer.subject.CN === 'quota-ledger-renewed' ? peer : undefined;
      },
      20_000,
    );
    expect(served.serialNumber).not.toBe('01');
  });
});
