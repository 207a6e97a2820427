import type { INestApplication } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@quota/config';
import { createAdmissionApi } from '../../apps/admission-api/src/app.js';

let app: INestApplication;
let base: string;

beforeAll(async () => {
  app = await createAdmissionApi({ ...loadConfig({}), port: 0, host: '127.0.0.1', bodyLimitBytes: 4096, logLevel: 'error' });
  await app.listen(0, '127.0.0.1');
  base = await app.getUrl();
});
afterAll(async () => {
  await app?.close();
});

describe('admission-api over HTTP', () => {
  it('answers /healthz with ok', async () => {
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
  });

  it('answers an unknown path with a Kubernetes NotFound Status', async () => {
    const response = await fetch(`${base}/v1/nothing-here`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
  });

  it('answers malformed JSON with a BadRequest Status', async () => {
    const response = await fetch(`${base}/healthz`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: expect.stringMatching(/^the request body is not valid JSON: /) });
  });

  it('answers a body over the limit with RequestEntityTooLarge', async () => {
    const response = await fetch(`${base}/healthz`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 'x'.repeat(10_000) }) });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
  });
});
