import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpInventory, createPostgresInventory, InventoryError, quoteRelation } from '@quota/inventory';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import pg from 'pg';

const pod = (name: string, namespace = 'team-a', uid: string | undefined = `uid-${name}`) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, ...(uid ? { uid } : {}) },
  spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' } } }] },
});

describe('postgres inventory source (the platform keeps a table or view of its objects)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('qlinvpg');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(`CREATE SCHEMA platform`);
    await client.query(`CREATE TABLE platform.objects (namespace text, kind text, name text, uid text, object jsonb)`);
    await client.query(`INSERT INTO platform.objects VALUES ('team-a', 'Pod', 'a', 'uid-a', $1), ('team-a', 'Pod', 'b', 'uid-b', $2), ('team-b', 'Pod', 'c', 'uid-c', $3),
      ('team-a', 'Widget', 'w', 'uid-w', '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","uid":"uid-w"}}')`, [pod('a'), pod('b'), pod('c', 'team-b')]);
    await client.query(`CREATE VIEW platform.live_objects AS SELECT * FROM platform.objects WHERE name <> 'b'`);
    await client.end();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('lists one namespace from a table and from a view, keeping only kinds it covers', async () => {
    for (const [relation, names] of [['platform.objects', ['a', 'b']], ['platform.live_objects', ['a']]] as const) {
      const source = createPostgresInventory({ url: db.url, relation });
      const inventory = await source.list('team-a');
      expect(inventory.objects.map((o) => o.name).sort()).toEqual(names);
      expect(inventory.objects[0]).toMatchObject({ groupResource: { group: '', resource: 'pods' }, uid: 'uid-a', object: { kind: 'Pod', metadata: { namespace: 'team-a' } } });
      await source.close();
    }
  });

  it('refuses a relation name that is not an identifier, and reports a missing relation as an InventoryError', async () => {
    for (const bad of ['objects; DROP TABLE x', 'a.b.c', '"quoted"', '']) expect(() => quoteRelation(bad)).toThrow(/must be a table or view name/);
    const source = createPostgresInventory({ url: db.url, relation: 'platform.nope' });
    await expect(source.list('team-a')).rejects.toBeInstanceOf(InventoryError);
    await source.close();
  });
});

describe('http inventory source (a platform endpoint)', () => {
  let server: Server;
  let base: string;
  const answers: Record<string, { status: number; body: string }> = {};
  const seen: { url: string; auth: string | undefined }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization });
      const answer = answers[req.url ?? ''] ?? { status: 404, body: '{}' };
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/platform/`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('GETs {url}/namespaces/{ns}/objects with the bearer token and reads a Kubernetes List', async () => {
    answers['/platform/namespaces/team-a/objects'] = { status: 200, body: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pod('a'), pod('b')] }) };
    const source = createHttpInventory({ url: base, token: 's3cret' });
    const inventory = await source.list('team-a');
    expect(inventory.objects.map((o) => o.uid)).toEqual(['uid-a', 'uid-b']);
    expect(seen.at(-1)).toEqual({ url: '/platform/namespaces/team-a/objects', auth: 'Bearer s3cret' });
  });

  it.each([
    ['a 500', { status: 500, body: 'oops' }, /answered 500/],
    ['a body that is not JSON', { status: 200, body: '<html>' }, /not JSON/],
    ['a body without items', { status: 200, body: '{"kind":"List"}' }, /no "items" array/],
    ['an object without a uid (it could not be matched)', { status: 200, body: JSON.stringify({ items: [pod('a', 'bad', '')] }) }, /has no metadata.uid/],
    ['an object of another namespace', { status: 200, body: JSON.stringify({ items: [pod('a', 'elsewhere')] }) }, /is in namespace elsewhere/],
  ])('refuses the whole listing on %s', async (_case, answer, message) => {
    answers['/platform/namespaces/bad/objects'] = answer;
    const error = await createHttpInventory({ url: base }).list('bad').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InventoryError);
    expect((error as Error).message).toMatch(message);
  });

  it('refuses an answer larger than its limit', async () => {
    answers['/platform/namespaces/big/objects'] = { status: 200, body: JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => pod(`p${i}`, 'big')) }) };
    const error = await createHttpInventory({ url: base, maxBytes: 4096 }).list('big').catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/over the 4096-byte limit/);
  });
});
