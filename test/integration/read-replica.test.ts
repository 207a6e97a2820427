import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, ReadPath, runMigrationsLocked } from '@quota/ledger';
import { startApi, type RunningApi } from '../support/api.js';
import { startReplicaPair, type ReplicaPair } from '../support/replica.js';

/**
 * History reads from a real hot standby: the test makes a primary and a streaming
 * standby of it with Debian's PostgreSQL binaries (test/support/replica.ts) and runs the API with
 * DATABASE_URL on the primary and DATABASE_READ_URL on the standby.
 */
let pair: ReplicaPair;
let api: RunningApi;
let reads: ReadPath;

beforeAll(async () => {
  pair = await startReplicaPair();
  const primary = await new DataSource(buildDataSourceOptions({ url: pair.primaryUrl })).initialize();
  await runMigrationsLocked(primary);
  await primary.destroy();
  api = await startApi({ databaseUrl: pair.primaryUrl, databaseReadUrl: pair.standbyUrl, readReplicaWaitMs: 300 }, 'qlreplica');
  reads = api.app.get(ReadPath);
}, 60_000);
afterAll(async () => {
  await api?.close();
  await pair?.stop();
});

const putQuota = (pods: string) =>
  api.request('PUT', '/v1/namespaces/team-a/resourcequotas/compute', { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods } } });
const eventTypes = async (query = ''): Promise<string[]> => {
  const answer = await api.request('GET', `/v1/namespaces/team-a/events${query}`);
  expect(answer.status).toBe(200);
  return (answer.body.items as { type: string; data: { spec?: { hard?: { pods?: string } } } }[]).map(
    (e) => `${e.type}:${e.data.spec?.hard?.pods ?? ''}`,
  );
};
const position = async (): Promise<string> => (await api.request('GET', '/v1/namespaces/team-a/usage')).body.position as string;

describe('reads from a streaming replica (DATABASE_READ_URL)', () => {
  it('answers history from the standby once it has replayed the writes', async () => {
    expect((await putQuota('5')).status).toBe(201);
    await pair.caughtUp();
    const before = { ...reads.stats };
    expect(await eventTypes()).toEqual(['QuotaDefined:5']);
    expect(reads.stats.replica).toBe(before.replica + 1);
  });

  it("with ?minPosition= sees the caller's write: waits for the standby, then asks the primary when the standby lags", async () => {
    await pair.pauseReplay();
    try {
      expect((await putQuota('6')).status).toBe(200);
      const written = await position();
      // Without it, the lagging standby answers what it has.
      expect(await eventTypes()).toEqual(['QuotaDefined:5']);
      const before = { ...reads.stats };
      expect(await eventTypes(`?minPosition=${written}`)).toEqual(['QuotaDefined:5', 'QuotaChanged:6']);
      expect(reads.stats.waitedOut).toBe(before.waitedOut + 1);
      expect(reads.stats.replica).toBe(before.replica);
    } finally {
      await pair.resumeReplay();
    }
    const written = await position();
    const before = { ...reads.stats };
    // Replay resumed: the standby itself answers, once it has the event.
    expect(await eventTypes(`?minPosition=${written}`)).toEqual(['QuotaDefined:5', 'QuotaChanged:6']);
    expect(reads.stats.replica).toBe(before.replica + 1);
  });

  it("sees a write through the position the write itself answered (X-Ledger-Position, and a reservation's position)", async () => {
    const events = async (query: string): Promise<{ position: string; type: string }[]> => {
      const answer = await api.request('GET', `/v1/namespaces/team-b/events${query}`);
      expect(answer.status).toBe(200);
      return (answer.body.items as { position: string; type: string }[]).map(({ position, type }) => ({ position, type }));
    };
    await pair.pauseReplay();
    let reserved: string;
    try {
      const put = await api.request('PUT', '/v1/namespaces/team-b/resourcequotas/gpus', {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        spec: { hard: { 'example.com/gpu': '4' } },
      });
      expect(put.status).toBe(201);
      const defined = put.headers.get('x-ledger-position') ?? '';
      expect(defined).toMatch(/^[0-9]+$/);
      const reserve = await api.request('POST', '/v1/namespaces/team-b/reservations', {
        kind: 'Widget',
        resource: 'widgets.example.com',
        name: 'w',
        resources: { 'example.com/gpu': '1' },
      });
      expect(reserve.status).toBe(201);
      reserved = reserve.body.position as string;
      expect(reserve.headers.get('x-ledger-position')).toBe(reserved);
      // The lagging standby has neither; the positions the writes answered make the read wait, then ask the primary.
      expect(await events('')).toEqual([]);
      const before = { ...reads.stats };
      expect(await events(`?minPosition=${reserved}`)).toEqual([
        { position: defined, type: 'QuotaDefined' },
        { position: reserved, type: 'Reserved' },
      ]);
      expect(reads.stats.waitedOut).toBe(before.waitedOut + 1);
    } finally {
      await pair.resumeReplay();
    }
    // Replay resumed: the standby answers once it has replayed the reservation.
    const before = { ...reads.stats };
    expect((await events(`?minPosition=${reserved}`)).at(-1)).toEqual({ position: reserved, type: 'Reserved' });
    expect(reads.stats.replica).toBe(before.replica + 1);
  });

  it('refuses a minPosition that is not a position, as every query parameter is checked', async () => {
    const answer = await api.request('GET', '/v1/namespaces/team-a/events?minPosition=latest');
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/minPosition must be the position of an event/);
  });

  it('falls back to the primary, with no 5xx, when the standby is gone', async () => {
    await pair.stopStandby();
    const before = { ...reads.stats };
    expect(await eventTypes()).toEqual(['QuotaDefined:5', 'QuotaChanged:6']);
    expect(reads.stats.fellBack).toBe(before.fellBack + 1);
    // Marked down: the next reads go straight to the primary.
    expect((await api.request('GET', '/v1/namespaces/team-a/decisions')).status).toBe(200);
    expect(reads.stats.primary).toBeGreaterThan(before.primary);
  });
});
