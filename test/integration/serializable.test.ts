import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@quota/domain';
import { LedgerCommands, MIGRATION_LOCK_KEY, runMigrationsLocked, type AdmitCommand } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

/**
 * The write path's transaction as PostgreSQL sees it: SERIALIZABLE (its predicate locks are
 * there while it runs), a conflict with a concurrent writer is a 40001 that is retried whole, a
 * group commit spans namespaces and leaves out only the one another writer holds, and
 * migrations that start together take turns.
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
  it('is SERIALIZABLE: inside it pg_locks shows its SIReadLocks, and a row a concurrent writer changed under it is a 40001 it retries', async () => {
    await commands.putQuota('ser', { name: 'compute', spec: { hard: { pods: '10' } } }, { actor: 'admin' });
    const { result } = await commands.admit(admit('ser', pod('p1')));
    const id = result.reservationId ?? '';
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    let siReadLocks = -1;
    // Once the commit's transaction has read and locked its head, another writer changes the
    // reservation row the commit is about to update (a row lock on the head does not cover it).
    const seen = new LedgerCommands(db.dataSource, {
      retryBaseMs: 1,
      onLocked: async () => {
        if (siReadLocks >= 0) return;
        siReadLocks = Number(
          (
            await other.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.mode = 'SIReadLock' AND d.datname = $1`,
              [db.name],
            )
          ).rows[0]?.n,
        );
        await other.query(`UPDATE reservations SET request_id = request_id WHERE namespace = 'ser' AND reservation_id = $1`, [id]);
      },
    });
    try {
      const outcome = await seen.commit('ser', id, { actor: 'reconciler' });
      expect(outcome).toMatchObject({ changed: true, view: { state: 'committed' } });
      expect(siReadLocks).toBeGreaterThan(0);
      expect(seen.stats.conflicts.serialization).toBe(1);
      const types = await db.dataSource.query(`SELECT type FROM ledger_events WHERE namespace = 'ser' ORDER BY version`);
      expect(types.map((t: { type: string }) => t.type)).toEqual(['QuotaDefined', 'Reserved', 'Committed']);
    } finally {
      await seen.close();
      await other.end();
    }
  });

  it('groups commands of several namespaces in one transaction; a namespace whose head another writer holds waits on its own while the others commit', async () => {
    for (const namespace of ['held', 'free-a', 'free-b'])
      await commands.putQuota(namespace, { name: 'compute', spec: { hard: { pods: '10' } } }, { actor: 'admin' });
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    const grouped = new LedgerCommands(db.dataSource, { retryBaseMs: 1 });
    try {
      await blocker.query('BEGIN');
      await blocker.query(`UPDATE namespace_heads SET updated_at = clock_timestamp() WHERE namespace = 'held'`);
      const transactions = grouped.stats.transactions;
      const held = grouped.admit(admit('held', pod('h1')));
      let heldDone = false;
      void held.finally(() => (heldDone = true));
      // Submitted together: one group, one transaction for both free namespaces.
      const free = await Promise.all([
        grouped.admit(admit('free-a', pod('a1'))),
        grouped.admit(admit('free-a', pod('a2'))),
        grouped.admit(admit('free-b', pod('b1'))),
      ]);
      expect(free.map((o) => o.result.allowed)).toEqual([true, true, true]);
      expect(grouped.stats.transactions - transactions).toBe(1);
      expect(heldDone).toBe(false);
      expect(grouped.stats.conflicts.locked).toBeGreaterThan(0);
      await blocker.query('COMMIT');
      expect((await held).result.allowed).toBe(true);
      const reserved = await db.dataSource.query(
        `SELECT namespace, count(*)::int AS n FROM ledger_events WHERE namespace IN ('held', 'free-a', 'free-b') AND type = 'Reserved' GROUP BY namespace ORDER BY namespace`,
      );
      expect(reserved).toEqual([
        { namespace: 'free-a', n: 2 },
        { namespace: 'free-b', n: 1 },
        { namespace: 'held', n: 1 },
      ]);
    } finally {
      await blocker.end();
      await grouped.close();
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
      await expect(racing.commit('moved', id, { actor: 'x' })).rejects.toMatchObject({
        code: 'Conflict',
        message: expect.stringContaining('was released (cancelled)'),
      });
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
      const outcomes = await Promise.allSettled(
        Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? commands : other).admit(admit('race', pod(`r${i}`)))),
      );
      const allowed = outcomes.filter((o) => o.status === 'fulfilled' && o.value.result.allowed).length;
      expect(allowed).toBe(20);
      const reserved = await db.dataSource.query(
        `SELECT count(*)::int AS n FROM ledger_events WHERE namespace = 'race' AND type = 'Reserved'`,
      );
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
      const applied = await fresh.dataSource.query(
        `SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name HAVING count(*) > 1`,
      );
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
