import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { Pod } from '@quota/domain';
import { createPostgresInventory } from '@quota/inventory';
import { FAN_OUT_JOB, type QueueBackend } from '@quota/jobs';
import { buildDataSourceOptions, DefinitionQueries, LedgerCommands, runMigrationsLocked } from '@quota/ledger';
import { DataSource } from 'typeorm';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import { createDatabase } from './postgres.js';

/**
 * The reconciler over `namespaces` × 100 objects: per namespace 90 reserved objects that exist
 * (to commit), 10 reservations whose object never appeared (to release) and 10 objects
 * admitted by no one (to adopt). Seeded through the ledger (admissions) and a platform table
 * read by the postgres inventory source; then one fan-out on BullMQ over Redis, timed until
 * every correction is appended. The reconciler runs in this process, with the production
 * default concurrency (RECONCILE_CONCURRENCY=4).
 */
const EXISTING = 90;
const LOST = 10;
const UNADMITTED = 10;
export const OBJECTS_PER_NAMESPACE = EXISTING + UNADMITTED;

export interface ReconcileFigures {
  readonly namespaces: number;
  readonly objects: number;
  readonly seconds: number;
  readonly namespacesPerSecond: number;
  readonly committed: number;
  readonly released: number;
  readonly adopted: number;
  /** Corrections expected but not made, or made twice: must be 0. */
  readonly wrong: number;
}

const podOf = (namespace: string, j: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p${j}`, namespace, uid: `${namespace}-u${j}` },
  spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '1m' } } }] },
});

/** Length: a benchmark's phases, in the order they run. */
export async function reconcileBench(namespaces: number, redisUrl: string, concurrency = 4): Promise<ReconcileFigures> {
  const db = await createDatabase('reconcile');
  const dataSource = new DataSource(buildDataSourceOptions({ url: db.url, poolSize: 8 }));
  const backend: QueueBackend = { kind: 'redis', url: redisUrl, prefix: `qlbench-${randomBytes(4).toString('hex')}` };
  let reconciler: Reconciler | undefined;
  const ledger = () => new LedgerCommands(dataSource, { retryMax: 12 });
  try {
    await dataSource.initialize();
    await runMigrationsLocked(dataSource);
    const seeding = ledger();
    const names = Array.from({ length: namespaces }, (_, i) => `team-${String(i).padStart(4, '0')}`);
    // Sixteen namespaces at a time, each namespace's 100 admissions submitted together: the
    // ledger batches them into a couple of transactions.
    for (let i = 0; i < names.length; i += 16) {
      await Promise.all(
        names.slice(i, i + 16).map(async (namespace) => {
          await seeding.putQuota(
            namespace,
            { name: 'compute', spec: { hard: { pods: '1000', 'requests.cpu': '10' } } },
            { actor: 'bench' },
          );
          const results = await Promise.all(
            Array.from({ length: EXISTING + LOST }, (_, j) =>
              seeding.admit({
                namespace,
                source: 'webhook',
                request: {
                  operation: 'CREATE',
                  groupResource: { group: '', resource: 'pods' },
                  namespace,
                  name: `p${j}`,
                  object: podOf(namespace, j),
                },
                requestKey: `seed:${namespace}:${j}`,
                dryRun: false,
                requester: 'bench',
              }),
            ),
          );
          if (results.some(({ result }) => !result.allowed)) throw new Error(`seeding ${namespace}: an admission was denied`);
        }),
      );
    }
    await seeding.close();
    await dataSource.query(
      `CREATE TABLE platform_objects (namespace text NOT NULL, kind text NOT NULL, name text, uid text, object jsonb NOT NULL)`,
    );
    const rows = names.flatMap((namespace) =>
      [...Array.from({ length: EXISTING }, (_, j) => j), ...Array.from({ length: UNADMITTED }, (_, k) => EXISTING + LOST + k)].map((j) =>
        podOf(namespace, j),
      ),
    );
    for (let i = 0; i < rows.length; i += 5000) {
      const chunk = rows.slice(i, i + 5000);
      await dataSource.query(
        `INSERT INTO platform_objects SELECT o->'metadata'->>'namespace', 'Pod', o->'metadata'->>'name', o->'metadata'->>'uid', o FROM jsonb_array_elements($1::jsonb) o`,
        [JSON.stringify(chunk)],
      );
    }
    await dataSource.query(`CREATE INDEX ON platform_objects (namespace, kind)`);
    await dataSource.query('ANALYZE');

    const working = ledger();
    const definitions = new DefinitionQueries(dataSource);
    const port = {
      now: () => working.now(),
      reconcile: working.reconcile.bind(working),
      namespaces: definitions.namespaces.bind(definitions),
    };
    reconciler = new Reconciler(port, createPostgresInventory({ url: db.url, relation: 'platform_objects' }), backend, {
      intervalMs: 3_600_000,
      graceMs: 0,
      concurrency,
      actor: 'bench:reconciler',
    });
    const expected = { committed: EXISTING * namespaces, released: LOST * namespaces, adopted: UNADMITTED * namespaces };
    const t0 = performance.now();
    await reconciler.start();
    await reconciler.queue.add(FAN_OUT_JOB, { namespace: '', reason: 'bench' }, { jobId: 'bench-fan-out', removeOnComplete: true });
    const deadline = Date.now() + 600_000;
    const stats = reconciler.stats;
    while (stats.committed < expected.committed || stats.released < expected.released || stats.adopted < expected.adopted) {
      if (Date.now() > deadline) throw new Error(`the reconciler did not finish within 600 s: ${JSON.stringify(stats)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - t0) / 1000;
    await reconciler.queue.obliterate({ force: true });
    await reconciler.stop();
    reconciler = undefined;
    await working.close();
    const counts = await dataSource.query<{ type: string; n: string; distinct_ids: string }[]>(
      `SELECT type, count(*) AS n, count(DISTINCT coalesce(data->>'reservationId', '')) AS distinct_ids FROM ledger_events
        WHERE type IN ('Committed', 'Released', 'Adopted') GROUP BY type`,
    );
    const count = (type: string): number => Number(counts.find((c) => c.type === type)?.n ?? 0);
    const wrong =
      Math.abs(count('Committed') - expected.committed) +
      Math.abs(count('Released') - expected.released) +
      Math.abs(count('Adopted') - expected.adopted) +
      counts.reduce((sum, c) => sum + (Number(c.n) - Number(c.distinct_ids)), 0);
    return {
      namespaces,
      objects: namespaces * OBJECTS_PER_NAMESPACE,
      seconds,
      namespacesPerSecond: namespaces / seconds,
      committed: count('Committed'),
      released: count('Released'),
      adopted: count('Adopted'),
      wrong,
    };
  } finally {
    if (reconciler) {
      await reconciler.queue.obliterate({ force: true }).catch(() => undefined);
      await reconciler.stop().catch(() => undefined);
    }
    if (dataSource.isInitialized) await dataSource.destroy();
    await db.drop();
  }
}
