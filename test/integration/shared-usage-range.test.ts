import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SharedQuotaDefinition } from '@quota/domain';
import { ClusterWriter, LedgerClock, LedgerCommands, SharedUsageQueries } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { settleProjection } from '../support/api.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

/**
 * A shared quota's usage?at= and usage/series used to fold every namespace that
 * ever carried the quota, whatever the range asked. After churn (a ClusterResourceQuota that had
 * covered 1,501 namespaces and then covered one), six auditors reading its series killed the
 * API. usage?at= now costs the namespaces the quota covered at the instant: here 40 namespaces
 * join and all but one leave, and a read of the time after that reads one namespace's usage. A
 * series reads the shared usage series (shared-usage-series.ts) and no namespace's usage at all
 * once the projection has caught up, over any range; its answers are the namespaces' sums.
 */
const CHURNED = 40;
const key = 'clusterresourcequotas/churn';
const crq: SharedQuotaDefinition = {
  ref: { kind: 'ClusterResourceQuota', name: 'churn' },
  spec: { hard: { pods: '100' } },
  selector: { labels: { matchLabels: { tenant: 'churn' } } },
};
const actor = { actor: 'admin' };

let db: TestDatabase & { dataSource: DataSource };
let writer: ClusterWriter;
let clock: LedgerClock;
/** The namespaces whose usage a read asked for (the per-namespace statements name one in $1). */
const read = new Set<string>();
let usage: SharedUsageQueries;
let joined: string;
let left: string;

const instant = async (): Promise<string> => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  const at = new Date(await clock.now()).toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  return at;
};

beforeAll(async () => {
  db = await createMigratedDatabase('qlsharedrange');
  writer = new ClusterWriter(db.dataSource);
  clock = new LedgerClock(db.dataSource);
  const counting = Object.create(db.dataSource, {
    query: {
      value: (sql: string, params: unknown[]) => {
        if (/projected_used_versions|usage_snapshots/.test(sql) && typeof params[0] === 'string') read.add(params[0]);
        return db.dataSource.query(sql, params);
      },
    },
  }) as DataSource;
  usage = new SharedUsageQueries(counting);
  for (let i = 0; i < CHURNED; i++) await writer.putNamespace({ name: `churn-${i}`, metadata: { labels: { tenant: 'churn' } } }, actor);
  await writer.putSharedQuota(crq, actor);
  const commands = new LedgerCommands(db.dataSource);
  for (let i = 0; i < CHURNED; i++) {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', uid: `uid-${i}` },
      spec: { containers: [{ name: 'app', image: 'x' }] },
    };
    const admitted = await commands.admit({
      namespace: `churn-${i}`,
      source: 'webhook',
      request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace: `churn-${i}`, name: 'p', object },
      dryRun: false,
      requester: 'ci',
    });
    expect(admitted.result.allowed).toBe(true);
  }
  await commands.close();
  joined = await instant();
  for (let i = 1; i < CHURNED; i++) await writer.putNamespace({ name: `churn-${i}`, metadata: { labels: { tenant: 'gone' } } }, actor);
  left = await instant();
  await settleProjection(db.dataSource);
});
afterAll(async () => {
  await writer?.close();
  await db?.drop();
});

describe("a shared quota's past after churn", () => {
  it('reads, for a range after the churn, no namespace for a series and only the namespace it still covers for usage?at=', async () => {
    read.clear();
    const until = await instant();
    const series = await usage.usageSeries(key, { since: left, until, points: 500 });
    expect(series?.points).toHaveLength(500);
    expect(series?.points.every((p) => p.used['pods'] === '1')).toBe(true);
    expect([...read]).toEqual([]);

    read.clear();
    const at = await usage.usageAt(key, left);
    expect(at?.namespaces.map((n) => n.namespace)).toEqual(['churn-0']);
    expect([...read]).toEqual(['churn-0']);
  });

  it('reads no namespace for a series over the range that holds the churn, and answers as usage?at= and the namespaces summed do at each point', async () => {
    read.clear();
    const series = await usage.usageSeries(key, { since: joined, until: left, points: 7 });
    expect(read.size).toBe(0);
    expect(await usage.usageSeries(key, { since: joined, until: left, points: 7 }, undefined, 'namespaces')).toEqual(series);
    expect(read.size).toBe(CHURNED);
    expect(series?.points[0]?.used).toEqual({ pods: String(CHURNED) });
    expect(series?.points.at(-1)?.used).toEqual({ pods: '1' });
    for (const point of series?.points ?? []) {
      const at = await usage.usageAt(key, point.at);
      expect({ at: point.at, used: point.used, hard: point.hard }).toEqual({ at: at?.at, used: at?.used, hard: at?.hard });
    }
    expect((await usage.usageAt(key, joined))?.namespaces).toHaveLength(CHURNED);
  });
});
