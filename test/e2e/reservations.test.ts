import { LedgerCommands } from '@quota/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlrest');
  await api.app
    .get(LedgerCommands)
    .putQuota('team-a', { name: 'compute', spec: { hard: { pods: '2', 'requests.cpu': '1', 'example.com/gpu': '4' } } }, { actor: 'test' });
});
afterAll(async () => {
  await api?.close();
});

const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await api.db.dataSource.query(sql, params))[0].count);
const allEvents = () => count(`SELECT count(*) FROM ledger_events`);
const allDecisions = () => count(`SELECT count(*) FROM admission_decisions`);

const pod = (name: string, cpu: string) => ({
  kind: 'Pod',
  name,
  object: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image: 'nginx', resources: { limits: { cpu } } }] },
  },
});
const gpus = (name: string, amount: string) => ({
  kind: 'Widget',
  resource: 'widgets.example.com',
  name,
  resources: { 'example.com/gpu': amount },
});

const reserve = (body: unknown, namespace = 'team-a') => api.request('POST', `/v1/namespaces/${namespace}/reservations`, body);
const commit = (id: string) => api.request('POST', `/v1/namespaces/team-a/reservations/${id}/commit`);
const release = (id: string, headers: Record<string, string> = {}) =>
  api.request('DELETE', `/v1/namespaces/team-a/reservations/${id}`, undefined, headers);
const get = (id: string) => api.request('GET', `/v1/namespaces/team-a/reservations/${id}`);

