import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    await expect(db.dataSource.query(`UPDATE ledger_events SET actor = 'x' WHERE namespace = 'team-c'`)).rejects.toThrow(/append-only: UPDATE/);
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
      'reservations.reservations_live_by_age',
      'reservations.reservations_live_by_uid',
      'reservations.reservations_pkey',
    ]);
    // Every query of the decisions log names its namespace: one (namespace, id) key serves them all.
    expect(rows.find((r) => r.indexname === 'admission_decisions_pkey')?.indexdef).toMatch(/UNIQUE INDEX .* \(namespace, id\)$/);
    // A shared quota's past starts from the namespaces that carried it: partial, so no admission writes an entry.
    expect(rows.find((r) => r.indexname === 'ledger_events_shared_applied')?.indexdef).toMatch(/WHERE \(type = 'SharedQuotaApplied'::text\)$/);
    expect(rows.find((r) => r.indexname === 'ledger_events_shared_withdrawn')?.indexdef).toMatch(/WHERE \(type = 'SharedQuotaWithdrawn'::text\)$/);
  });

  it('partitions the events by month, each partition with its own unique (namespace, version) index and TRUNCATE trigger', async () => {
    // A partitioned table's keys must hold the partition key: the primary key is (position, recorded_at),
    // and the stream version is unique per partition (migrations/1795900001000).
    const [parent] = await db.dataSource.query(`SELECT pg_get_partkeydef('ledger_events'::regclass) AS key, pg_get_indexdef('ledger_events_pkey'::regclass) AS pkey`);
    expect(parent).toEqual({ key: 'RANGE (recorded_at)', pkey: expect.stringMatching(/UNIQUE INDEX ledger_events_pkey ON ONLY .* \("position", recorded_at\)$/) });
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
      expect(p.stream_version, p.name).toMatch(new RegExp(`^CREATE UNIQUE INDEX ledger_events_stream_version_${p.name.replace('ledger_events_', '')} ON .* \\(namespace, version\\)$`));
      expect(p.truncate, p.name).toBe(true);
    }
  });

  it('leaves half of each head page free, so that rewriting a head stays a HOT update (no index entry for concurrent groups to conflict on)', async () => {
    const rows: { reloptions: string[] | null }[] = await db.dataSource.query(`SELECT reloptions FROM pg_class WHERE relname = 'namespace_heads'`);
    expect(rows[0]?.reloptions).toContain('fillfactor=50');
  });
});

