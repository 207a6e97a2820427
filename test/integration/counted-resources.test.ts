import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterWriter } from '@quota/ledger';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { Ledger } from '../support/ledger.js';
import type { DataSource } from 'typeorm';

// The object counts quotas name, as the reconciler reads them to check the registered webhook's
// rules: every namespace's quotas and every shared quota, one read.

let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;
let writer: ClusterWriter;

beforeAll(async () => {
  db = await createMigratedDatabase('qlcounted');
  ledger = new Ledger(db.dataSource, { retryBaseMs: 1 });
  writer = new ClusterWriter(db.dataSource);
});
afterAll(async () => {
  await ledger?.close();
  await db?.drop();
});

describe('the object counts quotas name', () => {
  it('are every count/… and legacy bare name of namespace and shared quotas, with the quotas naming each; removed ones go', async () => {
    expect(await ledger.definitions.countedResources()).toEqual(new Map());
    const actor = { actor: 'admin' };
    await ledger.putQuota('team-a', { name: 'objects', spec: { hard: { 'count/serviceaccounts': '2', secrets: '5', pods: '3' } } }, actor);
    await ledger.putQuota('team-a', { name: 'compute', spec: { hard: { 'requests.cpu': '1', 'count/serviceaccounts': '9' } } }, actor);
    await ledger.putQuota('team-b', { name: 'objects', spec: { hard: { 'count/widgets.example.com': '1' } } }, actor);
    const ref = { kind: 'ClusterResourceQuota', name: 'acme' } as const;
    await writer.putSharedQuota(
      { ref, spec: { hard: { 'count/poddisruptionbudgets.policy': '4' } }, selector: { labels: { matchLabels: { tenant: 'acme' } } } },
      actor,
    );
    expect(await ledger.definitions.countedResources()).toEqual(
      new Map([
        ['count/poddisruptionbudgets.policy', 1],
        ['count/serviceaccounts', 2],
        ['count/widgets.example.com', 1],
        ['secrets', 1],
      ]),
    );
    await ledger.deleteQuota('team-b', 'objects', actor);
    await writer.deleteSharedQuota(ref, actor);
    expect(await ledger.definitions.countedResources()).toEqual(
      new Map([
        ['count/serviceaccounts', 2],
        ['secrets', 1],
      ]),
    );
  });
});
