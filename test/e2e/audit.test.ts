import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlaudit');
  await api.request('PUT', '/v1/namespaces/team-a/resourcequotas/gpus', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { 'example.com/gpu': '2' } },
  });
  for (const [name, requester] of [
    ['a', 'alice'],
    ['b', 'bob'],
    ['c', 'carol'],
  ] as const) {
    await api.request(
      'POST',
      '/v1/namespaces/team-a/reservations',
      { kind: 'Widget', resource: 'widgets.example.com', name, resources: { 'example.com/gpu': '1' } },
      { 'x-remote-user': requester },
    );
  }
});
afterAll(async () => {
  await api?.close();
});

describe('audit reads of the ledger', () => {
  it('keeps every decision, and a denial explains itself later', async () => {
    const all = await api.request('GET', '/v1/namespaces/team-a/decisions');
    expect(all.body.items.map((d: { allowed: boolean; requester: string }) => [d.requester, d.allowed])).toEqual([
      ['alice', true],
      ['bob', true],
      ['carol', false],
    ]);
    const denied = await api.request('GET', '/v1/namespaces/team-a/decisions?allowed=false');
    expect(denied.body.items).toHaveLength(1);
    expect(denied.body.items[0]).toMatchObject({
      requester: 'carol',
      resource: 'widgets.example.com',
      name: 'c',
      result: { allowed: false, code: 403, denial: { quota: 'gpus', resource: 'example.com/gpu', requested: '1', used: '2', hard: '2' } },
    });
    expect(denied.body.items[0].result.message).toContain('exceeded quota: gpus');
    expect((await api.request('GET', '/v1/namespaces/team-a/decisions?requester=bob')).body.items).toHaveLength(1);
    const page = await api.request('GET', '/v1/namespaces/team-a/decisions?limit=2');
    expect(page.body.items).toHaveLength(2);
    const rest = await api.request('GET', `/v1/namespaces/team-a/decisions?limit=2&after=${page.body.next}`);
    expect(rest.body.items).toHaveLength(1);
    expect(rest.body.next).toBeUndefined();
  });

  it('pages the events of a namespace by position and shows usage now', async () => {
    const first = await api.request('GET', '/v1/namespaces/team-a/events?limit=2');
    expect(first.body.items.map((e: { type: string }) => e.type)).toEqual(['QuotaDefined', 'Reserved']);
    const second = await api.request('GET', `/v1/namespaces/team-a/events?after=${first.body.next}`);
    expect(second.body.items.map((e: { type: string; version: number }) => [e.type, e.version])).toEqual([['Reserved', 3]]);
    const usage = await api.request('GET', '/v1/namespaces/team-a/usage');
    expect(usage.body).toMatchObject({
      namespace: 'team-a',
      version: 3,
      position: second.body.items[0].position,
      quotas: [{ name: 'gpus', hard: { 'example.com/gpu': '2' }, used: { 'example.com/gpu': '2' } }],
    });
  });

  it('tells dry runs from real decisions, logs no what-if (a read), and names the kind of a resource list', async () => {
    const whatIf = await api.request(
      'POST',
      '/v1/namespaces/team-a/whatif',
      { kind: 'Widget', resource: 'widgets.example.com', name: 'd', resources: { 'example.com/gpu': '1' } },
      { 'x-remote-user': 'dave' },
    );
    expect(whatIf.body).toMatchObject({ allowed: false });
    const dryRun = await api.request(
      'POST',
      '/v1/namespaces/team-a/reservations',
      { kind: 'Pod', name: 'e', resources: { pods: '1' }, dryRun: true },
      { 'x-remote-user': 'erin' },
    );
    expect(dryRun.status).toBe(200);

    const realDenials = await api.request('GET', '/v1/namespaces/team-a/decisions?allowed=false&dryRun=false');
    expect(realDenials.body.items.map((d: { requester: string }) => d.requester)).toEqual(['carol']);
    const dryRuns = await api.request('GET', '/v1/namespaces/team-a/decisions?dryRun=true');
    // dave's what-if is not there: it was a read, and a read leaves nothing behind.
    expect(
      dryRuns.body.items.map((d: { requester: string; dryRun: boolean; allowed: boolean }) => [d.requester, d.dryRun, d.allowed]),
    ).toEqual([['erin', true, true]]);
    const exported = await api.request('GET', '/v1/namespaces/team-a/decisions/export?dryRun=true');
    expect(String(exported.body).trim().split('\n')).toHaveLength(1);
    // Every decision says what it admitted, a plain resource list included.
    const all = await api.request('GET', '/v1/namespaces/team-a/decisions');
    expect(all.body.items.map((d: { kind?: string; name: string }) => `${d.kind} ${d.name}`)).toEqual([
      'Widget a',
      'Widget b',
      'Widget c',
      'Pod e',
    ]);
    const reservations = await api.request('GET', '/v1/namespaces/team-a/reservations?state=reserved');
    expect(reservations.body.items.map((r: { object: { kind?: string; name: string } }) => `${r.object.kind} ${r.object.name}`)).toEqual([
      'Widget a',
      'Widget b',
    ]);
  });

  it.each([
    ['/v1/namespaces/team-a/decisions?dryRun=yes', 'dryRun'],
    ['/v1/namespaces/team-a/decisions?allowed=maybe', 'allowed'],
    ['/v1/namespaces/team-a/decisions?limit=5000', 'limit'],
    ['/v1/namespaces/team-a/decisions?since=yesterday', 'since'],
    ['/v1/namespaces/team-a/decisions?color=red', 'color'],
    ['/v1/namespaces/team-a/events?after=-1', 'after'],
  ])('refuses %s naming the parameter', async (path, field) => {
    const response = await api.request('GET', path);
    expect(response.status).toBe(400);
    expect(response.body.message).toContain(field);
  });

  it('answers usage of a namespace it has never seen with 404', async () => {
    expect((await api.request('GET', '/v1/namespaces/nowhere/usage')).status).toBe(404);
  });
});
