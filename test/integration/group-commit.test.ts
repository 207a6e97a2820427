import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evolve, fold, initialState, Resources, type RecordedEvent } from '@quota/domain';
import { LedgerCommands } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { poolOf } from '../support/api.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

/**
 * Group commits from two processes that span the same namespaces: each process decides many
 * namespaces per transaction, and the two keep meeting on the same heads. Afterwards every
 * stream is gap-free, never held more than the hard limit at any version, and every head row
 * (version, usage, live reservations) is exactly the fold of its stream.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NAMESPACES = Array.from({ length: 8 }, (_, i) => `race-${i}`);
const HARD = 12;
const ADMISSIONS = 240;

let db: TestDatabase & { dataSource: DataSource };
let pool: pg.Pool;

beforeAll(async () => {
  db = await createMigratedDatabase('qlgroup');
  pool = poolOf(db.dataSource);
});
afterAll(async () => {
  await db?.drop();
});

interface Told {
  readonly allowed: number;
  readonly denied: number;
  readonly committed: number;
  readonly released: number;
  readonly errors: string[];
  readonly transactions: number;
  readonly commands: number;
}

function racer(name: string): Promise<Told> {
  return new Promise((resolve, reject) => {
    const child = spawn(`${ROOT}node_modules/.bin/tsx`, ['--tsconfig', 'tsconfig.json', 'test/support/group-commit-racer.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        NAMESPACES: NAMESPACES.join(','),
        ADMISSIONS: String(ADMISSIONS),
        CLIENTS: '48',
        NAME: name,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`racer ${name} exited ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Told);
    });
  });
}

async function streamOf(namespace: string): Promise<RecordedEvent[]> {
  const { rows } = await pool.query<{ version: string; type: string; data: unknown; at_ms: number }>(
    `SELECT version, type, data, (extract(epoch from recorded_at) * 1000)::float8 AS at_ms FROM ledger_events WHERE namespace = $1 ORDER BY version`,
    [namespace],
  );
  return rows.map((r) => ({ type: r.type, data: r.data, version: Number(r.version), at: Math.floor(r.at_ms) }) as RecordedEvent);
}

describe('group commits from two processes over the same namespaces', () => {
  it('admit exactly what fits, and leave every head equal to the fold of its stream', async () => {
    const setup = new LedgerCommands(db.dataSource);
    await Promise.all(
      NAMESPACES.map((namespace) =>
        setup.putQuota(namespace, { name: 'compute', spec: { hard: { pods: String(HARD) } } }, { actor: 'admin' }),
      ),
    );
    await setup.close();

    const [a, b] = await Promise.all([racer('a'), racer('b')]);
    expect([...a.errors, ...b.errors]).toEqual([]);
    // Each process put several namespaces' commands in one transaction.
    expect(a.commands / a.transactions).toBeGreaterThan(1.5);
    expect(b.commands / b.transactions).toBeGreaterThan(1.5);
    expect(a.allowed + b.allowed + a.denied + b.denied).toBe(2 * ADMISSIONS);

    let reserved = 0;
    let releases = 0;
    for (const namespace of NAMESPACES) {
      const stream = await streamOf(namespace);
      expect(stream.map((e) => e.version)).toEqual(stream.map((_, i) => i + 1));
      // At no version did the namespace hold more pods than its hard limit.
      let state = initialState();
      let most = 0;
      for (const event of stream) {
        state = evolve(state, event);
        most = Math.max(most, state.reservations.size);
      }
      // Two thirds of what is allowed stays live and 60 try per namespace, so it fills up: exactly to the hard limit.
      expect(most).toBe(HARD);
      reserved += stream.filter((e) => e.type === 'Reserved').length;
      releases += stream.filter((e) => e.type === 'Released').length;

      const folded = fold(stream);
      const { rows } = await pool.query<{
        version: string;
        state: { quotas: { definition: { name: string }; used: Record<string, string> }[] };
      }>(`SELECT version, state FROM namespace_heads WHERE namespace = $1`, [namespace]);
      const head = rows[0];
      expect(Number(head?.version)).toBe(stream.length);
      expect(
        Object.fromEntries(
          (head?.state.quotas ?? []).map((q) => [q.definition.name, Resources.canonicalResourceList(Resources.resourceList(q.used))]),
        ),
      ).toEqual(
        Object.fromEntries(
          [...folded.quotas.keys()].map((name) => [name, Resources.canonicalResourceList(folded.used.get(name) ?? Resources.EMPTY)]),
        ),
      );
      const live = await pool.query<{ id: string }>(
        `SELECT reservation_id AS id FROM reservations WHERE namespace = $1 AND status <> 'released' ORDER BY reservation_id`,
        [namespace],
      );
      expect(live.rows.map((r) => r.id)).toEqual([...folded.reservations.keys()].sort());
    }
    // Every allowed answer is one Reserved event, and every release a caller was told of is one Released event.
    expect(reserved).toBe(a.allowed + b.allowed);
    expect(releases).toBe(a.released + b.released);
  }, 120_000);

  it('fail only the command PostgreSQL refuses: the rest of its group, in its namespace and in others, commits', async () => {
    const commands = new LedgerCommands(db.dataSource, { retryBaseMs: 1 });
    try {
      const spaces = ['poison-a', 'poison-b', 'poison-c', 'poison-d', 'poison-e'];
      await Promise.all(
        spaces.map((namespace) => commands.putQuota(namespace, { name: 'compute', spec: { hard: { pods: '10' } } }, { actor: 'admin' })),
      );
      const admit = (namespace: string, name: string, requester: string) =>
        commands.admit({
          namespace,
          source: 'rest',
          request: {
            operation: 'CREATE',
            groupResource: { group: '', resource: 'pods' },
            namespace,
            name,
            object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, uid: `uid-${name}` }, spec: { containers: [] } },
          },
          requestKey: `req-${name}`,
          dryRun: false,
          requester,
        });
      const transactions = commands.stats.transactions;
      // Submitted together, so they share one group; jsonb cannot hold the NUL in one requester.
      const outcomes = await Promise.allSettled([
        ...spaces.map((namespace) => admit(namespace, `${namespace}-1`, 'alice')),
        admit('poison-c', 'poison-c-2', 'evil\u0000'),
        admit('poison-c', 'poison-c-3', 'alice'),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
      ]);
      // One group; then halves of its namespaces; then the poisoned namespace's commands one by one.
      expect(commands.stats.transactions - transactions).toBeLessThanOrEqual(1 + 2 * 3 + 3);
      const reserved = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_events WHERE namespace LIKE 'poison-%' AND type = 'Reserved'`,
      );
      expect(reserved.rows[0]?.n).toBe(6);
    } finally {
      await commands.close();
    }
  });
});
