import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

/** Usage as of any instant, over HTTP: before and after a release, and across many pages of events. */
let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlasof');
});
afterAll(async () => {
  await api?.close();
});

const ns = '/v1/namespaces/history';
const gpus = (used: string) => [{ name: 'gpus', hard: { 'example.com/gpu': '2' }, used: { 'example.com/gpu': used } }];
const eventTime = async (type: string, nth = 0): Promise<string> => {
  const events = await api.request('GET', `${ns}/events?limit=1000`);
  return events.body.items.filter((e: { type: string }) => e.type === type)[nth].time;
};

describe('usage as of an instant', () => {
  it('answers usage before and after a release, and before the namespace had any quota', async () => {
    expect(
      (
        await api.request('PUT', `${ns}/resourcequotas/gpus`, {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          spec: { hard: { 'example.com/gpu': '2' } },
        })
      ).status,
    ).toBe(201);
    const reserved = await api.request('POST', `${ns}/reservations`, {
      kind: 'Widget',
      resource: 'widgets.example.com',
      name: 'w1',
      resources: { 'example.com/gpu': '2' },
    });
    expect(reserved.status).toBe(201);
    const denied = await api.request(
      'POST',
      `${ns}/reservations`,
      { kind: 'Widget', resource: 'widgets.example.com', name: 'w2', resources: { 'example.com/gpu': '1' } },
      { 'x-remote-user': 'dave' },
    );
    expect(denied.status).toBe(403);
    expect((await api.request('DELETE', `${ns}/reservations/${reserved.body.id}`)).status).toBe(200);

    const definedAt = await eventTime('QuotaDefined');
    const reservedAt = await eventTime('Reserved');
    const releasedAt = await eventTime('Released');
    const before = new Date(Date.parse(definedAt) - 1000).toISOString();

    const at = (instant: string) => api.request('GET', `${ns}/usage?at=${encodeURIComponent(instant)}`);
    expect((await at(before)).body).toEqual({ namespace: 'history', at: before, version: 0, position: '0', quotas: [] });
    expect((await at(definedAt)).body).toMatchObject({ version: 1, quotas: gpus('0') });
    expect((await at(reservedAt)).body).toMatchObject({ version: 2, quotas: gpus('2') });
    expect((await at(releasedAt)).body).toMatchObject({ version: 3, quotas: gpus('0') });
    // Now, from the head, agrees with as-of now.
    const now = await api.request('GET', `${ns}/usage`);
    expect(now.body).toMatchObject({ version: 3, quotas: gpus('0') });

    // The denial, read later, explains itself against the usage of its time.
    const decisions = await api.request('GET', `${ns}/decisions?allowed=false&requester=dave`);
    expect(decisions.body.items).toHaveLength(1);
    expect(decisions.body.items[0].result).toMatchObject({
      allowed: false,
      denial: { quota: 'gpus', resource: 'example.com/gpu', requested: '1', used: '2', hard: '2' },
    });
    expect(decisions.body.items[0].result.message).toBe(
      'widgets.example.com "w2" is forbidden: exceeded quota: gpus, requested: example.com/gpu=1, used: example.com/gpu=2, limited: example.com/gpu=2',
    );
    const atDenial = await at(decisions.body.items[0].time);
    expect(atDenial.body.quotas).toEqual(gpus('2'));
  });

  it('stays exact across snapshots: at the instant of each of ~90 events, usage equals a count of the events up to it', async () => {
    const path = '/v1/namespaces/long';
    await api.request('PUT', `${path}/resourcequotas/gpus`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      spec: { hard: { 'example.com/gpu': '100' } },
    });
    for (let i = 0; i < 60; i++) {
      const r = await api.request('POST', `${path}/reservations`, {
        kind: 'Widget',
        resource: 'widgets.example.com',
        name: `w${i}`,
        resources: { 'example.com/gpu': '1' },
      });
      expect(r.status).toBe(201);
      if (i % 2 === 1) {
        await api.request('DELETE', `${path}/reservations/${r.body.id}`);
      }
      // The projection follows along, snapshotting as it goes.
      if (i % 10 === 9) await api.settle();
    }
    await api.settle();
    const snapshots = await api.db.dataSource.query(`SELECT count(*)::int AS n FROM usage_snapshots WHERE namespace = 'long'`);
    expect(snapshots[0].n).toBeGreaterThanOrEqual(3);
    const events = (await api.request('GET', `${path}/events?limit=1000`)).body.items as { version: number; type: string; time: string }[];
    let used = 0;
    const expected = new Map<string, number>();
    for (const e of events) {
      if (e.type === 'Reserved') used++;
      if (e.type === 'Released') used--;
      expected.set(e.time, used);
    }
    for (const [time, count] of expected) {
      const answer = await api.request('GET', `${path}/usage?at=${encodeURIComponent(time)}`);
      expect(answer.body.quotas[0].used['example.com/gpu']).toBe(String(count));
    }
  });

  it('refuses a malformed instant and an unknown namespace with a Status', async () => {
    const bad = await api.request('GET', `${ns}/usage?at=yesterday`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ kind: 'Status', code: 400 });
    expect(bad.body.message).toContain('at must be an RFC 3339 time');
    const unknown = await api.request('GET', `/v1/namespaces/nobody/usage?at=2026-01-01T00:00:00Z`);
    expect(unknown.status).toBe(404);
  });

  it('says how far the projection trails the ledger', async () => {
    await api.settle();
    const lag = await api.request('GET', '/v1/projections/usage');
    expect(lag.status).toBe(200);
    expect(lag.body).toMatchObject({ name: 'usage', eventsBehind: 0, lagMs: 0 });
  });
});
