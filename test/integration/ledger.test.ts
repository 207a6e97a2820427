import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@quota/domain';
import { LedgerError, type AdmitCommand } from '@quota/ledger';
import { Ledger } from '../support/ledger.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import type { DataSource } from 'typeorm';

let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;

beforeAll(async () => {
  db = await createMigratedDatabase('qlledger');
  ledger = new Ledger(db.dataSource, { retryBaseMs: 1 });
});
afterAll(async () => {
  await ledger?.close();
  await db?.drop();
});

const pod = (name: string, cpu = '100m', uid = `uid-${name}`): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
});

const admitPod = (namespace: string, object: Pod, extra: Partial<AdmitCommand> = {}): AdmitCommand => ({
  namespace,
  source: 'webhook',
  request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name: object.metadata?.name ?? '', object },
  dryRun: false,
  requester: 'alice',
  ...extra,
});

const count = async (sql: string, params: unknown[]): Promise<number> => Number((await db.dataSource.query(sql, params))[0].count);
const events = (namespace: string, type?: string) =>
  count(`SELECT count(*) FROM ledger_events WHERE namespace = $1 ${type ? 'AND type = $2' : ''}`, type ? [namespace, type] : [namespace]);

/**
 * Begins, in `blocker`, what another replica's append does: the head advanced by one version
 * and the event of that version (a redefinition of the quota as it is). Left uncommitted, so
 * the head row stays locked until the test commits.
 */
async function moveHead(blocker: pg.Client, namespace: string): Promise<void> {
  await blocker.query('BEGIN');
  await blocker.query(
    `WITH head AS (UPDATE namespace_heads SET version = version + 1 WHERE namespace = $1 RETURNING version)
     INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor, recorded_at)
     SELECT $1, head.version, 'QuotaChanged', 1, e.data, 'other-replica', clock_timestamp()
       FROM head, LATERAL (SELECT data FROM ledger_events WHERE namespace = $1 AND type LIKE 'Quota%' ORDER BY version DESC LIMIT 1) e`,
    [namespace],
  );
}

async function quota(namespace: string, hard: Record<string, string>, name = 'compute'): Promise<void> {
  await ledger.putQuota(namespace, { name, spec: { hard } }, { actor: 'admin' });
}

