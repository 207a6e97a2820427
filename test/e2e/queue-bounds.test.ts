import { loadConfig } from '@quota/config';
import { ClusterWriter, LedgerCommands } from '@quota/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { admissionReview } from '../support/review.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

// A waiter that can never fit held a namespace for up to an hour: quota example.com/x: 10, a
// reserve of 11 (or 1,000,000 under a ClusterResourceQuota of 10) with a wait of 3600 s at
// priority 1000 was queued, and once it was blocking (QUEUE_PASS_SECONDS, 0 here) every other
// principal's request for the resource was refused 403 ("… is first in line") until its
// deadline. Now it is refused at once as Kubernetes refuses it, a waiter a lowered limit leaves
// unfit leaves the queue, and one principal's blocking waiters hold back at most half a quota.
const TOKENS = {
  admin: { name: 'ops', token: 'ops-token', roles: ['admin', 'admission'] },
  greedy: { name: 'greedy-runner', token: 'greedy-token', roles: ['admission'] },
  other: { name: 'other-runner', token: 'other-token', roles: ['admission'] },
  kube: { name: 'kube-apiserver', token: 'kube-token', roles: ['webhook'] },
};
const GREEDY = bearer(TOKENS.greedy.token);
const OTHER = bearer(TOKENS.other.token);
const HARD = { 'example.com/x': '10' };

let api: RunningApi;
let ledger: LedgerCommands;
beforeAll(async () => {
  const queue = { ...loadConfig({}).queue, passSeconds: 0, sweepIntervalMs: 200 };
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)), queue }, 'qlqbounds');
  ledger = api.app.get(LedgerCommands);
});
afterAll(async () => {
  await api?.close();
});

const widgets = (x: string, extra: Record<string, unknown> = {}) => ({
  kind: 'Job',
  resource: 'jobs.batch.example.com',
  name: 'train',
  resources: { 'example.com/x': x },
  ...extra,
});
const reserve = (namespace: string, body: unknown, headers: Record<string, string>) =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, body, headers);
const WAIT = { wait: { seconds: 3600, priority: 1000 } };

