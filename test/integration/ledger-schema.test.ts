import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerCommands, type AdmitCommand } from '@quota/ledger';
import { MIGRATIONS } from '../../migrations/index.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import type { DataSource } from 'typeorm';

let db: TestDatabase & { dataSource: DataSource };

beforeAll(async () => {
  db = await createMigratedDatabase('qlschema');
});
afterAll(async () => {
  await db?.drop();
});

const insert = (namespace: string, version: number) =>
  db.dataSource.query(
    `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor) VALUES ($1, $2, 'Reserved', 1, '{}', 'test') RETURNING position`,
    [namespace, version],
  );

describe('ledger schema (real PostgreSQL)', () => {
  it('records the migration it ran, once', async () => {
    const rows: { name: string }[] = await db.dataSource.query('SELECT name FROM schema_migrations');
    expect(rows.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => new m().name));
    expect(await db.dataSource.runMigrations()).toEqual([]);
  });

  it('gives each event a growing global position and rejects a second event at the same stream version', async () => {
    const [first] = await insert('team-a', 1);
    const [second] = await insert('team-b', 1);
    expect(BigInt(second.position)).toBeGreaterThan(BigInt(first.position));
    await expect(insert('team-a', 1)).rejects.toThrow(/ledger_events_stream_version/);
  });

  it('refuses to update, delete or truncate an event', async () => {
    await insert('team-c', 1);
    await expect(db.dataSource.query(`UPDATE ledger_events SET actor = 'x' WHERE namespace = 'team-c'`)).rejects.toThrow(
      /append-only: UPDATE/,
    );
    await expect(db.dataSource.query(`DELETE FROM ledger_events WHERE namespace = 'team-c'`)).rejects.toThrow(/append-only: DELETE/);
    await expect(db.dataSource.query(`TRUNCATE ledger_events`)).rejects.toThrow(/append-only: TRUNCATE/);
  });

  it('rejects versions below 1 and an empty namespace', async () => {
    await expect(insert('team-d', 0)).rejects.toThrow(/check constraint/);
    await expect(insert('', 1)).rejects.toThrow(/check constraint/);
  });

  it('keeps on the tables an admission writes only the indexes some query reads (each costs an entry per row)', async () => {
    const rows: { tablename: string; indexname: string; indexdef: string }[] = await db.dataSource.query(
      `SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE tablename IN ('ledger_events', 'namespace_heads', 'reservations', 'admission_decisions') ORDER BY tablename, indexname`,
    );
    expect(rows.map((r) => `${r.tablename}.${r.indexname}`)).toEqual([
      'admission_decisions.admission_decisions_denied',
      'admission_decisions.admission_decisions_pkey',
      'admission_decisions.admission_decisions_request_key',
      'ledger_events.ledger_events_definitions',
      'ledger_events.ledger_events_pkey',
      'ledger_events.ledger_events_recorded_at',
      'ledger_events.ledger_events_shared_applied',
      'ledger_events.ledger_events_shared_withdrawn',
      'namespace_heads.namespace_heads_pkey',
      'namespace_heads.namespace_heads_queued',
      'reservations.reservations_live_by_age',
      'reservations.reservations_live_by_uid',
      'reservations.reservations_pkey',
    ]);
    // Every query of the decisions log names its namespace: one (namespace, id) key serves them all.
    expect(rows.find((r) => r.indexname === 'admission_decisions_pkey')?.indexdef).toMatch(/UNIQUE INDEX .* \(namespace, id\)$/);
    // A shared quota's past starts from the namespaces that carried it: partial, so no admission writes an entry.
    expect(rows.find((r) => r.indexname === 'ledger_events_shared_applied')?.indexdef).toMatch(
      /WHERE \(type = 'SharedQuotaApplied'::text\)$/,
    );
    expect(rows.find((r) => r.indexname === 'ledger_events_shared_withdrawn')?.indexdef).toMatch(
      /WHERE \(type = 'SharedQuotaWithdrawn'::text\)$/,
    );
    // The heads with waiters: on a flag that changes only with a queue's first and last waiter, so an admission's head update stays HOT.
    expect(rows.find((r) => r.indexname === 'namespace_heads_queued')?.indexdef).toMatch(/\(namespace\) WHERE queued$/);
  });

  it('updates a namespace head in place (HOT) on every admission, its queue flag included, and not when a queue starts', async () => {
    const ledger = new LedgerCommands(db.dataSource);
    const namespace = 'team-hot';
    await ledger.putQuota(namespace, { name: 'compute', spec: { hard: { pods: '30' } } }, { actor: 'test' });
    const pod = (name: string): AdmitCommand => ({
      namespace,
      requester: 'test',
      source: 'webhook',
      request: {
        operation: 'CREATE',
        groupResource: { group: '', resource: 'pods' },
        namespace,
        name,
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, uid: name }, spec: { containers: [] } },
      },
      dryRun: false,
    });
    // The counters are per database (this test's own), and each connection reports its own within a second or so of going idle.
    const counters = async () => {
      await db.dataSource.query('SELECT pg_stat_clear_snapshot()');
      const [row] = await db.dataSource.query(
        `SELECT n_tup_upd::int AS updated, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'namespace_heads'`,
      );
      return row as { updated: number; hot: number };
    };
    const settled = async (updated: number) => {
      for (let waited = 0; waited < 15_000; waited += 200) {
        const now = await counters();
        if (now.updated >= updated) return now;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      return counters();
    };
    const before = await settled(0);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const start = await counters();
    for (let i = 0; i < 30; i++) expect((await ledger.admit(pod(`p${i}`))).result.allowed).toBe(true);
    const admitted = await settled(start.updated + 30);
    expect(admitted.updated - start.updated, `head updates since ${JSON.stringify(before)}`).toBe(30);
    expect(admitted.hot - start.hot, 'of them HOT').toBe(30);
    // A full namespace's first waiter sets its flag: that one update is not HOT.
    const widget = { operation: 'CREATE', groupResource: { group: 'example.com', resource: 'widgets' }, namespace, name: 'w' } as const;
    const waiting = await ledger.admit({
      ...pod('w'),
      source: 'rest',
      request: widget,
      kind: 'Widget',
      resources: { pods: '1' },
      wait: { seconds: 60, priority: 0 },
    });
    expect(waiting.result.allowed).toBe(false);
    const queued = await settled(admitted.updated + 1);
    expect([queued.updated - admitted.updated, queued.hot - admitted.hot]).toEqual([1, 0]);
    expect(await db.dataSource.query(`SELECT queued FROM namespace_heads WHERE namespace = $1`, [namespace])).toEqual([{ queued: true }]);
  });

  it('partitions the events by month, each partition with its own unique (namespace, version) index and TRUNCATE trigger', async () => {
    // A partitioned table's keys must hold the partition key: the primary key is (position, recorded_at),
    // and the stream version is unique per partition (migrations/1795900001000).
    const [parent] = await db.dataSource.query(
      `SELECT pg_get_partkeydef('ledger_events'::regclass) AS key, pg_get_indexdef('ledger_events_pkey'::regclass) AS pkey`,
    );
    expect(parent).toEqual({
      key: 'RANGE (recorded_at)',
      pkey: expect.stringMatching(/UNIQUE INDEX ledger_events_pkey ON ONLY .* \("position", recorded_at\)$/),
    });
    const partitions: { name: string; stream_version: string | null; truncate: boolean }[] = await db.dataSource.query(
      `SELECT c.relname AS name,
              (SELECT pg_get_indexdef(x.indexrelid) FROM pg_index x JOIN pg_class xc ON xc.oid = x.indexrelid
                WHERE x.indrelid = c.oid AND xc.relname LIKE 'ledger_events_stream_version_%') AS stream_version,
              EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'ledger_events_no_truncate') AS truncate
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'ledger_events'::regclass ORDER BY c.relname`,
    );
    expect(partitions.map((p) => p.name)).toContain('ledger_events_default');
    expect(partitions.length).toBeGreaterThanOrEqual(4);
    for (const p of partitions) {
      expect(p.stream_version, p.name).toMatch(
        new RegExp(
          `^CREATE UNIQUE INDEX ledger_events_stream_version_${p.name.replace('ledger_events_', '')} ON .* \\(namespace, version\\)$`,
        ),
      );
      expect(p.truncate, p.name).toBe(true);
    }
  });

  it('leaves half of each head page free, so that rewriting a head stays a HOT update (no index entry for concurrent groups to conflict on)', async () => {
    const rows: { reloptions: string[] | null }[] = await db.dataSource.query(
      `SELECT reloptions FROM pg_class WHERE relname = 'namespace_heads'`,
    );
    expect(rows[0]?.reloptions).toContain('fillfactor=50');
  });
});
