import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

let api: RunningApi;
let base: string;

beforeAll(async () => {
  api = await startApi({ bodyLimitBytes: 4096 }, 'qlhealth');
  base = api.base;
});
afterAll(async () => {
  await api?.close();
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
    const response = await fetch(`${base}/v1/namespaces/team-a/resourcequotas/q`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      message: expect.stringMatching(/^the request body is not valid JSON: /),
    });
  });

  it('answers a body over the limit with RequestEntityTooLarge', async () => {
    const response = await fetch(`${base}/v1/namespaces/team-a/resourcequotas/q`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 'x'.repeat(10_000) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
  });

  it('never reads a body sent where none is taken: a probe answers as without one, an unknown path 404', async () => {
    const junk = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' };
    expect((await fetch(`${base}/healthz`, { ...junk, method: 'GET', body: undefined })).status).toBe(200);
    expect((await fetch(`${base}/healthz`, junk)).status).toBe(404);
    expect((await fetch(`${base}/v1/nothing-here`, junk)).status).toBe(404);
  });
});