describe('a wait that can never fit, over HTTP', () => {
  it.each([
    ['a ResourceQuota of 10', '11', 'never-rq', false],
    ['a ClusterResourceQuota of 10', '1000000', 'never-crq', true],
  ])(
    'under %s, a wait for %s is refused at once (403, the exceeded-quota message) and holds no one back',
    async (_name, x, namespace, shared) => {
      if (shared) {
        const writer = api.app.get(ClusterWriter);
        await writer.putNamespace({ name: namespace, metadata: { labels: { tenant: 'never' } } }, { actor: 'test' });
        await writer.putSharedQuota(
          {
            ref: { kind: 'ClusterResourceQuota', name: 'never' },
            spec: { hard: HARD },
            selector: { labels: { matchLabels: { tenant: 'never' } } },
          },
          { actor: 'test' },
        );
      } else {
        await ledger.putQuota(namespace, { name: 'x', spec: { hard: HARD } }, { actor: 'test' });
      }
      const waited = await reserve(namespace, widgets(x, WAIT), GREEDY);
      expect(waited.status).toBe(403);
      const quota = shared ? 'exceeded cluster quota: never' : 'exceeded quota: x';
      expect(waited.body).toMatchObject({
        kind: 'Status',
        code: 403,
        reason: 'Forbidden',
        message: `jobs.batch.example.com "train" is forbidden: ${quota}, requested: example.com/x=${x === '1000000' ? '1M' : x}, used: example.com/x=0, limited: example.com/x=10`,
        details: { denial: { kind: 'Exceeded' } },
      });
      // As if it had no wait.
      const plain = await reserve(namespace, widgets(x), GREEDY);
      expect(plain.status).toBe(403);
      expect(plain.body.message).toBe(waited.body.message);
      expect((await api.request('GET', `/v1/namespaces/${namespace}/queue`, undefined, OTHER)).body.items).toEqual([]);
      expect((await reserve(namespace, widgets('1'), OTHER)).status).toBe(201);
    },
  );

  it.each([
    ['a ResourceQuota', 'lowered-rq', false],
    ['a ClusterResourceQuota', 'lowered-crq', true],
  ])(
    'lets a queued waiter go, with the reason its watch reads, when the hard limit of %s is lowered below its request',
    async (_name, namespace, shared) => {
      const writer = api.app.get(ClusterWriter);
      const limit = async (x: string) => {
        if (!shared)
          return void (await ledger.putQuota(namespace, { name: 'x', spec: { hard: { 'example.com/x': x } } }, { actor: 'test' }));
        await writer.putSharedQuota(
          {
            ref: { kind: 'ClusterResourceQuota', name: 'lowered' },
            spec: { hard: { 'example.com/x': x } },
            selector: { labels: { matchLabels: { tenant: 'lowered' } } },
          },
          { actor: 'test' },
        );
      };
      if (shared) await writer.putNamespace({ name: namespace, metadata: { labels: { tenant: 'lowered' } } }, { actor: 'test' });
      await limit('10');
      expect((await reserve(namespace, widgets('4'), GREEDY)).status).toBe(201);
      const queued = await reserve(namespace, widgets('7', WAIT), GREEDY);
      expect(queued.status).toBe(202);
      const watch = api.request(
        'GET',
        `/v1/namespaces/${namespace}/reservations/${queued.body.id}?watch=true&timeoutSeconds=10`,
        undefined,
        GREEDY,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      await limit('6');
      const ended = await watch;
      expect(ended.status).toBe(200);
      expect(ended.body).toMatchObject({
        id: queued.body.id,
        state: 'expired',
        reason: `can never be admitted: it asks for example.com/x=7, more than the hard limit of quota ${shared ? 'lowered' : 'x'} (example.com/x=6)`,
      });
      expect((await api.request('GET', `/v1/namespaces/${namespace}/queue`, undefined, OTHER)).body.items).toEqual([]);
    },
  );
});

describe("what one principal's blocking waiters hold back, over HTTP", () => {
  it('lets another principal past a waiter asking for more than QUEUE_BLOCK_SHARE_PERCENT (50) of the quota, not past one within it', async () => {
    await ledger.putQuota('share', { name: 'x', spec: { hard: HARD } }, { actor: 'test' });
    const held = await reserve('share', widgets('9'), GREEDY);
    expect(held.status).toBe(201);
    const big = await reserve('share', widgets('6', WAIT), GREEDY);
    expect(big.status).toBe(202);
    // Blocking by the pass bound at once (QUEUE_PASS_SECONDS=0), but 6 of 10 is past its share.
    const passed = await reserve('share', widgets('1'), OTHER);
    expect(passed.status).toBe(201);
    await api.request('DELETE', `/v1/namespaces/share/reservations/${passed.body.id}`, undefined, OTHER);
    const within = await reserve('share', widgets('5', { wait: { seconds: 3600 } }), GREEDY);
    expect(within.status).toBe(202);
    const held2 = await reserve('share', widgets('1'), OTHER);
    expect(held2.status).toBe(403);
    expect(held2.body.message).toContain(`queued reservation ${within.body.id as string}`);
  });
});

describe('pods behind a blocking waiter, over HTTP', () => {
  const podReview = (name: string, cpu: string) =>
    admissionReview({
      uid: `review-${name}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name,
      namespace: 'pods-wait',
      operation: 'CREATE',
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'pods-wait', uid: `uid-${name}` },
        spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu } } }] },
      },
    });
  const validate = async (name: string, cpu: string) =>
    (await api.request('POST', '/v1/admission/validate', podReview(name, cpu), bearer(TOKENS.kube.token))).body.response;

  it("refuses a pod's review that fits but takes the room a blocking waiter waits for; the holder's release admits the waiter, not the pods", async () => {
    await ledger.putQuota('pods-wait', { name: 'compute', spec: { hard: { cpu: '4' } } }, { actor: 'test' });
    const cpu = (name: string, amount: string, extra: Record<string, unknown> = {}) => ({
      kind: 'Job',
      resource: 'jobs.batch.example.com',
      name,
      resources: { cpu: amount },
      ...extra,
    });
    const holder = await reserve('pods-wait', cpu('holder', '3'), OTHER);
    expect(holder.status).toBe(201);
    const waiter = await reserve('pods-wait', cpu('train', '2', { wait: { seconds: 3600 } }), GREEDY);
    expect(waiter.status).toBe(202);
    // Blocking at once (QUEUE_PASS_SECONDS=0); 1 CPU would fit, but it is the waiter's.
    expect(await validate('web-1', '1')).toMatchObject({
      allowed: false,
      status: { code: 403, message: expect.stringContaining(`pods "web-1" is forbidden: queued reservation ${waiter.body.id as string}`) },
    });
    expect(
      (await api.request('DELETE', `/v1/namespaces/pods-wait/reservations/${holder.body.id as string}`, undefined, OTHER)).status,
    ).toBe(200);
    expect(
      (await api.request('GET', `/v1/namespaces/pods-wait/reservations/${waiter.body.id as string}`, undefined, GREEDY)).body,
    ).toMatchObject({
      state: 'reserved',
    });
    // The queue is empty: pods are decided on the quota alone again.
    expect(await validate('web-2', '2')).toMatchObject({ allowed: true });
    expect(await validate('web-3', '1')).toMatchObject({
      allowed: false,
      status: { message: expect.stringContaining('exceeded quota: compute') },
    });
  });
});

describe('?watch=true per principal, over HTTP', () => {
  it('answers 429 with Retry-After past QUEUE_WATCHES_PER_PRINCIPAL_MAX (8) open watches of one principal, and frees one when its client goes away', async () => {
    await ledger.putQuota('watched', { name: 'x', spec: { hard: HARD } }, { actor: 'test' });
    expect((await reserve('watched', widgets('10'), OTHER)).status).toBe(201);
    const queued = await reserve('watched', widgets('1', WAIT), GREEDY);
    expect(queued.status).toBe(202);
    const path = `/v1/namespaces/watched/reservations/${queued.body.id}?watch=true`;
    const open = (headers: Record<string, string>, seconds: number) => {
      const abort = new AbortController();
      const answer = fetch(`${api.base}${path}&timeoutSeconds=${seconds}`, { headers, signal: abort.signal }).then(
        async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as { message?: string } }),
        () => ({ status: 0, retryAfter: null, body: undefined }),
      );
      return { abort: () => abort.abort(), answer };
    };
    const held = Array.from({ length: 8 }, () => open(GREEDY, 60));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await open(GREEDY, 1).answer;
    expect(refused).toMatchObject({ status: 429, retryAfter: '5', body: { kind: 'Status', code: 429, reason: 'TooManyRequests' } });
    expect(refused.body?.message).toContain('QUEUE_WATCHES_PER_PRINCIPAL_MAX');
    // Another principal's watch is its own.
    expect(await open(OTHER, 1).answer).toMatchObject({ status: 200, body: { state: 'queued' } });
    // A client that goes away gives its watch back.
    held[0]?.abort();
    let again = await open(GREEDY, 1).answer;
    for (let i = 0; i < 20 && again.status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await open(GREEDY, 1).answer;
    }
    expect(again).toMatchObject({ status: 200, body: { state: 'queued' } });
    for (const watch of held) watch.abort();
    await Promise.all(held.map((watch) => watch.answer));
  });
});
