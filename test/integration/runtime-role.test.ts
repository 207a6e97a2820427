import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { loadConfig } from '@quota/config';
import type { InventorySource } from '@quota/inventory';
import { migrateQueueSchema, reconcileQueue } from '@quota/jobs';
import {
  buildDataSourceOptions,
  ensureLedgerPartitions,
  grantRuntimeRole,
  LedgerCommands,
  DefinitionQueries,
  runMigrationsLocked,
  RUNTIME_GRANTS,
  UsageProjection,
} from '@quota/ledger';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmissionApi } from '../../apps/admission-api/src/app.js';
import { Reconciler } from '../../apps/reconciler/src/reconciler.js';
import type { Answer } from '../support/api.js';
import { TEST_PG_ADMIN_URL } from '../support/database.js';

/**
 * DATABASE_RUNTIME_ROLE on a real PostgreSQL: the schema migrated by a role that owns it (not a
 * superuser), the apps' role granted by `grantRuntimeRole`, then, as the apps' role, every way of
 * rewriting the append-only history refused, and the apps' work done: admissions through the API,
 * definitions, Namespace objects and shared quotas, the projection (and its rebuild), the months
 * ahead of ledger_events, a reconcile, the queue on PostgreSQL.
 *
 * The tests' server lets only `postgres` log in over TCP, so each session takes its role at
 * connection start (`options=-c role=…`, as `SET ROLE`): from then on PostgreSQL checks every
 * statement against that role's privileges alone, as for a login of it.
 */
const suffix = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const OWNER = `ql_owner_${suffix}`;
const RUNTIME = `ql_runtime_${suffix}`;
const DATABASE = `qlroles_${suffix}`;

