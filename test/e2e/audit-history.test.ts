import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

/**
 * The audit reads over HTTP: a quota's and a limit range's definition history (before,
 * after, what changed, who), reservations by state and age, and NDJSON exports longer than
 * one page checked line by line against the paged lists.
 */

let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlhist');
});
afterAll(async () => {
  await api?.close();
});

const as = (user: string): Record<string, string> => ({ 'x-remote-user': user });

const quota = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'ResourceQuota', spec });

/** Runs `task` for 0..count-1, at most `width` at a time. */
async function inParallel(count: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** Every page of a paged audit list, following `next`. */
async function allPages<T>(path: string, limit: number): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  for (;;) {
    const separator = path.includes('?') ? '&' : '?';
    const page = await api.request('GET', `${path}${separator}limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    expect(page.status).toBe(200);
    items.push(...(page.body.items as T[]));
    if (page.body.next === undefined) return items;
    after = page.body.next as string;
  }
}

/** An NDJSON export, read line by line. */
async function exportLines(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; contentType: string | null; lines: unknown[] }> {
  const response = await fetch(`${api.base}${path}`, { headers });
  const text = await response.text();
  expect(text === '' || text.endsWith('\n')).toBe(true);
  const lines =
    text === ''
      ? []
      : text
          .slice(0, -1)
          .split('\n')
          .map((line) => JSON.parse(line) as unknown);
  return { status: response.status, contentType: response.headers.get('content-type'), lines };
}

describe('GET resourcequotas/{name}/history', () => {
  const path = '/v1/namespaces/team-h/resourcequotas/compute';
  beforeAll(async () => {
    expect((await api.request('PUT', path, quota({ hard: { 'requests.cpu': '2', pods: '10' } }), as('alice'))).status).toBe(201);
    expect((await api.request('PUT', path, quota({ hard: { 'requests.cpu': '4', pods: '10' } }), as('bob'))).status).toBe(200);
    // The same definition again appends nothing, so it is no change.
    expect((await api.request('PUT', path, quota({ hard: { 'requests.cpu': '4000m', pods: '10' } }), as('mallory'))).status).toBe(200);
    // Another quota and a limit range of the same name are other objects.
    await api.request('PUT', '/v1/namespaces/team-h/resourcequotas/other', quota({ hard: { pods: '1' } }), as('alice'));
    await api.request('PUT', '/v1/namespaces/team-h/limitranges/compute', {
      kind: 'LimitRange',
      spec: { limits: [{ type: 'Container', max: { cpu: '1' }, default: { cpu: '1' }, defaultRequest: { cpu: '1' } }] },
    });
    expect(
      (
        await api.request(
          'PUT',
          path,
          quota({ hard: { 'requests.cpu': '4', pods: '20', 'requests.memory': '1.5Gi' }, scopes: ['NotTerminating'] }),
          as('carol'),
        )
      ).status,
    ).toBe(200);
    expect((await api.request('DELETE', path, undefined, as('dave'))).status).toBe(200);
    expect((await api.request('PUT', path, quota({ hard: { pods: '5' } }), as('erin'))).status).toBe(201);
  });

  it('shows every change oldest first, with actor, definition before and after, and the resources whose hard limit changed', async () => {
    const history = await api.request('GET', `${path}/history`);
    expect(history.status).toBe(200);
    expect(history.body.next).toBeUndefined();
    const items = history.body.items as Record<string, unknown>[];
    expect(items.map((i) => [i['type'], i['actor']])).toEqual([
      ['QuotaDefined', 'alice'],
      ['QuotaChanged', 'bob'],
      ['QuotaChanged', 'carol'],
      ['QuotaRemoved', 'dave'],
      ['QuotaDefined', 'erin'],
    ]);
    const v1 = { hard: { 'requests.cpu': '2', pods: '10' } };
    const v2 = { hard: { 'requests.cpu': '4', pods: '10' } };
    const v3 = { hard: { 'requests.cpu': '4', pods: '20', 'requests.memory': '1536Mi' }, scopes: ['NotTerminating'] };
    const v4 = { hard: { pods: '5' } };
    expect(items.map((i) => ({ before: i['before'], after: i['after'], changed: i['changed'] }))).toEqual([
      { before: null, after: v1, changed: ['pods', 'requests.cpu'] },
      { before: v1, after: v2, changed: ['requests.cpu'] },
      { before: v2, after: v3, changed: ['pods', 'requests.memory', 'scopes'] },
      { before: v3, after: null, changed: ['pods', 'requests.cpu', 'requests.memory', 'scopes'] },
      { before: null, after: v4, changed: ['pods'] },
    ]);
    for (const item of items) expect(new Date(item['time'] as string).toISOString()).toBe(item['time']);

    // The same envelope as the namespace's events.
    const events = (await api.request('GET', '/v1/namespaces/team-h/events?limit=1000')).body.items as {
      position: string;
      version: number;
      type: string;
      time: string;
      actor: string;
      data: { name: string };
    }[];
    const ofCompute = events.filter((e) => e.type.startsWith('Quota') && e.data.name === 'compute');
    expect(items.map((i) => [i['position'], i['version'], i['time']])).toEqual(ofCompute.map((e) => [e.position, e.version, e.time]));
  });

  it('pages by position, carrying the definition in force into the next page', async () => {
    const whole = (await api.request('GET', `${path}/history`)).body.items;
    const first = await api.request('GET', `${path}/history?limit=2`);
    expect(first.body.items).toEqual(whole.slice(0, 2));
    expect(first.body.next).toBe(whole[1].position);
    const second = await api.request('GET', `${path}/history?limit=2&after=${first.body.next}`);
    expect(second.body.items).toEqual(whole.slice(2, 4));
    const third = await api.request('GET', `${path}/history?limit=2&after=${second.body.next}`);
    expect(third.body.items).toEqual(whole.slice(4));
    expect(third.body.next).toBeUndefined();
    // Past the end of an object that existed: an empty page, not a 404.
    const past = await api.request('GET', `${path}/history?after=${whole[4].position}`);
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ items: [] });
  });

  it('answers 404 for a name that never existed in the namespace', async () => {
    for (const missing of [
      '/v1/namespaces/team-h/resourcequotas/never/history',
      '/v1/namespaces/nowhere/resourcequotas/compute/history',
      '/v1/namespaces/team-h/limitranges/other/history',
    ]) {
      const response = await api.request('GET', missing);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
    }
  });
});

describe('GET limitranges/{name}/history', () => {
  const path = '/v1/namespaces/team-l/limitranges/defaults';
  const limits = (max: string) => [
    {
      type: 'Container',
      max: { cpu: max, memory: '1Gi' },
      default: { cpu: '500m', memory: '512Mi' },
      defaultRequest: { cpu: '250m', memory: '256Mi' },
    },
  ];
  beforeAll(async () => {
    expect((await api.request('PUT', path, { kind: 'LimitRange', spec: { limits: limits('2') } }, as('alice'))).status).toBe(201);
    expect(
      (
        await api.request(
          'PUT',
          path,
          { kind: 'LimitRange', spec: { limits: [...limits('4'), { type: 'Pod', max: { cpu: '8' } }] } },
          as('bob'),
        )
      ).status,
    ).toBe(200);
    expect((await api.request('DELETE', path, undefined, as('carol'))).status).toBe(200);
  });

  it('shows the spec before and after, and the limit types that changed', async () => {
    const history = await api.request('GET', `${path}/history`);
    expect(history.status).toBe(200);
    const items = history.body.items as { type: string; actor: string; before: unknown; after: unknown; changed: string[] }[];
    expect(items.map((i) => [i.type, i.actor])).toEqual([
      ['LimitRangeDefined', 'alice'],
      ['LimitRangeChanged', 'bob'],
      ['LimitRangeRemoved', 'carol'],
    ]);
    expect(items[0]).toMatchObject({ before: null, after: { limits: limits('2') }, changed: ['Container'] });
    expect(items[1]).toMatchObject({
      before: { limits: limits('2') },
      after: { limits: [...limits('4'), { type: 'Pod', max: { cpu: '8' } }] },
      changed: ['Container', 'Pod'],
    });
    expect(items[2]).toMatchObject({ before: items[1]?.after, after: null, changed: ['Container', 'Pod'] });
  });
});

describe('GET reservations', () => {
  const base = '/v1/namespaces/team-r/reservations';
  const ids: string[] = [];
  let startedAt = '';
  beforeAll(async () => {
    await api.request('PUT', '/v1/namespaces/team-r/resourcequotas/gpus', quota({ hard: { 'example.com/gpu': '100' } }));
    startedAt = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 5; i++) {
      const reserved = await api.request('POST', base, {
        kind: 'Widget',
        resource: 'widgets.example.com',
        name: `w${i}`,
        resources: { 'example.com/gpu': '1' },
      });
      expect(reserved.status).toBe(201);
      ids.push(reserved.body.id as string);
    }
    expect((await api.request('POST', `${base}/${ids[1]}/commit`)).status).toBe(200);
    expect((await api.request('DELETE', `${base}/${ids[2]}`)).status).toBe(200);
  });

  it('lists reservations oldest first, without their history, shaped as GET reservations/{id} shows them', async () => {
    const all = await api.request('GET', base);
    expect(all.status).toBe(200);
    expect(all.body.next).toBeUndefined();
    const items = all.body.items as { id: string; reservedAt: string; history?: unknown }[];
    expect(items.map((r) => r.id).sort()).toEqual([...ids].sort());
    const times = items.map((r) => r.reservedAt);
    expect(times).toEqual([...times].sort());
    for (const item of items) {
      expect(item.history).toBeUndefined();
      const { history: _history, ...one } = (await api.request('GET', `${base}/${item.id}`)).body;
      expect(item).toEqual(one);
    }
  });

  it('filters by state', async () => {
    const byState = async (state: string): Promise<string[]> =>
      ((await api.request('GET', `${base}?state=${state}`)).body.items as { id: string }[]).map((r) => r.id);
    expect((await byState('reserved')).sort()).toEqual([ids[0], ids[3], ids[4]].sort());
    expect(await byState('committed')).toEqual([ids[1]]);
    const released = await api.request('GET', `${base}?state=released`);
    expect(released.body.items).toEqual([
      expect.objectContaining({ id: ids[2], state: 'released', releaseReason: 'cancelled', releasedAt: expect.any(String) }),
    ]);
  });

  it('filters by age', async () => {
    expect((await api.request('GET', `${base}?olderThan=${startedAt}`)).body.items).toEqual([]);
    expect((await api.request('GET', `${base}?olderThan=2999-01-01T00:00:00Z&state=reserved`)).body.items).toHaveLength(3);
    expect((await api.request('GET', `${base}?olderThan=2999-01-01T00:00:00%2B02:00`)).body.items).toHaveLength(5);
  });

  it('pages with an opaque cursor and gives the same list as one page', async () => {
    const whole = (await api.request('GET', base)).body.items;
    expect(await allPages(base, 2)).toEqual(whole);
    expect(await allPages(`${base}?state=reserved`, 1)).toEqual(whole.filter((r: { state: string }) => r.state === 'reserved'));
  });

  it('answers an empty list for a namespace it has never seen', async () => {
    expect((await api.request('GET', '/v1/namespaces/nowhere/reservations')).body).toEqual({ items: [] });
  });
});

describe('NDJSON exports', () => {
  const ns = '/v1/namespaces/team-x';
  const RESERVATIONS = 1100;
  beforeAll(async () => {
    await api.request('PUT', `${ns}/resourcequotas/widgets`, quota({ hard: { 'example.com/widgets': '100000' } }));
    await inParallel(RESERVATIONS, 24, async (i) => {
      const reserved = await api.request(
        'POST',
        `${ns}/reservations`,
        { kind: 'Widget', resource: 'widgets.example.com', name: `w${i}`, resources: { 'example.com/widgets': '1' } },
        as(`user-${i % 3}`),
      );
      expect(reserved.status).toBe(201);
    });
    const denied = await api.request('POST', `${ns}/reservations`, {
      kind: 'Widget',
      resource: 'widgets.example.com',
      name: 'huge',
      resources: { 'example.com/widgets': '1000000' },
    });
    expect(denied.status).toBe(403);
    // Another namespace's events in between, which the export must leave out.
    await api.request('PUT', '/v1/namespaces/team-y/resourcequotas/q', quota({ hard: { pods: '1' } }));
    await api.request('PUT', `${ns}/resourcequotas/widgets`, quota({ hard: { 'example.com/widgets': '200000' } }));
  }, 120_000);

  it('streams every event of the namespace in position order, equal to the paged /events', async () => {
    const paged = await allPages<{ position: string }>(`${ns}/events`, 1000);
    expect(paged).toHaveLength(RESERVATIONS + 2);
    const exported = await exportLines(`${ns}/events/export`);
    expect(exported.status).toBe(200);
    expect(exported.contentType).toMatch(/^application\/x-ndjson(;|$)/);
    expect(exported.lines).toEqual(paged);
    const asked = await exportLines(`${ns}/events/export`, { accept: 'application/x-ndjson' });
    expect(asked.lines).toEqual(paged);
  });

  it('exports the positions after..until', async () => {
    const paged = await allPages<{ position: string }>(`${ns}/events`, 1000);
    const from = paged[9]?.position;
    const to = paged[1049]?.position;
    const exported = await exportLines(`${ns}/events/export?after=${from}&until=${to}`);
    expect(exported.lines).toEqual(paged.slice(10, 1050));
  });

  it('streams the decisions, all or filtered, equal to the paged /decisions', async () => {
    const paged = await allPages<{ id: string }>(`${ns}/decisions`, 1000);
    expect(paged).toHaveLength(RESERVATIONS + 1);
    const exported = await exportLines(`${ns}/decisions/export`);
    expect(exported.contentType).toMatch(/^application\/x-ndjson(;|$)/);
    expect(exported.lines).toEqual(paged);

    const denied = await exportLines(`${ns}/decisions/export?allowed=false`);
    expect(denied.lines).toEqual((await api.request('GET', `${ns}/decisions?allowed=false`)).body.items);
    expect(denied.lines).toHaveLength(1);
    const bob = await exportLines(`${ns}/decisions/export?requester=user-1&since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z`);
    expect(bob.lines).toEqual(paged.filter((d) => (d as { requester?: string }).requester === 'user-1'));
  });

  it('streams nothing for a namespace it has never seen', async () => {
    for (const path of ['/v1/namespaces/nowhere/events/export', '/v1/namespaces/nowhere/decisions/export']) {
      const exported = await exportLines(path);
      expect(exported).toEqual({ status: 200, contentType: expect.stringMatching(/^application\/x-ndjson(;|$)/), lines: [] });
    }
  });

  it.each([
    [`${ns}/events/export?after=x`, 'after'],
    [`${ns}/events/export?until=-1`, 'until'],
    [`${ns}/events/export?limit=10`, 'limit'],
    [`${ns}/decisions/export?since=yesterday`, 'since'],
    [`${ns}/decisions/export?allowed=maybe`, 'allowed'],
    ['/v1/namespaces/Team_X/events/export', 'namespace'],
  ])('refuses %s with a 400 Status naming %s, and no NDJSON', async (path, field) => {
    const response = await fetch(`${api.base}${path}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as { kind: string; reason: string; message: string };
    expect(body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect(body.message).toContain(field);
  });

  it('keeps serving after clients walk away mid-export', async () => {
    for (let i = 0; i < 6; i++) {
      const controller = new AbortController();
      const response = await fetch(`${api.base}${ns}/events/export`, { signal: controller.signal });
      const reader = response.body?.getReader();
      expect((await reader?.read())?.done).toBe(false);
      controller.abort();
    }
    const exported = await exportLines(`${ns}/events/export`);
    expect(exported.lines).toHaveLength(RESERVATIONS + 2);
  });
});

describe('bad query parameters', () => {
  it.each([
    ['/v1/namespaces/team-h/resourcequotas/compute/history?after=-1', 'after'],
    ['/v1/namespaces/team-h/resourcequotas/compute/history?limit=0', 'limit'],
    ['/v1/namespaces/team-h/limitranges/compute/history?limit=1001', 'limit'],
    ['/v1/namespaces/team-h/resourcequotas/Compute/history', 'Compute'],
    ['/v1/namespaces/team-h/resourcequotas/compute/history?color=red', 'color'],
    ['/v1/namespaces/team-r/reservations?state=pending', 'state'],
    ['/v1/namespaces/team-r/reservations?olderThan=yesterday', 'olderThan'],
    ['/v1/namespaces/team-r/reservations?olderThan=2026-01-01', 'olderThan'],
    ['/v1/namespaces/team-r/reservations?after=not!a!cursor', 'after'],
    [`/v1/namespaces/team-r/reservations?after=${Buffer.from('["yesterday","x"]').toString('base64url')}`, 'after'],
    ['/v1/namespaces/team-r/reservations?limit=5000', 'limit'],
  ])('refuses %s naming %s', async (path, field) => {
    const response = await api.request('GET', path);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(response.body.message).toContain(field);
  });
});
