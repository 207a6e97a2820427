import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@quota/domain';
import { LedgerCommands, MIGRATION_LOCK_KEY, runMigrationsLocked, type AdmitCommand } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { until } from '../support/wait.js';

/**
 * The write path's transaction as PostgreSQL sees it: SERIALIZABLE (its predicate locks are
 * there while it runs), a conflict with a concurrent writer is a 40001 that is retried whole,
 * and migrations that start together take turns.
 */
let db: TestDatabase & { dataSource: DataSource };
let commands: LedgerCommands;

beforeAll(async () => {
  db = await createMigratedDatabase('qlser');
  commands = new LedgerCommands(db.dataSource, { retryBaseMs: 1 });
});
afterAll(async () => {
  await commands?.close();
  await db?.drop();
});

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' }, limits: { cpu: '100m' } } }] },
});

const admit = (namespace: string, object: Pod): AdmitCommand => ({
  namespace,
  source: 'webhook',
  request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name: object.metadata?.name ?? '', object },
  requestKey: `review:${object.metadata?.name}`,
  dryRun: false,
  requester: 'alice',
});

describe('the admission transaction', () => {
  it('is SERIALIZABLE: while it waits for the head row, pg_locks shows its SIReadLocks, and the concurrent update it meets is a 40001 it retries', async () => {
    await commands.putQuota('ser', { name: 'compute', spec: { hard: { pods: '10' } } }, { actor: 'admin' });
    const blocker = new pg.Client({ connectionString: db.url });
    const observer = new pg.Client({ connectionString: db.url });
    await Promise.all([blocker.connect(), observer.connect()]);
    try {
      // Another replica's write holds the head row until it commits.
      await blocker.query('BEGIN');
      await blocker.query(`UPDATE namespace_heads SET updated_at = clock_timestamp() WHERE namespace = 'ser'`);
      const before = commands.stats.conflicts.serialization;
      const pending = commands.admit(admit('ser', pod('p1')));
      const siReadLocks = async (): Promise<number> =>
        Number(
          (
            await observer.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.mode = 'SIReadLock' AND d.datname = $1`,
              [db.name],
            )
          ).rows[0]?.n,
        );
      await until('the admission holding SIReadLocks', async () => ((await siReadLocks()) > 0 ? true : undefined), 10_000);
      // It reads in its snapshot, then waits for the row lock to write the head.
      await until('the admission waiting for the head row', async () => {
        const { rows } = await observer.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`, [db.name]);
        return rows.length > 0 ? true : undefined;
      });
      await blocker.query('COMMIT');
      const outcome = await pending;
      expect(outcome.result).toMatchObject({ allowed: true, code: 200 });
      expect(commands.stats.conflicts.serialization).toBeGreaterThan(before);
      const reserved = await db.dataSource.query(`SELECT count(*)::int AS n FROM ledger_events WHERE namespace = 'ser' AND type = 'Reserved'`);
      expect(reserved[0].n).toBe(1);
    } finally {
      await blocker.end();
      await observer.end();
    }
  });

  it('reads again what it prefetched outside its snapshot when the head moved in between: a commit of a reservation released meanwhile is refused', async () => {
    await commands.putQuota('moved', { name: 'compute', spec: { hard: { pods: '10' } } }, { actor: 'admin' });
    const { result } = await commands.admit(admit('moved', pod('m1')));
    const id = result.reservationId ?? '';
    let moved = false;
    // Between this command side's prefetch (which finds the reservation live) and its
    // transaction, another one releases it and moves the head.
    const racing = new LedgerCommands(db.dataSource, {
      retryBaseMs: 1,
      onPrefetched: async () => {
        if (moved) return;
        moved = true;
        await commands.release('moved', id, { actor: 'other-replica', reason: 'cancelled' });
      },
    });
    try {
      await expect(racing.commit('moved', id, { actor: 'x' })).rejects.toMatchObject({ code: 'Conflict', message: expect.stringContaining('was released (cancelled)') });
      expect(moved).toBe(true);
      const types = await db.dataSource.query(`SELECT type FROM ledger_events WHERE namespace = 'moved' ORDER BY version`);
      expect(types.map((t: { type: string }) => t.type)).toEqual(['QuotaDefined', 'Reserved', 'Released']);
    } finally {
      await racing.close();
    }
  });

  it('never admits over quota when admissions race on one namespace from two command sides (two pools, SERIALIZABLE and the compare-and-set)', async () => {
    await commands.putQuota('race', { name: 'compute', spec: { hard: { pods: '20' } } }, { actor: 'admin' });
    const other = new LedgerCommands(db.dataSource, { retryBaseMs: 1, batchSizeMax: 1 });
    try {
      const outcomes = await Promise.allSettled(Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? commands : other).admit(admit('race', pod(`r${i}`)))));
      const allowed = outcomes.filter((o) => o.status === 'fulfilled' && o.value.result.allowed).length;
      expect(allowed).toBe(20);
      const reserved = await db.dataSource.query(`SELECT count(*)::int AS n FROM ledger_events WHERE namespace = 'race' AND type = 'Reserved'`);
      expect(reserved[0].n).toBe(20);
    } finally {
      await other.close();
    }
  });
});

describe('migrations', () => {
  it('take turns under an advisory lock: two started at once on a fresh database apply each migration once', async () => {
    const fresh = await createMigratedDatabase('qlmig');
    try {
      // Start over on an empty schema, then migrate twice at once.
      await fresh.dataSource.query(`DROP SCHEMA public CASCADE; CREATE SCHEMA public`);
      const [a, b] = await Promise.all([runMigrationsLocked(fresh.dataSource), runMigrationsLocked(fresh.dataSource)]);
      expect(a.length + b.length).toBeGreaterThan(0);
      expect(Math.min(a.length, b.length)).toBe(0);
      const applied = await fresh.dataSource.query(`SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name HAVING count(*) > 1`);
      expect(applied).toEqual([]);
    } finally {
      await fresh.drop();
    }
  });

  it('wait while another holds the lock', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
      let done = false;
      const migrating = runMigrationsLocked(db.dataSource).then((applied) => {
        done = true;
        return applied;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(done).toBe(false);
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]);
      expect(await migrating).toEqual([]);
    } finally {
      await holder.end();
    }
  });
});
