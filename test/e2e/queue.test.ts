import { loadConfig } from '@quota/config';
import { ClusterWriter, LedgerCommands } from '@quota/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

// Queued reservations over HTTP: 202 while waiting, a watch that returns once the
// release that frees room has admitted it, cancel, expiry by the sweep, the queue's list, and
// bad input refused with nothing written.
const TOKENS = {
  admin: { name: 'ops', token: 'ops-token', roles: ['admin', 'admission'] },
  teamA: { name: 'team-a-runner', token: 'team-a-token', roles: ['admission'], namespaces: ['team-a'] },
};
const A = bearer(TOKENS.admin.token);

let api: RunningApi;
beforeAll(async () => {
  const queue = { ...loadConfig({}).queue, sweepIntervalMs: 200, waitMaxSeconds: 600 };
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)), queue }, 'qlqueue');
  const ledger = api.app.get(LedgerCommands);
  for (const namespace of ['team-a', 'team-b'])
    await ledger.putQuota(namespace, { name: 'compute', spec: { hard: { cpu: '2' } } }, { actor: 'test' });
});
afterAll(async () => {
  await api?.close();
});

const jobs = (cpu: string, extra: Record<string, unknown> = {}) => ({
  kind: 'Job',
  resource: 'jobs.batch.example.com',
  resources: { cpu },
  ...extra,
});
const reserve = (body: unknown, namespace = 'team-a', headers = A) =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, body, headers);
const events = async (): Promise<number> => Number((await api.db.dataSource.query(`SELECT count(*) FROM ledger_events`))[0].count);

