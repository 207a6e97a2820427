import type { DataSource } from 'typeorm';

/**
 * A database written before names were bounded: the namespace's decisions, Reserved
 * events and reservations are rewritten in place to carry a name of `bytes` random hex
 * characters (which PostgreSQL cannot compress, as a random name; or `repeated`, one letter, which
 * it stores a hundred times smaller), and its decisions a message
 * that repeats it, as the API server words a denial. The ledger's tables are append-only; the
 * rewrite goes past their triggers as a replica's apply would (session_replication_role). The
 * name is made by PostgreSQL, so it never crosses the test's own heap.
 */
export type Rewritten = 'decisions' | 'events' | 'reservations';

export async function rewriteWithHugeNames(
  dataSource: DataSource,
  namespace: string,
  bytes: number,
  fill: 'random' | 'repeated' = 'random',
  tables: readonly Rewritten[] = ['decisions', 'events', 'reservations'],
): Promise<void> {
  await dataSource.transaction(async (manager) => {
    await manager.query(`SET LOCAL session_replication_role = replica`);
    const made = fill === 'random' ? `left(string_agg(md5(g::text || random()::text), ''), $1)` : `repeat('a', $1)`;
    await manager.query(`CREATE TEMP TABLE huge ON COMMIT DROP AS SELECT ${made} AS name FROM generate_series(1, $2) g`, [
      bytes,
      fill === 'random' ? Math.ceil(bytes / 32) : 1,
    ]);
    if (tables.includes('decisions'))
      await manager.query(
        `UPDATE admission_decisions d SET name = huge.name, result = jsonb_set(d.result, '{message}', to_jsonb('configmaps "' || huge.name || '" is forbidden: exceeded quota'))
         FROM huge WHERE d.namespace = $1`,
        [namespace],
      );
    if (tables.includes('events'))
      await manager.query(
        `UPDATE ledger_events e SET data = jsonb_set(e.data, '{object,name}', to_jsonb(huge.name)) FROM huge WHERE e.namespace = $1 AND e.type = 'Reserved'`,
        [namespace],
      );
    if (tables.includes('reservations'))
      await manager.query(
        `UPDATE reservations r SET data = jsonb_set(r.data, '{object,name}', to_jsonb(huge.name)) FROM huge WHERE r.namespace = $1`,
        [namespace],
      );
  });
}
