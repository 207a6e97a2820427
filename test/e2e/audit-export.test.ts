import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerCommands } from '@quota/ledger';
import { startApi, type RunningApi } from '../support/api.js';

/** The history of a quota's limits, and NDJSON exports of events and decisions, over HTTP. */
let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlexport');
});
afterAll(async () => {
  await api?.close();
});

const quota = (hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  spec: { hard, ...extra },
});

describe('definition history', () => {
  it("answers who changed a quota's limits, when, before and after — also once it is deleted", async () => {
    const path = '/v1/namespaces/team-h/resourcequotas/compute';
    await api.request('PUT', path, quota({ 'requests.cpu': '2', pods: '10' }), { 'x-remote-user': 'alice' });
    await api.request('PUT', path, quota({ 'requests.cpu': '4', pods: '10' }), { 'x-remote-user': 'bob' });
    await api.request('PUT', path, quota({ 'requests.cpu': '4', pods: '10' }, { scopes: ['NotTerminating'] }), { 'x-remote-user': 'bob' });
    await api.request('DELETE', path, undefined, { 'x-remote-user': 'carol' });

    const history = await api.request('GET', `${path}/history`);
    expect(history.status).toBe(200);
    expect(history.body.items.map((c: { type: string; actor: string; changed: string[] }) => [c.type, c.actor, c.changed])).toEqual([
      ['QuotaDefined', 'alice', ['pods', 'requests.cpu']],
      ['QuotaChanged', 'bob', ['requests.cpu']],
      ['QuotaChanged', 'bob', ['scopes']],
      ['QuotaRemoved', 'carol', ['pods', 'requests.cpu', 'scopes']],
    ]);
    expect(history.body.items[1]).toMatchObject({
      before: { hard: { 'requests.cpu': '2', pods: '10' } },
      after: { hard: { 'requests.cpu': '4', pods: '10' } },
    });
    expect(history.body.items[0].before).toBeNull();
    expect(history.body.items[3].after).toBeNull();
    expect(Number.isNaN(Date.parse(history.body.items[0].time))).toBe(false);

    // Paged: the second page's first change still knows what it changed from.
    const first = await api.request('GET', `${path}/history?limit=1`);
    const second = await api.request('GET', `${path}/history?limit=1&after=${first.body.next}`);
    expect(second.body.items[0]).toMatchObject({
      type: 'QuotaChanged',
      before: { hard: { 'requests.cpu': '2' } },
      changed: ['requests.cpu'],
    });

    const never = await api.request('GET', '/v1/namespaces/team-h/resourcequotas/never/history');
    expect(never.status).toBe(404);
    expect(never.body).toMatchObject({ kind: 'Status', reason: 'NotFound' });
    expect((await api.request('GET', `${path}/history?limit=0`)).status).toBe(400);
  });

  it('answers the same for a LimitRange, naming the limit types that changed', async () => {
    const path = '/v1/namespaces/team-h/limitranges/defaults';
    const limits = (max: string) => ({
      apiVersion: 'v1',
      kind: 'LimitRange',
      spec: { limits: [{ type: 'Container', max: { cpu: max } }] },
    });
    await api.request('PUT', path, limits('1'));
    await api.request('PUT', path, limits('2'));
    const history = await api.request('GET', `${path}/history`);
    expect(history.body.items.map((c: { type: string; changed: string[] }) => [c.type, c.changed])).toEqual([
      ['LimitRangeDefined', ['Container']],
      ['LimitRangeChanged', ['Container']],
    ]);
  });
});

describe('NDJSON export', () => {
  it('streams every event of a long range, line by line, equal to the paged /events', async () => {
    await api.request('PUT', '/v1/namespaces/busy/resourcequotas/gpus', quota({ 'example.com/gpu': '5000' }));
    const ledger = api.app.get(LedgerCommands);
    for (let chunk = 0; chunk < 11; chunk++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          ledger.admit({
            namespace: 'busy',
            source: 'rest',
            request: {
              operation: 'CREATE',
              groupResource: { group: 'example.com', resource: 'widgets' },
              namespace: 'busy',
              name: `w${chunk}-${i}`,
            },
            resources: { 'example.com/gpu': '1' },
            dryRun: false,
            requester: 'load',
          }),
        ),
      );
    }
    const response = await fetch(`${api.base}/v1/namespaces/busy/events/export`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = (await response.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(1101);
    expect(lines.map((e) => e.version)).toEqual(Array.from({ length: 1101 }, (_, i) => i + 1));

    const paged: unknown[] = [];
    let after: string | undefined;
    do {
      const page = await api.request('GET', `/v1/namespaces/busy/events?limit=1000${after ? `&after=${after}` : ''}`);
      paged.push(...page.body.items);
      after = page.body.next;
    } while (after);
    expect(lines).toEqual(paged);

    // A range: after and until are positions.
    const from = lines[99].position;
    const to = lines[149].position;
    const range = (await (await fetch(`${api.base}/v1/namespaces/busy/events/export?after=${from}&until=${to}`)).text())
      .trimEnd()
      .split('\n');
    expect(range.map((l) => JSON.parse(l).version)).toEqual(Array.from({ length: 50 }, (_, i) => i + 101));
  });

  it('streams the decisions log with its filters', async () => {
    await api.request('PUT', '/v1/namespaces/small/resourcequotas/gpus', quota({ 'example.com/gpu': '1' }));
    for (const name of ['a', 'b', 'c']) {
      await api.request('POST', '/v1/namespaces/small/reservations', {
        kind: 'Widget',
        resource: 'widgets.example.com',
        name,
        resources: { 'example.com/gpu': '1' },
      });
    }
    const text = await (await fetch(`${api.base}/v1/namespaces/small/decisions/export?allowed=false`)).text();
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).name),
    ).toEqual(['b', 'c']);
  });

  it('refuses bad parameters with a Status before writing a byte', async () => {
    const bad = await api.request('GET', '/v1/namespaces/busy/events/export?until=soon');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ kind: 'Status', code: 400 });
    expect(bad.body.message).toContain('until must be a position');
  });
});