describe('queued reservations over HTTP', () => {
  it('answers 202 with the position and what it waits for, and a watch returns it admitted by the release that freed room', async () => {
    const full = await reserve(jobs('2'));
    expect(full.status).toBe(201);
    const queued = await reserve(jobs('1', { wait: { seconds: 60, priority: 5 } }));
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({
      namespace: 'team-a',
      state: 'queued',
      position: 1,
      waitingFor: [{ quota: 'compute', resources: [{ resource: 'cpu', requested: '1', used: '2', hard: '2' }] }],
    });
    const id = queued.body.id as string;
    expect((await api.request('GET', `/v1/namespaces/team-a/reservations/${id}`, undefined, A)).body).toMatchObject({
      id,
      state: 'queued',
      position: 1,
      priority: 5,
    });
    expect((await api.request('GET', '/v1/namespaces/team-a/queue', undefined, A)).body).toMatchObject({
      namespace: 'team-a',
      items: [{ id, position: 1 }],
    });

    const watch = api.request('GET', `/v1/namespaces/team-a/reservations/${id}?watch=true&timeoutSeconds=10`, undefined, A);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const released = performance.now();
    expect((await api.request('DELETE', `/v1/namespaces/team-a/reservations/${full.body.id}`, undefined, A)).status).toBe(200);
    const admitted = await watch;
    // Woken by the release's commit, not by the watch's timeout (10 s).
    expect(performance.now() - released).toBeLessThan(2000);
    expect(admitted.status).toBe(200);
    expect(admitted.body).toMatchObject({ id, state: 'reserved', charged: { cpu: '1' } });
    expect(admitted.body.history.map((e: { type: string }) => e.type)).toEqual(['Queued', 'AdmittedFromQueue', 'Reserved']);
    expect((await api.request('GET', '/v1/namespaces/team-a/queue', undefined, A)).body.items).toEqual([]);
  });

  it('cancels a queued reservation with DELETE (idempotently), and a watch times out still queued', async () => {
    await reserve(jobs('1'));
    const queued = await reserve(jobs('2', { wait: { seconds: 60 } }));
    const id = queued.body.id as string;
    const watched = await api.request('GET', `/v1/namespaces/team-a/reservations/${id}?watch=true&timeoutSeconds=1`, undefined, A);
    expect(watched.body).toMatchObject({ state: 'queued' });
    const cancelled = await api.request('DELETE', `/v1/namespaces/team-a/reservations/${id}`, undefined, A);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id, state: 'cancelled' });
    const before = await events();
    expect((await api.request('DELETE', `/v1/namespaces/team-a/reservations/${id}`, undefined, A)).body).toMatchObject({
      id,
      state: 'cancelled',
    });
    expect(await events()).toBe(before);
  });

  it('expires a waiter past its deadline with an Expired event, on the sweep', async () => {
    await reserve(jobs('2'), 'team-b');
    const queued = await reserve(jobs('1', { wait: { seconds: 1 } }), 'team-b');
    expect(queued.status).toBe(202);
    const answer = await api.request(
      'GET',
      `/v1/namespaces/team-b/reservations/${queued.body.id}?watch=true&timeoutSeconds=5`,
      undefined,
      A,
    );
    expect(answer.body).toMatchObject({ state: 'expired', reason: expect.stringContaining('without room in compute') });
  });

  it.each([
    ['a wait of 0 seconds', jobs('1', { wait: { seconds: 0 } }), 422],
    ['a wait over QUEUE_WAIT_MAX_SECONDS', jobs('1', { wait: { seconds: 601 } }), 422],
    ['a fractional priority', jobs('1', { wait: { seconds: 5, priority: 1.5 } }), 422],
    ['an unknown wait field', jobs('1', { wait: { seconds: 5, minutes: 1 } }), 400],
    ['a wait that is not an object', jobs('1', { wait: 5 }), 400],
    [
      'an object that waits',
      {
        kind: 'Pod',
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        wait: { seconds: 5 },
      },
      422,
    ],
  ])('refuses %s with a Status and writes nothing', async (_name, body, code) => {
    const before = await events();
    const answer = await reserve(body);
    expect(answer.status).toBe(code);
    expect(answer.body).toMatchObject({ kind: 'Status', code });
    expect(await events()).toBe(before);
  });

  it("lets a tenant's scoped token see and cancel only its own namespace's queue", async () => {
    const teamA = bearer(TOKENS.teamA.token);
    expect((await api.request('GET', '/v1/namespaces/team-a/queue', undefined, teamA)).status).toBe(200);
    expect((await api.request('GET', '/v1/namespaces/team-b/queue', undefined, teamA)).status).toBe(403);
    const other = await reserve(jobs('2', { wait: { seconds: 60 } }), 'team-b');
    expect(other.status).toBe(202);
    expect((await api.request('GET', `/v1/namespaces/team-b/reservations/${other.body.id}`, undefined, teamA)).status).toBe(403);
    expect((await api.request('DELETE', `/v1/namespaces/team-b/reservations/${other.body.id}`, undefined, teamA)).status).toBe(403);
    expect((await reserve(jobs('1', { wait: { seconds: 5 } }), 'team-b', teamA)).status).toBe(403);
  });
});

