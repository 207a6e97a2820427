import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SharedQuotaDefinition } from '@quota/domain';
import { ClusterWriter, LedgerCommands } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { poolOf } from '../support/api.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { disagreements } from '../support/shared-quotas.js';

/**
 * A ClusterResourceQuota write reads every namespace head and then locks
 * the heads of the namespaces it covers, inside one SERIALIZABLE transaction. Admissions in
 * those namespaces commit in between, so the write fails (could not serialize access due to
 * concurrent update) and is retried; over 100 busy namespaces it failed every one of its 12
 * attempts (bench:cluster-writes: 2 of 4 writes gave up, 7.25 retries per write). After two
 * such conflicts the write now takes the heads' tables before its snapshot, and so completes.
 */
const COVERED = 100;
const CLIENTS = 12;
const actor = { actor: 'admin' };
const wide = (pods: number): SharedQuotaDefinition => ({
  ref: { kind: 'ClusterResourceQuota', name: 'wide' },
  spec: { hard: { pods: String(pods) } },
  selector: { labels: { matchLabels: { wide: 'yes' } } },
});

let db: TestDatabase & { dataSource: DataSource };
let writer: ClusterWriter;
let ledger: LedgerCommands;

beforeAll(async () => {
  db = await createMigratedDatabase('qlclusterload');
  writer = new ClusterWriter(db.dataSource);
  ledger = new LedgerCommands(db.dataSource);
  for (let i = 0; i < COVERED; i++) await writer.putNamespace({ name: `ns-${i}`, metadata: { labels: { wide: 'yes' } } }, actor);
  await writer.putSharedQuota(wide(1_000_000), actor);
});
afterAll(async () => {
  await ledger?.close();
  await writer?.close();
  await db?.drop();
});

describe('a ClusterResourceQuota over 100 namespaces, changed while every one of them admits', () => {
  it('is changed every time, within a few attempts, and every head still equals the folds', async () => {
    let admitting = true;
    let seq = 0;
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (admitting) {
        const n = seq++;
        const namespace = `ns-${n % COVERED}`;
        const object = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `p${n}`, uid: `u${n}` },
          spec: { containers: [{ name: 'app', image: 'x' }] },
        };
        await ledger.admit({
          namespace,
          source: 'webhook',
          request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name: `p${n}`, object },
          dryRun: false,
          requester: 'ci',
        });
      }
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = { ...writer.stats };
      const outcomes: string[] = [];
      for (let change = 1; change <= 4; change++) {
        outcomes.push(
          await writer.putSharedQuota(wide(1_000_000 + change), actor).then(
            () => 'changed',
            (error: Error) => error.message,
          ),
        );
      }
      expect(outcomes).toEqual(['changed', 'changed', 'changed', 'changed']);
      expect(writer.stats.retries - before.retries).toBeLessThanOrEqual(4 * 2);
    } finally {
      admitting = false;
      await Promise.all(clients);
    }
    expect(await disagreements(poolOf(db.dataSource))).toEqual([]);
  });
});
