import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';
import { bearer, writeTokensFile } from '../support/tokens.js';
import type { DataSource } from 'typeorm';

/**
 * Issue 33, availability: the findings as they were reported, against the compiled API under its
 * deployed heap (`--max-old-space-size=256`, as `npm run start:api`). The projection worker's
 * case is test/integration/projection-step-bytes.test.ts, the pages' byte bounds
 * test/integration/byte-bounded-pages.test.ts.
 */
const TOKENS = {
  apiserver: { name: 'kube-apiserver', token: 'avail-apiserver-0123456789abcdef01234567', roles: ['admission'], trustUserInfo: true },
  platform: { name: 'platform-admin', token: 'avail-platform-0123456789abcdef012345678', roles: ['admin'] },
  teamAdmin: { name: 'team-q-admin', token: 'avail-team-admin-0123456789abcdef0123456', roles: ['admin'], namespaces: ['team-q'] },
  team: { name: 'team-ci', token: 'avail-team-ci-0123456789abcdef0123456789ab', roles: ['admission'], namespaces: ['team-a', 'team-d', 'team-r'] },
  auditor: { name: 'auditor', token: 'avail-auditor-0123456789abcdef012345678901', roles: ['auditor'], namespaces: ['team-a', 'team-d', 'team-r'] },
};

let db: TestDatabase & { dataSource: DataSource };
let api: ApiProcess;

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlavail');
  const tokensFile = writeTokensFile(Object.values(TOKENS));
  api = await startApiProcess({ DATABASE_URL: db.url, QUOTA_LEDGER_INSECURE_DEV: 'false', TOKENS_FILE: tokensFile, DATABASE_POOL_SIZE: '4' }, 30_000, ['--max-old-space-size=256', '--max-semi-space-size=8']);
  for (const namespace of ['team-a', 'team-d', 'team-r', 'team-q']) {
    const quota = { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { 'count/configmaps': '100', pods: '0' } } };
    expect((await call('PUT', `/v1/namespaces/${namespace}/resourcequotas/objects`, quota, 'platform')).status).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  await api?.stop();
  await db?.drop();
});

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly ms: number;
}

async function call(method: string, path: string, body: unknown, who: keyof typeof TOKENS): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${api.base}${path}`, {
    method,
    headers: { ...bearer(TOKENS[who].token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, ms: performance.now() - started };
}

const json = (answer: Answer) => JSON.parse(answer.text);

/** The process's resident set now, and at its peak so far (VmHWM). */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${api.child.pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

async function stillUp(): Promise<void> {
  expect(api.child.exitCode).toBeNull();
  expect((await fetch(`${api.base}/healthz`)).status).toBe(200);
}

const review = (uid: string, namespace: string, object: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace,
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object,
    dryRun: false,
    ...extra,
  },
});

describe('HIGH: validation errors many times the request', () => {
  it('answers 40 concurrent quota PUTs with 19,000 invalid label keys with small 422s, the API answering probes meanwhile', async () => {
    const labels = Object.fromEntries(Array.from({ length: 19_000 }, (_, i) => [`k!${i}`, '']));
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { labels }, spec: { hard: { pods: '1' } } });
    const before = memory();
    let probes = 0;
    let slowestProbe = 0;
    let done = false;
    const prober = (async () => {
      while (!done) {
        const started = performance.now();
        await fetch(`${api.base}/healthz`);
        slowestProbe = Math.max(slowestProbe, performance.now() - started);
        probes++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => call('PUT', `/v1/namespaces/team-q/resourcequotas/q${i}`, body, 'teamAdmin')));
    done = true;
    await prober;
    for (const answer of answers) {
      expect([422, 429]).toContain(answer.status);
      if (answer.status === 429) continue;
      // Reported: 12 MB each. Now the first 100 causes and a count of the rest.
      expect(answer.text.length).toBeLessThan(64 * 1024);
      const status = json(answer);
      expect(status.details.causes).toHaveLength(100);
      expect(status.message).toMatch(/and 18900 more errors\]$/);
    }
    expect(answers.filter((a) => a.status === 422).length).toBeGreaterThan(20);
    await stillUp();
    const after = memory();
    console.log(`40 PUTs of 19,000 invalid labels: RSS ${Math.round(before.rss / 2 ** 20)} -> ${Math.round(after.rss / 2 ** 20)} MiB, ${probes} probes, slowest ${Math.round(slowestProbe)} ms`);
    // Reported: a probe blocked 16 s.
    expect(slowestProbe).toBeLessThan(5_000);
  }, 120_000);

  it('refuses a label set larger than 256 KiB with one error', async () => {
    const labels = Object.fromEntries(Array.from({ length: 19_000 }, (_, i) => [`key-${String(i).padStart(10, '0')}`, 'v']));
    const answer = await call('PUT', '/v1/namespaces/team-q/resourcequotas/big', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { labels }, spec: { hard: { pods: '1' } } }, 'teamAdmin');
    expect(answer.status).toBe(422);
    expect(json(answer).details.causes).toEqual([{ reason: 'FieldValueTooLong', field: 'metadata.labels', message: 'Too long: may not be more than 262144 bytes' }]);
  });

  it('answers a Namespace review with 190,000 finalizers with one small error, quickly', async () => {
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-f' }, spec: { finalizers: Array.from({ length: 190_000 }, () => 'x') } };
    const body = review('ns-1', 'team-f', namespace, { kind: { group: '', version: 'v1', kind: 'Namespace' }, resource: { group: '', version: 'v1', resource: 'namespaces' }, name: 'team-f' });
    const answer = await call('POST', '/v1/admission/validate', body, 'apiserver');
    expect(answer.status).toBe(422);
    // Reported: 52.8 MB and 2.7 s of CPU.
    expect(answer.text.length).toBeLessThan(4096);
    expect(json(answer).details.causes).toEqual([{ reason: 'FieldValueTooMany', field: 'spec.finalizers', message: 'Too many: 190000: must have at most 256 items' }]);
    expect(answer.ms).toBeLessThan(2_000);
    await stillUp();
  });
});
