import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createInventorySource,
  createPostgresInventory,
  KNOWN_KINDS,
  type InventorySource,
  type PostgresInventoryOptions,
} from '@quota/inventory';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { inventoryFailure } from '../support/inventory.js';
import { hammerWhileTerminating } from '../support/terminate.js';

const pod = (name: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', uid: uidOf(name), ...metadata },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { cpu: '100m' } } }] },
});
/** A stable uuid per name, as the platform's objects carry. */
const uidOf = (name: string) => `00000000-0000-4000-8000-${Buffer.from(name).toString('hex').padStart(12, '0').slice(-12)}`;

describe('postgres inventory source, on a table or view in the platform’s own database', () => {
  let db: TestDatabase;
  let admin: pg.Client;
  const sources: InventorySource[] = [];
  const source = (options: Omit<PostgresInventoryOptions, 'url'>) => {
    const created = createPostgresInventory({ url: db.url, ...options });
    sources.push(created);
    return created;
  };
  const failure = inventoryFailure;

  beforeAll(async () => {
    db = await createTestDatabase('qlinvpg');
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA platform`);
    await admin.query(
      `CREATE TABLE platform.objects (namespace text NOT NULL, kind text NOT NULL, name text, uid uuid, object jsonb NOT NULL)`,
    );
    const insert = (namespace: string, kind: string, name: string | null, uid: string | null, object: unknown) =>
      admin.query(`INSERT INTO platform.objects VALUES ($1, $2, $3, $4, $5)`, [namespace, kind, name, uid, JSON.stringify(object)]);
    await insert('team-a', 'Pod', 'a', uidOf('a'), pod('a'));
    await insert('team-a', 'Pod', 'b', uidOf('b'), pod('b'));
    await insert('team-a', 'Deployment', 'web', uidOf('web'), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team-a', uid: uidOf('web') },
      spec: { replicas: 2 },
    });
    await insert('team-a', 'ConfigMap', 'settings', uidOf('settings'), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'team-a', uid: uidOf('settings') },
      data: {},
    });
    // Not a well-known kind: never fetched, whatever it holds.
    await insert('team-a', 'Widget', 'w', null, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } });
    await insert('team-b', 'Pod', 'c', uidOf('c'), pod('c', { namespace: 'team-b' }));
    // Rows that contradict themselves, one namespace each.
    await insert('no-uid', 'Pod', 'orphan', null, pod('orphan', { namespace: 'no-uid', uid: undefined }));
    await insert('kind-mismatch', 'Pod', 'x', uidOf('x'), { ...pod('x', { namespace: 'kind-mismatch' }), kind: 'Service' });
    await insert('group-mismatch', 'Deployment', 'old', uidOf('old'), {
      apiVersion: 'extensions/v1beta1',
      kind: 'Deployment',
      metadata: { name: 'old', uid: uidOf('old') },
    });
    await insert('uid-mismatch', 'Pod', 'y', uidOf('y'), pod('y', { namespace: 'uid-mismatch', uid: uidOf('z') }));
    await insert('twice', 'Pod', 'p', uidOf('p'), pod('p', { namespace: 'twice' }));
    await insert('twice', 'Pod', 'p', uidOf('p'), pod('p', { namespace: 'twice' }));

    // Another platform keeps its own shape; a view adapts it (uid as uuid, the object as text).
    await admin.query(`CREATE TABLE platform.workloads (tenant text, object_kind text, object_name text, object_uid uuid, manifest text)`);
    await admin.query(
      `INSERT INTO platform.workloads VALUES ('team-a', 'Pod', 'from-view', $1, $2), ('team-a', 'Service', 'svc', $3, $4)`,
      [
        uidOf('from-view'),
        // No metadata.name or uid: the columns supply them.
        JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: { containers: [] } }),
        uidOf('svc'),
        JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', uid: uidOf('svc') }, spec: { type: 'ClusterIP' } }),
      ],
    );
    await admin.query(
      `CREATE VIEW platform.inventory AS SELECT tenant AS namespace, object_kind AS kind, object_name AS name, object_uid AS uid, manifest AS object FROM platform.workloads`,
    );
    await admin.query(`CREATE VIEW platform.wrong_shape AS SELECT tenant AS namespace, object_kind AS kind FROM platform.workloads`);
    await admin.query(`CREATE VIEW platform.slow AS SELECT o.* FROM platform.objects o, pg_sleep(30)`);
  });
  afterAll(async () => {
    await Promise.all(sources.map((s) => s.close()));
    await admin?.end();
    await db?.drop();
  });

  it('lists one namespace from a table: every covered object whole, with its resource, uid and name', async () => {
    const inventory = await source({ relation: 'platform.objects' }).list('team-a');
    expect(inventory.namespace).toBe('team-a');
    expect(inventory.covers).toHaveLength(KNOWN_KINDS.length);
    const byName = [...inventory.objects].sort((x, y) => x.name.localeCompare(y.name));
    expect(byName.map((o) => [o.groupResource, o.name, o.uid])).toEqual([
      [{ group: '', resource: 'pods' }, 'a', uidOf('a')],
      [{ group: '', resource: 'pods' }, 'b', uidOf('b')],
      [{ group: '', resource: 'configmaps' }, 'settings', uidOf('settings')],
      [{ group: 'apps', resource: 'deployments' }, 'web', uidOf('web')],
    ]);
    expect(byName[0]?.object).toEqual(pod('a'));
  });

  it('lists from a view that adapts another shape, filling name, uid and namespace from the columns', async () => {
    const inventory = await source({ relation: 'platform.inventory' }).list('team-a');
    const fromView = inventory.objects.find((o) => o.name === 'from-view');
    expect(fromView).toEqual({
      groupResource: { group: '', resource: 'pods' },
      uid: uidOf('from-view'),
      name: 'from-view',
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'from-view', uid: uidOf('from-view'), namespace: 'team-a' },
        spec: { containers: [] },
      },
    });
    expect(inventory.objects.map((o) => o.name).sort()).toEqual(['from-view', 'svc']);
  });

  it('lists only the resources it covers, reads a relation name as PostgreSQL would, and answers an empty namespace with nothing', async () => {
    const pods = source({ relation: 'Platform.Objects', resources: [{ group: '', resource: 'pods' }] });
    expect(pods.covers).toEqual([{ group: '', resource: 'pods' }]);
    expect((await pods.list('team-a')).objects.map((o) => o.name).sort()).toEqual(['a', 'b']);
    expect((await pods.list('nobody-here')).objects).toEqual([]);
  });

  it('is created from its configuration by createInventorySource', async () => {
    const created = createInventorySource({ source: 'postgres', databaseUrl: db.url, relation: 'platform.objects', timeoutMs: 5000 });
    sources.push(created);
    expect((await created.list('team-b')).objects.map((o) => o.name)).toEqual(['c']);
  });

  it.each([
    ['a row with no uid in column or object, naming it', 'no-uid', /namespace no-uid: Pod no-uid\/orphan has no metadata.uid/],
    ['a kind column the object contradicts', 'kind-mismatch', /row Pod x: the kind column says Pod, the object says Service/],
    [
      'an apiVersion outside the kind’s group',
      'group-mismatch',
      /row Deployment old: apiVersion extensions\/v1beta1 is not in the apps group of Deployment/,
    ],
    ['a uid column the object contradicts', 'uid-mismatch', /row Pod y: the uid column says .*, metadata.uid says/],
    ['the same uid twice', 'twice', /uid .* is listed twice/],
  ])('refuses the whole listing on %s', async (_case, namespace, message) => {
    const error = await failure(source({ relation: 'platform.objects' }).list(namespace));
    expect(error.source).toBe('postgres');
    expect(error.message).toMatch(message);
  });

  it('refuses a relation name that is not one identifier when it is created, running nothing', async () => {
    for (const relation of [
      'platform.objects; DROP TABLE platform.objects',
      'db.platform.objects',
      '"platform"."objects"',
      'pg_sleep(1)',
      '',
    ]) {
      expect(() => createPostgresInventory({ url: db.url, relation })).toThrow(/must be a table or view name, optionally schema-qualified/);
    }
    expect((await admin.query(`SELECT count(*)::int AS n FROM platform.objects`)).rows).toEqual([{ n: 12 }]);
  });

  it('reports a relation that does not exist, or lacks the columns, as an InventoryError', async () => {
    expect((await failure(source({ relation: 'platform.nope' }).list('team-a'))).message).toMatch(
      /platform\.nope: relation "platform\.nope" does not exist/,
    );
    expect((await failure(source({ relation: 'platform.wrong_shape' }).list('team-a'))).message).toMatch(/column "name" does not exist/);
  });

  it('refuses a listing over its row limit, and takes one exactly at it', async () => {
    expect((await source({ relation: 'platform.objects', maxObjects: 4 }).list('team-a')).objects).toHaveLength(4);
    expect((await failure(source({ relation: 'platform.objects', maxObjects: 3 }).list('team-a'))).message).toMatch(
      /more than the 3 rows a listing may hold/,
    );
  });

  it('gives up on a query that runs past timeoutMs', async () => {
    const error = await failure(source({ relation: 'platform.slow', timeoutMs: 300 }).list('team-a'));
    expect(error.message).toMatch(/no answer within 300 ms|canceling statement due to statement timeout/);
  });

  it('stops when the caller’s signal aborts, before or during the query, and stays usable', async () => {
    const inventory = source({ relation: 'platform.objects' });
    const aborted = AbortSignal.abort();
    expect((await failure(inventory.list('team-a', aborted))).message).toMatch(/aborted by the caller$/);
    // Aborted while connecting: the connections arriving late go back to the pool (of 2).
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const listing = failure(inventory.list('team-a', controller.signal));
      controller.abort();
      expect((await listing).message).toMatch(/aborted by the caller$/);
    }
    // Aborted while the query waits on a lock held here: the caller's deadline ends it.
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE platform.objects IN ACCESS EXCLUSIVE MODE');
    try {
      expect((await failure(inventory.list('team-a', AbortSignal.timeout(250)))).message).toMatch(/aborted by the caller$/);
    } finally {
      await admin.query('ROLLBACK');
    }
    expect((await inventory.list('team-a')).objects).toHaveLength(4);
  });

  it('fails a listing whose session the server ends, never the process, and lists again afterwards', async () => {
    const inventory = source({ relation: 'platform.objects' });
    let failed = 0;
    const work = () =>
      inventory.list('team-a').then(
        () => undefined,
        () => void failed++,
      );
    const result = await hammerWhileTerminating({
      database: db.name,
      applicationName: 'quota-ledger-inventory',
      ms: 2000,
      workers: 4,
      work,
    });
    expect(result.uncaught).toEqual([]);
    expect(result.terminated, 'sessions terminated').toBeGreaterThan(0);
    expect(failed, 'listings the terminations failed').toBeGreaterThan(0);
    expect((await inventory.list('team-a')).objects).toHaveLength(4);
  });
});