/** The tests' server's URL of the database, each session as `role`; `searchPath` for BullMQ's unqualified names. */
function urlAs(role: string, searchPath?: string): string {
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${DATABASE}`;
  url.searchParams.set('options', `-c role=${role}${searchPath ? ` -c search_path=${searchPath}` : ''}`);
  return url.toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const open = (role: string): Promise<DataSource> => new DataSource(buildDataSourceOptions({ url: urlAs(role), poolSize: 2 })).initialize();

let owner: DataSource;
let runtime: DataSource;
let api: INestApplication | undefined;
let base = '';

beforeAll(async () => {
  await admin(`CREATE ROLE ${OWNER} NOLOGIN`);
  await admin(`CREATE ROLE ${RUNTIME} NOLOGIN`);
  await admin(`CREATE DATABASE ${DATABASE} OWNER ${OWNER}`);
  owner = await open(OWNER);
  await runMigrationsLocked(owner);
  await ensureLedgerPartitions(owner);
  // What `npm run migrate` does with DATABASE_RUNTIME_ROLE and no REDIS_URL: BullMQ's schema, as the owner.
  const client = new pg.Client({ connectionString: urlAs(OWNER) });
  await client.connect();
  await migrateQueueSchema(client).finally(() => client.end());
  const granted = await grantRuntimeRole(owner, RUNTIME);
  expect(granted.unknown).toEqual([]);

  runtime = await open(RUNTIME);
});

afterAll(async () => {
  await api?.close();
  await runtime?.destroy();
  await owner?.destroy();
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  for (const role of [RUNTIME, OWNER]) await admin(`DROP ROLE IF EXISTS ${role}`);
});

/** What a statement run as the runtime role fails with: its SQLSTATE and message. */
async function refusal(sql: string): Promise<{ code: string; message: string }> {
  const error = (await runtime.query(sql).then(
    () => ({ code: 'none', message: `${sql} succeeded` }),
    (e: unknown) => e,
  )) as { code?: string; message: string };
  return { code: error.code ?? 'none', message: error.message };
}

describe('the runtime role (DATABASE_RUNTIME_ROLE)', () => {
  it('is granted something or nothing, by name, on every relation of the schema', async () => {
    const relations = (await owner.query(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition ORDER BY 1`,
    )) as { name: string }[];
    expect(relations.map((r) => r.name).filter((name) => !(name in RUNTIME_GRANTS))).toEqual([]);
    const [{ owns } = { owns: undefined }] = (await owner.query(
      `SELECT pg_get_userbyid(relowner) AS owns FROM pg_class WHERE oid = 'ledger_events'::regclass`,
    )) as { owns: string }[];
    expect(owns).toBe(OWNER);
    const privileges = (await owner.query(
      `SELECT t AS "table", p AS privilege FROM unnest(ARRAY['ledger_events', 'admission_decisions']) t, unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES']) p
        WHERE has_table_privilege($1, t, p) ORDER BY 1, 2`,
      [RUNTIME],
    )) as { table: string; privilege: string }[];
    expect(privileges.map((r) => `${r.table} ${r.privilege}`)).toEqual([
      'admission_decisions INSERT',
      'admission_decisions SELECT',
      'ledger_events INSERT',
      'ledger_events SELECT',
    ]);
  });

  it('cannot disable the append-only triggers, rewrite or empty the history, or change the schema', async () => {
    const [{ partition } = { partition: '' }] = (await owner.query(
      `SELECT partition FROM ledger_event_partitions ORDER BY range_start DESC LIMIT 1`,
    )) as { partition: string }[];
    const statements = [
      'ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_update_delete',
      'ALTER TABLE ledger_events DISABLE TRIGGER ALL',
      `ALTER TABLE ${partition} DISABLE TRIGGER ALL`,
      'ALTER TABLE admission_decisions DISABLE TRIGGER admission_decisions_no_update_delete',
      'DROP TRIGGER ledger_events_no_truncate ON ledger_events',
      "SET session_replication_role = 'replica'",
      'CREATE OR REPLACE FUNCTION ledger_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$',
      "UPDATE ledger_events SET actor = 'someone else'",
      'DELETE FROM ledger_events',
      'TRUNCATE ledger_events',
      `UPDATE ${partition} SET actor = 'someone else'`,
      `TRUNCATE ${partition}`,
      'UPDATE admission_decisions SET allowed = true',
      'DELETE FROM admission_decisions',
      'TRUNCATE admission_decisions',
      'DROP TABLE ledger_events',
      `ALTER TABLE ledger_events DETACH PARTITION ${partition}`,
      'CREATE TABLE public.shadow (x int)',
      "SELECT ledger_events_add_partition('2300-01-01T00:00:00Z')",
    ];
    const answers = await Promise.all(statements.map(async (sql) => ({ sql, ...(await refusal(sql)) })));
    // 42501: insufficient_privilege (permission denied, must be owner, permission to set a parameter).
    expect(answers.filter((a) => a.code !== '42501')).toEqual([]);
    // The owner could (in a transaction rolled back): the split of roles is what stops it.
    const runner = owner.createQueryRunner();
    try {
      await runner.startTransaction();
      await expect(runner.query('ALTER TABLE ledger_events DISABLE TRIGGER ledger_events_no_update_delete')).resolves.toBeDefined();
      await runner.rollbackTransaction();
    } finally {
      await runner.release();
    }
  });

  it("does the apps' work: admissions, definitions, namespaces and shared quotas, the projection, partitions, a reconcile, the queue", async () => {
    api = await createAdmissionApi({
      ...loadConfig({}),
      host: '127.0.0.1',
      port: 0,
      logLevel: 'error',
      databaseUrl: urlAs(RUNTIME),
      databaseRuntimeRole: RUNTIME,
      databasePoolSize: 4,
      insecureDev: true,
      rateLimitPerSecond: 0,
    });
    await api.listen(0, '127.0.0.1');
    base = (await api.getUrl()).replace('[::1]', '127.0.0.1');
    const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: await response.json() } as Answer;
    };
    expect(
      (
        await call('PUT', '/v1/namespaces/roles-a', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'roles-a', labels: { tenant: 'roles' } },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('PUT', '/v1/namespaces/roles-a/resourcequotas/pods', {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          spec: { hard: { pods: '1' } },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('PUT', '/v1/clusterresourcequotas/roles', {
          apiVersion: 'quota.openshift.io/v1',
          kind: 'ClusterResourceQuota',
          spec: { selector: { labels: { matchLabels: { tenant: 'roles' } } }, quota: { hard: { pods: '5' } } },
        })
      ).status,
    ).toBe(201);
    const review = (name: string) => ({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: `roles-${name}`,
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        namespace: 'roles-a',
        name,
        operation: 'CREATE',
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: 'roles-a', uid: `uid-${name}` },
          spec: { containers: [{ name: 'c', image: 'x' }] },
        },
      },
    });
    expect((await call('POST', '/v1/admission/validate', review('first'))).body.response).toMatchObject({ allowed: true });
    expect((await call('POST', '/v1/admission/validate', review('second'))).body.response).toMatchObject({
      allowed: false,
      status: { code: 403 },
    });

    const projection = new UsageProjection(runtime);
    expect(await projection.catchUp()).toBeGreaterThan(0);
    expect(await projection.rebuild()).toBeGreaterThan(0);

    // One month more than the owner made: made through the SECURITY DEFINER function, owned by the owner.
    const made = await ensureLedgerPartitions(runtime, 3);
    expect(made).toHaveLength(1);
    expect(await owner.query(`SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relname = $1`, [made[0]])).toEqual([
      { owner: OWNER },
    ]);

    // The reconciler's correction: the pod the webhook reserved is listed, so committed.
    const commands = new LedgerCommands(runtime, {});
    const listed: InventorySource = {
      kind: 'test',
      covers: [{ group: '', resource: 'pods' }],
      list: async (namespace) => ({
        namespace,
        covers: [{ group: '', resource: 'pods' }],
        objects: [
          { groupResource: { group: '', resource: 'pods' }, uid: 'uid-first', name: 'first', object: review('first').request.object },
        ],
      }),
      close: async () => undefined,
    };
    const queue = { kind: 'postgres', url: urlAs(RUNTIME, 'bullmq'), schema: 'bullmq', migrate: false } as const;
    const reconciler = new Reconciler(
      {
        now: () => commands.now(),
        reconcile: commands.reconcile.bind(commands),
        namespaces: new DefinitionQueries(runtime).namespaces.bind(new DefinitionQueries(runtime)),
      },
      listed,
      queue,
      { intervalMs: 3_600_000, graceMs: 0, concurrency: 1, watch: false },
    );
    try {
      const outcome = await reconciler.reconcileNamespace('roles-a');
      expect(outcome.actions).toEqual([expect.objectContaining({ kind: 'commit', uid: 'uid-first' })]);
    } finally {
      await reconciler.stop();
      await commands.close();
    }
    // BullMQ's PostgreSQL backend, as the runtime role: the tables the migration made in the schema bullmq.
    const jobs = reconcileQueue(queue);
    try {
      await jobs.add('probe', { namespace: 'roles-a', reason: 'test' });
      expect(await jobs.getJobCounts('wait')).toEqual({ wait: 1 });
    } finally {
      await jobs.close();
    }
  });
});