describe('REST reservations', () => {
  it('reserves a pod that sets only limits, charging its requests from them; a repeated requestId gets the same answer and appends once', async () => {
    const reserved = await reserve({ requestId: 'r-1', ...pod('web-1', '500m') });
    expect(reserved.status).toBe(201);
    expect(reserved.body).toMatchObject({ namespace: 'team-a', state: 'reserved', charged: { 'requests.cpu': '500m', pods: '1' } });
    expect(reserved.body.id).toEqual(expect.any(String));

    const repeated = await reserve({ requestId: 'r-1', ...pod('web-1', '500m') });
    expect(repeated).toEqual(reserved);
    expect(await count(`SELECT count(*) FROM ledger_events WHERE type = 'Reserved' AND request_id = $1`, ['rest:r-1'])).toBe(1);
    await release(reserved.body.id);
  });

  it('commits (idempotently), releases (idempotently), refuses a commit after release, and shows the history in order', async () => {
    const { body } = await reserve(pod('web-2', '250m'));
    const id = body.id as string;

    const committed = await commit(id);
    expect(committed.status).toBe(200);
    expect(committed.body).toMatchObject({ id, namespace: 'team-a', state: 'committed' });
    const again = await commit(id);
    expect(again.status).toBe(200);
    expect(again.body.state).toBe('committed');

    const released = await release(id, { 'x-remote-user': 'ops' });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ id, state: 'released', releaseReason: 'cancelled' });
    const releasedAgain = await release(id);
    expect(releasedAgain.status).toBe(200);
    expect(releasedAgain.body.state).toBe('released');

    const late = await commit(id);
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });

    const history = await get(id);
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ id, state: 'released', object: { group: '', resource: 'pods', name: 'web-2' } });
    expect(history.body.history.map((e: { type: string; actor: string }) => [e.type, e.actor])).toEqual([
      ['Reserved', 'anonymous'],
      ['Committed', 'anonymous'],
      ['Released', 'ops'],
    ]);
  });

  it('reserves a plain list under any resource name, then denies the request that would exceed it, naming quota, resource, requested, used and hard', async () => {
    const first = await reserve(gpus('w1', '3'));
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ namespace: 'team-a', state: 'reserved', charged: { 'example.com/gpu': '3' } });
    // 3 of 4 is below QUOTA_WARNING_PERCENT (90): no warning.
    expect(first.headers.get('warning')).toBeNull();

    const before = await allEvents();
    const denied = await reserve({ requestId: 'deny-1', ...gpus('w2', '2') });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message:
        'widgets.example.com "w2" is forbidden: exceeded quota: compute, requested: example.com/gpu=2, used: example.com/gpu=3, limited: example.com/gpu=4',
      details: {
        denial: { kind: 'Exceeded', quota: 'compute', resource: 'example.com/gpu', requested: '2', used: '3', hard: '4' },
        requestId: denied.headers.get('x-request-id'),
      },
    });
    // The same answer again, naming the request that asked this time.
    const repeated = await reserve({ requestId: 'deny-1', ...gpus('w2', '2') });
    expect(repeated).toEqual({
      ...denied,
      body: { ...denied.body, details: { ...denied.body.details, requestId: repeated.headers.get('x-request-id') } },
    });
    expect(repeated.body.details.requestId).not.toBe(denied.body.details.requestId);
    // The one that fills it is allowed with a Warning header, as kube-apiserver sends warnings; a dry run warns too.
    const filling = await reserve({ ...gpus('w3', '1'), dryRun: true });
    expect(filling.status).toBe(200);
    expect(filling.headers.get('warning')).toBe('299 - "quota \\"compute\\": example.com/gpu at 100% of its limit (4/4)"');
    // What-if warns as the reserve would; one that would be denied warns of nothing.
    const whatIf = await api.request('POST', '/v1/namespaces/team-a/whatif', gpus('w3', '1'));
    expect(whatIf.status).toBe(200);
    expect(whatIf.body).toMatchObject({ kind: 'WhatIf', allowed: true, charged: { 'example.com/gpu': '1' } });
    expect(whatIf.headers.get('warning')).toBe(filling.headers.get('warning'));
    const tooMuch = await api.request('POST', '/v1/namespaces/team-a/whatif', gpus('w3', '2'));
    expect(tooMuch.body).toMatchObject({ kind: 'WhatIf', allowed: false });
    expect(tooMuch.headers.get('warning')).toBeNull();
    expect(await allEvents()).toBe(before);
    await release(first.body.id);
  });

  it('warns, as kube-apiserver warns, of a resource name no quota limits, suggesting the standard one; admitted and answered as before', async () => {
    const cpus = { kind: 'Pod', name: 'typo-1', requestId: 'typo-1', resources: { 'requests.cpus': '1' } };
    const reserved = await reserve(cpus);
    expect(reserved.status).toBe(201);
    expect(Object.keys(reserved.body).sort()).toEqual(['charged', 'id', 'namespace', 'position', 'state']);
    expect(reserved.body).toMatchObject({ namespace: 'team-a', state: 'reserved', charged: { 'requests.cpus': '1' } });
    expect(reserved.headers.get('warning')).toBe(
      '299 - "requests.cpus: no quota covering namespace \\"team-a\\" limits this resource, so nothing is charged for it (did you mean requests.cpu?)"',
    );
    // A repeated request warns again; its answer is the stored one.
    const repeated = await reserve(cpus);
    expect(repeated).toEqual(reserved);
    expect(repeated.headers.get('warning')).toBe(reserved.headers.get('warning'));
    // The decisions log holds the answer as it always did: no warning stored with it.
    const decisions = await api.request('GET', '/v1/namespaces/team-a/decisions?order=newest&limit=1');
    expect(decisions.body.items[0]).toMatchObject({ requestKey: 'rest:typo-1', allowed: true });
    expect(decisions.body.items[0].result).toEqual({
      allowed: true,
      code: 200,
      dryRun: false,
      reservationId: reserved.body.id,
      charged: { 'requests.cpus': '1' },
    });
    await release(reserved.body.id);

    // Each name its own header; a name a quota limits gets none; a dry run and a what-if warn alike.
    const dry = await reserve({ kind: 'Pod', name: 'typo-2', dryRun: true, resources: { pod: '1', pods: '1', 'requests.cpu': '100m' } });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      namespace: 'team-a',
      state: 'reserved',
      dryRun: true,
      charged: { pod: '1', pods: '1', 'requests.cpu': '100m' },
    });
    expect(dry.headers.get('warning')).toBe(
      '299 - "pod: no quota covering namespace \\"team-a\\" limits this resource, so nothing is charged for it (did you mean pods?)"',
    );
    const whatIf = await api.request('POST', '/v1/namespaces/team-a/whatif', { kind: 'Pod', resources: { pod: '1', 'limits.cpus': '1' } });
    expect(whatIf.body).toMatchObject({ kind: 'WhatIf', allowed: true });
    expect(whatIf.headers.get('warning')).toBe(
      [
        '299 - "limits.cpus: no quota covering namespace \\"team-a\\" limits this resource, so nothing is charged for it (did you mean limits.cpu?)"',
        '299 - "pod: no quota covering namespace \\"team-a\\" limits this resource, so nothing is charged for it (did you mean pods?)"',
      ].join(', '),
    );
  });

  it('denies a pod whose requests.cpu (defaulted from its limit) would exceed the quota', async () => {
    const denied = await reserve(pod('big', '2'));
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'pods "big" is forbidden: exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=0, limited: requests.cpu=1',
    );
    expect(denied.body.details.denial).toMatchObject({ quota: 'compute', resource: 'requests.cpu', requested: '2', used: '0', hard: '1' });
  });

  it('decides a dry run without appending anything', async () => {
    const before = await allEvents();
    const dry = await reserve({ requestId: 'dry-1', dryRun: true, ...pod('dry-1', '100m') });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({
      namespace: 'team-a',
      state: 'reserved',
      dryRun: true,
      charged: { 'requests.cpu': '100m', pods: '1' },
    });
    expect(dry.body.id).toBeUndefined();
    expect(await allEvents()).toBe(before);
  });

  it('answers 200 with state none for an object quota never charges (a resource Kubernetes quota ignores)', async () => {
    const before = await allEvents();
    const none = await reserve({
      kind: 'Event',
      resource: 'events',
      object: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev-1' } },
    });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ namespace: 'team-a', state: 'none', charged: {} });
    expect(await allEvents()).toBe(before);
  });

  it('releases a reservation whose TTL ran out instead of committing it (410)', async () => {
    const reserved = await reserve({ ttlSeconds: 1, ...pod('ttl-1', '100m') });
    expect(reserved.status).toBe(201);
    expect(Date.parse(reserved.body.expiresAt)).toBeGreaterThan(Date.now() - 5000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const late = await commit(reserved.body.id);
    expect(late.status).toBe(410);
    expect(late.body).toMatchObject({ kind: 'Status', code: 410 });
    const view = await get(reserved.body.id);
    expect(view.body).toMatchObject({ state: 'released', releaseReason: 'expired' });
    expect(view.body.history.map((e: { type: string }) => e.type)).toEqual(['Reserved', 'Released']);
  });

  it('answers 404 for a namespace without quotas and for an unknown reservation', async () => {
    const before = await allEvents();
    const unknown = await reserve(pod('x', '1'), 'nowhere');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ kind: 'Status', reason: 'NotFound' });
    expect(unknown.body.message).toContain('namespaces "nowhere" not found');
    expect(await allEvents()).toBe(before);

    const missing = await get('no-such-id');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'reservations "no-such-id" not found' });
    expect((await commit('no-such-id')).status).toBe(404);
    expect((await release('no-such-id')).status).toBe(404);
  });

  it.each([
    ['malformed JSON', '{"kind":', 400, 'JSON'],
    ['an unknown field', { ...pod('u', '1'), color: 'blue' }, 400, 'color'],
    ['a kind that is not a string', { kind: 5, resources: { pods: '1' } }, 400, 'kind'],
    ['a dryRun that is not a boolean', { ...pod('t', '1'), dryRun: 'yes' }, 400, 'dryRun'],
    ['resources as an array', { kind: 'Pod', resources: ['pods'] }, 400, 'resources'],
    ['a quantity that is not a string', { ...gpus('q', '1'), resources: { 'example.com/gpu': 1 } }, 400, 'example.com/gpu'],
    ['an empty requestId', { ...pod('e', '1'), requestId: '' }, 400, 'requestId'],
    ['an operation other than CREATE or UPDATE', { ...pod('o', '1'), operation: 'DELETE' }, 400, 'operation'],
    ['a fractional ttlSeconds', { ...pod('f', '1'), ttlSeconds: 1.5 }, 400, 'ttlSeconds'],
    // A quantity that does not parse is 400, as the quota PUT answers it and the API server decodes it.
    [
      'a quantity that does not parse',
      gpus('i', '1.5.5'),
      400,
      'resources[example.com/gpu]: Invalid value: \\"1.5.5\\": must be a quantity such as',
    ],
    ['a quantity of an object that does not parse', pod('iq', 'lots'), 400, 'Invalid value: \\"lots\\": must be a quantity such as'],
    ['an absurd resource name', { ...gpus('a', '1'), resources: { 'no spaces allowed/!': '1' } }, 422, 'no spaces allowed'],
    [
      'a resource name over 253 characters',
      { ...gpus('l', '1'), resources: { [`example.com/${'x'.repeat(300)}`]: '1' } },
      422,
      'resources[',
    ],
    [
      'more than 64 resources',
      { ...gpus('m', '1'), resources: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`example.com/r${i}`, '1'])) },
      422,
      'at most 64',
    ],
    ['both object and resources', { ...pod('b', '1'), resources: { pods: '1' } }, 400, 'exactly one of object'],
    ['neither object nor resources', { kind: 'Pod', name: 'n' }, 400, 'exactly one of object'],
    ['an unknown kind without a resource', { kind: 'Widget', resources: { pods: '1' } }, 422, 'kind: Widget is not a kind'],
    [
      'a known kind in another group',
      { kind: 'Job', apiVersion: 'example.com/v1', resources: { pods: '1' } },
      422,
      'kind: Job in example.com/v1',
    ],
    ['a TTL over the configured maximum', { ...pod('l', '1'), ttlSeconds: 10_000_000 }, 422, 'ttlSeconds'],
    [
      'an object in another namespace',
      { kind: 'Pod', object: { metadata: { name: 'o', namespace: 'team-b' } } },
      400,
      'object.metadata.namespace',
    ],
    ['an object of another kind', { kind: 'Pod', object: { kind: 'Service', metadata: { name: 'o' } } }, 400, 'object.kind'],
    ['an UPDATE without oldObject', { ...pod('up', '1'), operation: 'UPDATE' }, 400, 'oldObject'],
    ['an oldObject without object', { kind: 'Pod', resources: { pods: '1' }, oldObject: { metadata: { name: 'o' } } }, 400, 'oldObject'],
  ])('refuses %s with a Status naming it, and writes nothing', async (_case, body, code, text) => {
    const events = await allEvents();
    const decisions = await allDecisions();
    const response = await reserve(body);
    expect(response.status).toBe(code);
    expect(response.body).toMatchObject({ kind: 'Status', status: 'Failure', code });
    expect(JSON.stringify(response.body)).toContain(text);
    expect(await allEvents()).toBe(events);
    expect(await allDecisions()).toBe(decisions);
  });

  it.each([
    ['too long', 'x'.repeat(129)],
    ['with a character outside [A-Za-z0-9-_.]', 'a%20b'],
  ])('refuses a reservation id in the path that is %s', async (_case, id) => {
    const response = await get(id);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect((await commit(id)).status).toBe(400);
    expect((await release(id)).status).toBe(400);
  });

  it('refuses an invalid namespace in the path', async () => {
    const response = await reserve(pod('n', '1'), 'Not_A_Label');
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('invalid namespace');
  });
});
