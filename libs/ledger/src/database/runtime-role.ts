import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { MIGRATION_LOCK_KEY } from './data-source.js';

/**
 * Two database roles (DATABASE_RUNTIME_ROLE): the one that owns the schema runs the migrations
 * (and `npm run ledger:archive`, which detaches and drops partitions); the apps connect as another,
 * which holds only what their statements need. An owner may ALTER its tables, and so disable the
 * append-only triggers of `ledger_events` and `admission_decisions` and rewrite history; the
 * runtime role may not: it can append, never UPDATE, DELETE or TRUNCATE them, and holds no DDL.
 *
 * What each relation of the schema grants the runtime role, read from the statements of
 * libs/ledger (flush-statement.ts writes heads, events, reservations and decisions;
 * projection*.ts the read models, which a rebuild truncates). A relation of `public` missing here
 * gets nothing, and test/integration/runtime-role.test.ts fails until it is added.
 */
export const RUNTIME_GRANTS: Readonly<Record<string, readonly Privilege[]>> = {
  // Append-only: the triggers refuse UPDATE, DELETE and TRUNCATE, and the role may not change them.
  ledger_events: ['SELECT', 'INSERT'],
  admission_decisions: ['SELECT', 'INSERT'],
  // The write path's heads and reservations: moved by compare-and-set, never deleted.
  namespace_heads: ['SELECT', 'INSERT', 'UPDATE'],
  shared_quota_heads: ['SELECT', 'INSERT', 'UPDATE'],
  reservations: ['SELECT', 'INSERT', 'UPDATE'],
  // The read models, rebuilt from the ledger at will (`--rebuild` truncates them).
  projection_checkpoints: ['SELECT', 'INSERT', 'UPDATE'],
  projected_namespaces: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
  projected_definitions: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
  projected_reservations: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
  projected_used_versions: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
  projected_quota_versions: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
  usage_snapshots: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
  projected_shared_usage: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
  projected_shared_unordered: ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE'],
  projected_quota_usage: ['SELECT'],
  // Written by the archive (the owner's); read for usage at an instant and the horizon.
  ledger_retention: ['SELECT'],
  ledger_horizon_states: ['SELECT'],
  // The owner's alone.
  schema_migrations: [],
  ledger_event_partitions: [],
};

export type Privilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE' | 'TRUNCATE';

/**
 * The one function the runtime role may call: the projection worker makes the months ahead of
 * `ledger_events` with it (ledger-partitions.ts). It is SECURITY DEFINER (migrations/1795900001700):
 * it runs as the owner, and can only add partitions and move DEFAULT's rows into them.
 */
export const RUNTIME_FUNCTIONS = ['ledger_events_make_partitions(integer)'] as const;

/** BullMQ's PostgreSQL backend (no REDIS_URL) keeps the reconcile queue in this schema (libs/jobs QUEUE_SCHEMA). */
const QUEUE_SCHEMA = 'bullmq';

export interface RuntimeGrants {
  readonly role: string;
  /** Relations of `public` granted something. */
  readonly relations: number;
  /** Relations of `public` RUNTIME_GRANTS does not name: they got nothing. */
  readonly unknown: readonly string[];
}

/** Why a role cannot be the runtime role, or undefined. */
async function unfitness(client: pg.ClientBase, role: string): Promise<string | undefined> {
  const { rows } = await client.query<{ superuser: boolean; owner: string | null; is_current: boolean; acts_as_owner: boolean | null }>(
    `SELECT r.rolsuper AS superuser, o.owner, r.rolname = current_user AS is_current,
            pg_has_role(r.rolname, o.owner, 'USAGE') AS acts_as_owner
       FROM pg_roles r
       LEFT JOIN (SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE oid = to_regclass('public.ledger_events')) o ON true
      WHERE r.rolname = $1`,
    [role],
  );
  const row = rows[0];
  if (!row)
    return `role ${role} does not exist: create it first (CREATE ROLE ${role} LOGIN PASSWORD '…'; CloudNativePG: spec.managed.roles)`;
  if (row.superuser)
    return `role ${role} is a superuser: it could disable the append-only triggers (session_replication_role); give the apps a role that is not`;
  if (row.owner === role) return `role ${role} owns ledger_events: migrate as the owner, and give the apps a role that owns nothing`;
  if (row.is_current) return `role ${role} is the one migrating, which owns the schema: the apps need a role of their own`;
  if (row.acts_as_owner)
    return `role ${role} is a member of ${row.owner ?? 'the owner'}, which owns the schema: it could ALTER the tables as that role`;
  return undefined;
}

/**
 * Gives `role` exactly RUNTIME_GRANTS on the schema `public` (everything else revoked first, so a
 * privilege removed here is removed there), EXECUTE on RUNTIME_FUNCTIONS, and the queue's schema.
 * Idempotent: `npm run migrate` runs it after every migration. Run by the owner.
 */
export async function grantRuntimeRole(dataSource: DataSource, role: string): Promise<RuntimeGrants> {
  const runner = dataSource.createQueryRunner();
  try {
    const client = (await runner.connect()) as pg.PoolClient;
    const problem = await unfitness(client, role);
    if (problem) throw new Error(`DATABASE_RUNTIME_ROLE: ${problem}`);
    const grantee = quoteIdent(role);
    await runner.startTransaction();
    try {
      // Under the migrations' lock: the Job and the API pods' initContainers migrate at once, and
      // two GRANTs of one object at once fail ("tuple concurrently updated").
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
      await client.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${grantee}`);
      await client.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ${grantee}`);
      await client.query(`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM ${grantee}`);
      await client.query(`REVOKE CREATE ON SCHEMA public FROM ${grantee}`);
      await client.query(`GRANT USAGE ON SCHEMA public TO ${grantee}`);
      const { rows } = await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition ORDER BY c.relname`,
      );
      const unknown: string[] = [];
      let relations = 0;
      for (const { name } of rows) {
        const privileges = RUNTIME_GRANTS[name];
        if (privileges === undefined) unknown.push(name);
        if (!privileges || privileges.length === 0) continue;
        await client.query(`GRANT ${privileges.join(', ')} ON TABLE public.${quoteIdent(name)} TO ${grantee}`);
        relations++;
      }
      // Identity columns draw from their sequences (ledger_events.position, admission_decisions.id).
      await client.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${grantee}`);
      for (const fn of RUNTIME_FUNCTIONS) await client.query(`GRANT EXECUTE ON FUNCTION public.${fn} TO ${grantee}`);
      await grantQueueSchema(client, grantee);
      await runner.commitTransaction();
      return { role, relations, unknown };
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    }
  } finally {
    await runner.release();
  }
}

/**
 * The queue's schema, made by the migration (libs/jobs migrateQueueSchema) and owned by its role:
 * the runtime role may use every queue table and function in it, and create in it (BullMQ makes
 * a sequence of job ids per queue as it goes). It holds no ledger data, and nothing the owner runs
 * searches it: what the role may do there is the reconcile jobs' business only.
 */
async function grantQueueSchema(client: pg.ClientBase, grantee: string): Promise<void> {
  const schema = quoteIdent(QUEUE_SCHEMA);
  const { rows } = await client.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [QUEUE_SCHEMA]);
  if (rows.length === 0) return;
  await client.query(`GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${grantee}`);
  await client.query(`GRANT ALL ON ALL TABLES IN SCHEMA ${schema} TO ${grantee}`);
  await client.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA ${schema} TO ${grantee}`);
  await client.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schema} TO ${grantee}`);
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