describe('queued reservations under a ClusterResourceQuota, over HTTP', () => {
  it("admits a waiter in one namespace when a release in another frees the shared quota's room (the fair drain after the release)", async () => {
    const writer = api.app.get(ClusterWriter);
    for (const name of ['crq-x', 'crq-y']) await writer.putNamespace({ name, metadata: { labels: { pool: 'gpu' } } }, { actor: 'test' });
    await writer.putSharedQuota(
      {
        ref: { kind: 'ClusterResourceQuota', name: 'gpu' },
        spec: { hard: { 'example.com/gpu': '2' } },
        selector: { labels: { matchLabels: { pool: 'gpu' } } },
      },
      { actor: 'test' },
    );
    const gpus = (extra: Record<string, unknown> = {}) => ({
      kind: 'Job',
      resource: 'jobs.batch.example.com',
      resources: { 'example.com/gpu': '2' },
      ...extra,
    });
    const holder = await reserve(gpus(), 'crq-x');
    expect(holder.status).toBe(201);
    const queued = await reserve(gpus({ wait: { seconds: 60 } }), 'crq-y');
    expect(queued.status).toBe(202);
    expect(queued.body.waitingFor).toMatchObject([{ quota: 'gpu' }]);
    const watch = api.request('GET', `/v1/namespaces/crq-y/reservations/${queued.body.id}?watch=true&timeoutSeconds=10`, undefined, A);
    expect((await api.request('GET', '/v1/clusterresourcequotas/gpu/queue', undefined, A)).body).toMatchObject({
      key: 'clusterresourcequotas/gpu',
      namespaces: [{ namespace: 'crq-y', weight: 1, used: { 'example.com/gpu': '0' }, items: [{ id: queued.body.id, state: 'queued' }] }],
    });
    await api.request('DELETE', `/v1/namespaces/crq-x/reservations/${holder.body.id}`, undefined, A);
    expect((await watch).body).toMatchObject({ id: queued.body.id, state: 'reserved', charged: { 'example.com/gpu': '2' } });
    expect((await api.request('GET', '/v1/clusterresourcequotas/gpu/queue', undefined, A)).body).toEqual({
      key: 'clusterresourcequotas/gpu',
      namespaces: [],
    });
  });
});

describe('queue metrics', () => {
  it('exports the queue length and how long waiters waited, by outcome', async () => {
    const text = String((await api.request('GET', '/metrics', undefined, A)).body);
    expect(text).toMatch(/^quota_ledger_queued_reservations \d+$/m);
    for (const outcome of ['admitted', 'cancelled', 'expired'])
      expect(text).toMatch(new RegExp(`^quota_ledger_queue_wait_seconds_count\\{outcome="${outcome}"\\} [1-9]`, 'm'));
  });
});

describe("the wait to expect, from the ledger's own history", () => {
  it('lists a waiter with the median and p90 of the waits of those like it once five were admitted, and none for a size never waited', async () => {
    const ledger = api.app.get(LedgerCommands);
    await ledger.putQuota('estimates', { name: 'compute', spec: { hard: { cpu: '2' } } }, { actor: 'test' });
    for (let round = 0; round < 6; round++) {
      const holder = await reserve(jobs('2'), 'estimates');
      const waiter = await reserve(jobs('1', { wait: { seconds: 60 } }), 'estimates');
      expect(waiter.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 20 * (round + 1)));
      await api.request('DELETE', `/v1/namespaces/estimates/reservations/${holder.body.id as string}`, undefined, A);
      const admitted = await api.request('GET', `/v1/namespaces/estimates/reservations/${waiter.body.id as string}`, undefined, A);
      expect(admitted.body.state).toBe('reserved');
      await api.request('DELETE', `/v1/namespaces/estimates/reservations/${waiter.body.id as string}`, undefined, A);
    }
    expect((await reserve(jobs('2'), 'estimates')).status).toBe(201);
    const like = await reserve(jobs('1', { wait: { seconds: 60 } }), 'estimates');
    const unlike = await reserve(jobs('250m', { wait: { seconds: 60 } }), 'estimates');
    const { items } = (await api.request('GET', '/v1/namespaces/estimates/queue', undefined, A)).body as {
      items: { id: string; estimate?: { samples: number; p50Seconds: number; p90Seconds: number } }[];
    };
    const estimate = items.find((item) => item.id === like.body.id)?.estimate;
    expect(estimate).toMatchObject({ samples: 6 });
    // Each wait was at least its round's sleep before the release; p50 is the third shortest, p90 the longest.
    expect(estimate?.p50Seconds).toBeGreaterThanOrEqual(0.06);
    expect(estimate?.p90Seconds).toBeGreaterThanOrEqual(0.12);
    expect(estimate?.p50Seconds).toBeLessThanOrEqual(estimate?.p90Seconds ?? 0);
    // 250m is not within a factor of two of 1: no waits like it.
    expect(items.find((item) => item.id === unlike.body.id)).not.toHaveProperty('estimate');
  });
});