describe('the ledger on PostgreSQL', () => {
  it('finds in one read the definitions of every namespace that came from a given kind of cluster object', async () => {
    const by = (managedBy: string) => ({ annotations: { 'quota-ledger.io/managed-by': managedBy, 'other.example/x': 'y' } });
    await ledger.putQuota(
      'managed-a',
      { name: 'from-cluster', spec: { hard: { pods: '1' } }, metadata: by('ledgerquotas.quota-ledger.io') },
      { actor: 'test' },
    );
    await ledger.putQuota('managed-a', { name: 'from-rest', spec: { hard: { pods: '1' } } }, { actor: 'test' });
    await ledger.putQuota(
      'managed-b',
      { name: 'also-cluster', spec: { hard: { pods: '1' } }, metadata: by('ledgerquotas.quota-ledger.io') },
      { actor: 'test' },
    );
    await ledger.putQuota(
      'managed-b',
      { name: 'another-kind', spec: { hard: { pods: '1' } }, metadata: by('somethingelse') },
      { actor: 'test' },
    );
    await ledger.putLimitRange('managed-b', { name: 'defaults', spec: { limits: [] }, metadata: by('limitranges') }, { actor: 'test' });
    const quotas = await ledger.definitions.managedDefinitions('quotas', 'ledgerquotas.quota-ledger.io');
    expect(quotas.filter((d) => d.namespace.startsWith('managed-'))).toEqual([
      { namespace: 'managed-a', name: 'from-cluster' },
      { namespace: 'managed-b', name: 'also-cluster' },
    ]);
    expect(await ledger.definitions.managedDefinitions('limitRanges', 'limitranges')).toEqual([
      { namespace: 'managed-b', name: 'defaults' },
    ]);
    expect(await ledger.definitions.managedDefinitions('limitRanges', 'ledgerquotas.quota-ledger.io')).toEqual([]);
    // One namespace's, as a deletion's check reads them.
    expect(await ledger.definitions.managedDefinitions('quotas', 'ledgerquotas.quota-ledger.io', 'managed-b')).toEqual([
      { namespace: 'managed-b', name: 'also-cluster' },
    ]);
    expect(await ledger.definitions.managedDefinitions('quotas', 'ledgerquotas.quota-ledger.io', 'managed-none')).toEqual([]);
  });

  it('appends a reservation and advances the head, gap-free, and answers a denial without appending', async () => {
    await quota('append', { pods: '1' });
    const first = await ledger.admit(admitPod('append', pod('a')));
    expect(first.result).toMatchObject({ allowed: true, code: 200, charged: { pods: '1' } });
    const second = await ledger.admit(admitPod('append', pod('b')));
    expect(second.result).toMatchObject({ allowed: false, code: 403, stage: 'ResourceQuota' });
    expect(second.result.message).toBe('pods "b" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1');
    expect(second.result.denial).toMatchObject({
      kind: 'Exceeded',
      quota: 'compute',
      resource: 'pods',
      requested: '1',
      used: '1',
      hard: '1',
    });
    const versions = (await db.dataSource.query(`SELECT version FROM ledger_events WHERE namespace = 'append' ORDER BY position`)).map(
      (r: { version: string }) => Number(r.version),
    );
    expect(versions).toEqual([1, 2]);
    expect(await ledger.usage('append')).toMatchObject({ version: 2, quotas: [{ name: 'compute', used: { pods: '1' } }] });
    const decisions = await ledger.listDecisions('append', { limit: 10 });
    expect(decisions.items.map((d) => d.allowed)).toEqual([true, false]);
  });

  it('refuses a second event at a version the stream already has (the optimistic guard)', async () => {
    await quota('guard', { pods: '5' });
    await expect(
      db.dataSource.query(
        `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor) VALUES ('guard', 1, 'Reserved', 1, '{}', 'x')`,
      ),
    ).rejects.toThrow(/ledger_events_stream_version/);
  });

  it('answers a stale resourceVersion with Conflict and appends nothing', async () => {
    const created = await ledger.putQuota('stale', { name: 'q', spec: { hard: { pods: '1' } } }, { actor: 'admin' });
    await ledger.putQuota('stale', { name: 'q', spec: { hard: { pods: '2' } } }, { actor: 'admin', expectedVersion: created.view.version });
    await expect(
      ledger.putQuota('stale', { name: 'q', spec: { hard: { pods: '3' } } }, { actor: 'admin', expectedVersion: created.view.version }),
    ).rejects.toMatchObject({ code: 'Conflict', message: expect.stringContaining('the object has been modified') });
    expect(await events('stale')).toBe(2);
  });

  it('decides again when another writer moved the head meanwhile, and then succeeds', async () => {
    await quota('race', { pods: '10' });
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      // Another replica's append holds the head row: the group skips the namespace and tries
      // it again until the blocker commits, then decides on the head as it moved.
      await moveHead(blocker, 'race');
      const retriesBefore = ledger.stats.retries;
      const pending = ledger.admit(admitPod('race', pod('r1')));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await blocker.query('COMMIT');
      const outcome = await pending;
      expect(outcome.result.allowed).toBe(true);
      expect(ledger.stats.retries).toBeGreaterThan(retriesBefore);
      expect(await events('race', 'Reserved')).toBe(1);
    } finally {
      await blocker.end();
    }
  });

  it('answers Unavailable once it has waited its limit for a head another replica holds, and writes nothing', async () => {
    await quota('busy', { pods: '10' });
    const impatient = new Ledger(db.dataSource, { headWaitMaxMs: 150 });
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await moveHead(blocker, 'busy');
      const pending = impatient.admit(admitPod('busy', pod('b1'))).then(
        () => 'answered',
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      await blocker.query('COMMIT');
      expect(await pending).toMatchObject({ code: 'Unavailable', message: expect.stringContaining('other writers held it') });
      expect(await events('busy', 'Reserved')).toBe(0);
      expect(await count(`SELECT count(*) FROM admission_decisions WHERE namespace = 'busy'`, [])).toBe(0);
    } finally {
      await blocker.end();
      await impatient.close();
    }
  });

  it('returns the first answer for a repeated request key and appends nothing more, even when the repeats race', async () => {
    await quota('idem', { pods: '3' });
    const command = admitPod('idem', pod('once'), { requestKey: 'review:123' });
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => ledger.admit(command)));
    expect(new Set(outcomes.map((o) => JSON.stringify(o.result))).size).toBe(1);
    expect(outcomes.filter((o) => !o.repeated)).toHaveLength(1);
    expect(await events('idem', 'Reserved')).toBe(1);
    const again = await ledger.admit(command);
    expect(again).toMatchObject({ repeated: true, result: outcomes[0]?.result });
    // A denial is repeated as given, even after usage has changed.
    await ledger.admit(admitPod('idem', pod('two')));
    await ledger.admit(admitPod('idem', pod('three')));
    const denied = await ledger.admit(admitPod('idem', pod('four'), { requestKey: 'review:456' }));
    expect(denied.result.allowed).toBe(false);
    const reservation = await ledger.getReservation('idem', outcomes[0]?.result.reservationId ?? '');
    await ledger.release('idem', reservation?.id ?? '', { actor: 'ops' });
    expect((await ledger.admit(admitPod('idem', pod('four'), { requestKey: 'review:456' }))).result.allowed).toBe(false);
  });

  it('charges one object once when it is admitted twice under different request keys', async () => {
    await quota('same-uid', { pods: '5' });
    const a = await ledger.admit(admitPod('same-uid', pod('x', '100m', 'object-1'), { requestKey: 'review:a' }));
    const b = await ledger.admit(admitPod('same-uid', pod('x', '100m', 'object-1'), { requestKey: 'review:b' }));
    expect(b.result.reservationId).toBe(a.result.reservationId);
    expect(await events('same-uid', 'Reserved')).toBe(1);
  });

  it('decides a dry run and appends nothing', async () => {
    await quota('dry', { pods: '1' });
    const outcome = await ledger.admit(admitPod('dry', pod('d'), { dryRun: true, requestKey: 'review:dry' }));
    expect(outcome.result).toMatchObject({ allowed: true, dryRun: true, charged: { pods: '1' } });
    expect(outcome.result.reservationId).toBeUndefined();
    expect(await events('dry', 'Reserved')).toBe(0);
    expect((await ledger.usage('dry'))?.quotas[0]?.used).toEqual({ pods: '0' });
  });

  it('commits, releases and expires reservations idempotently', async () => {
    await quota('life', { pods: '5' });
    const { result } = await ledger.admit(admitPod('life', pod('l1')));
    const id = result.reservationId ?? '';
    expect((await ledger.commit('life', id, { actor: 'reconciler' })).changed).toBe(true);
    expect((await ledger.commit('life', id, { actor: 'reconciler' })).changed).toBe(false);
    expect((await ledger.release('life', id, { actor: 'reconciler', reason: 'deleted' })).view).toMatchObject({
      state: 'released',
      releaseReason: 'deleted',
    });
    expect((await ledger.release('life', id, { actor: 'reconciler' })).changed).toBe(false);
    await expect(ledger.commit('life', id, { actor: 'x' })).rejects.toMatchObject({ code: 'Conflict' });
    await expect(ledger.commit('life', 'nope', { actor: 'x' })).rejects.toMatchObject({ code: 'NotFound' });
    await expect(ledger.commit('nowhere', id, { actor: 'x' })).rejects.toMatchObject({ code: 'NamespaceNotFound' });
    const history = await ledger.getReservation('life', id);
    expect(history?.history?.map((e) => e.type)).toEqual(['Reserved', 'Committed', 'Released']);

    let now = Date.parse('2030-01-01T00:00:00Z');
    const clocked = new Ledger(db.dataSource, { clock: () => now });
    try {
      const ttl = await clocked.admit({ ...admitPod('life', pod('l2')), source: 'rest', ttlMs: 1000 });
      now += 1001;
      await expect(clocked.commit('life', ttl.result.reservationId ?? '', { actor: 'x' })).rejects.toBeInstanceOf(LedgerError);
      expect(await clocked.getReservation('life', ttl.result.reservationId ?? '')).toMatchObject({
        state: 'released',
        releaseReason: 'expired',
      });
    } finally {
      await clocked.close();
    }
    expect((await ledger.usage('life'))?.quotas[0]?.used).toEqual({ pods: '0' });
  });

  it('never admits over quota when 300 requests race on one namespace through two ledgers (two pools)', async () => {
    await quota('hot', { pods: '50' });
    const other = new Ledger(db.dataSource, { retryBaseMs: 1 });
    try {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? ledger : other).admit(admitPod('hot', pod(`p${i}`)))),
      );
      const allowed = outcomes.filter((o) => o.status === 'fulfilled' && o.value.result.allowed).length;
      expect(allowed).toBe(50);
      expect(await events('hot', 'Reserved')).toBe(50);
      expect((await ledger.usage('hot'))?.quotas[0]?.used).toEqual({ pods: '50' });
    } finally {
      await other.close();
    }
  });

  it('counts existing reservations toward a quota defined later, and shows usage over a lowered hard limit', async () => {
    await ledger.putLimitRange('late', { name: 'lr', spec: { limits: [] } }, { actor: 'admin' });
    await ledger.admit(admitPod('late', pod('e1', '500m')));
    await ledger.admit(admitPod('late', pod('e2', '500m')));
    await quota('late', { 'requests.cpu': '2' });
    expect((await ledger.getQuota('late', 'compute'))?.used).toEqual({ 'requests.cpu': '1' });
    await quota('late', { 'requests.cpu': '500m' });
    expect(await ledger.getQuota('late', 'compute')).toMatchObject({ hard: { 'requests.cpu': '500m' }, used: { 'requests.cpu': '1' } });
  });
});
