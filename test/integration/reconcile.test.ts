import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '@quota/domain';
import type { AdmitCommand, ReconcileListing } from '@quota/ledger';
import { Ledger } from '../support/ledger.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import type { DataSource } from 'typeorm';

/**
 * The recount race (docs/architecture.md), on the real ledger with an injected clock: a periodic recount that
 * runs between validation and persistence resets usage and admits a second request over
 * quota. The reconciler here only appends corrections, and never releases a reservation
 * younger than the grace period, so the race has nothing to act on.
 */
const GRACE_MS = 60_000;
const PODS = { group: '', resource: 'pods' };

let db: TestDatabase & { dataSource: DataSource };
let now = Date.UTC(2026, 10, 23, 9, 0, 0);
const clock = (): number => now;
let ledger: Ledger;

beforeAll(async () => {
  db = await createMigratedDatabase('qlrecon');
  ledger = new Ledger(db.dataSource, { clock });
});
afterAll(async () => {
  await ledger?.close();
  await db?.drop();
});

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '500m' }, limits: { cpu: '500m' } } }] },
});

const admit = (namespace: string, name: string): AdmitCommand => ({
  namespace,
  source: 'webhook',
  request: { operation: 'CREATE', groupResource: PODS, namespace, name, object: pod(name) },
  requestKey: `review:${namespace}:${name}`,
  dryRun: false,
  requester: 'system:serviceaccount:kube-system:replicaset-controller',
});

const listing = (names: string[], listedAt = now): ReconcileListing => ({
  covers: [PODS],
  objects: names.map((name) => ({ groupResource: PODS, uid: `uid-${name}`, name, object: pod(name) })),
  listedAt,
});

const reconcile = (namespace: string, names: string[], listedAt = now) =>
  ledger.reconcile(namespace, listing(names, listedAt), { actor: 'system:reconciler', graceMs: GRACE_MS });

async function eventTypes(namespace: string): Promise<string[]> {
  const rows = await db.dataSource.query(
    `SELECT type, data->>'reason' AS reason FROM ledger_events WHERE namespace = $1 ORDER BY ledger_events.version`,
    [namespace],
  );
  return rows.map((r: { type: string; reason: string | null }) => (r.reason ? `${r.type}:${r.reason}` : r.type));
}

describe('reconciler corrections (the recount race)', () => {
  it('a reconcile between validation and persistence changes nothing; the second request is denied; the object then commits', async () => {
    await ledger.putQuota('race', { name: 'compute', spec: { hard: { pods: '1', 'requests.cpu': '1' } } }, { actor: 'admin' });
    // Validation admitted web-1; the API server has not persisted it yet.
    const first = await ledger.admit(admit('race', 'web-1'));
    expect(first.result.allowed).toBe(true);

    // The periodic reconcile runs now, before the object exists.
    now += 5_000;
    const early = await reconcile('race', []);
    expect(early).toMatchObject({ actions: [], pending: 1 });
    expect((await ledger.usage('race'))?.quotas[0]?.used).toEqual({ pods: '1', 'requests.cpu': '500m' });

    // A recount would have reset usage to 0 here and admitted this one over quota.
    now += 1_000;
    const second = await ledger.admit(admit('race', 'web-2'));
    expect(second.result).toMatchObject({
      allowed: false,
      code: 403,
      denial: { kind: 'Exceeded', quota: 'compute', resource: 'pods', used: '1', hard: '1' },
    });

    // The object appears; the next reconcile commits its reservation.
    now += 1_000;
    const later = await reconcile('race', ['web-1']);
    expect(later.actions).toEqual([{ kind: 'commit', reservationId: first.result.reservationId, uid: 'uid-web-1' }]);
    expect((await ledger.usage('race'))?.quotas[0]?.used).toEqual({ pods: '1', 'requests.cpu': '500m' });
    expect(await eventTypes('race')).toEqual(['QuotaDefined', 'Reserved', 'Committed']);
    // Idempotent: nothing more to append.
    now += 1_000;
    expect((await reconcile('race', ['web-1'])).actions).toEqual([]);
  });

  it('releases an object that never appears exactly once after the grace period, whatever the number of concurrent reconcilers', async () => {
    await ledger.putQuota('stale', { name: 'compute', spec: { hard: { pods: '1' } } }, { actor: 'admin' });
    const reserved = await ledger.admit(admit('stale', 'lost'));
    expect(reserved.result.allowed).toBe(true);
    const reservedAt = now;

    // Within the grace period, even many reconcilers leave it alone.
    now = reservedAt + GRACE_MS - 1;
    const young = await Promise.all(Array.from({ length: 8 }, () => reconcile('stale', [])));
    expect(young.flatMap((o) => o.actions)).toEqual([]);

    // After it: eight reconcilers, on separate ledgers (separate pools and batchers), at once.
    now = reservedAt + GRACE_MS + 1;
    const ledgers = Array.from({ length: 8 }, () => new Ledger(db.dataSource, { clock }));
    try {
      const outcomes = await Promise.all(
        ledgers.map((l) => l.reconcile('stale', listing([], reservedAt + GRACE_MS), { actor: 'system:reconciler', graceMs: GRACE_MS })),
      );
      expect(outcomes.flatMap((o) => o.actions)).toEqual([
        { kind: 'release', reservationId: reserved.result.reservationId, reason: 'stale', uid: 'uid-lost' },
      ]);
    } finally {
      await Promise.all(ledgers.map((l) => l.close()));
    }
    expect(await eventTypes('stale')).toEqual(['QuotaDefined', 'Reserved', 'Released:stale']);
    expect((await ledger.usage('stale'))?.quotas[0]?.used).toEqual({ pods: '0' });
    // The quota is free again.
    expect((await ledger.admit(admit('stale', 'next'))).result.allowed).toBe(true);
  });

  it('terminates a finished pod once and releases a deleted one once when every replica settles it at the same moment (each replica watches)', async () => {
    await ledger.putQuota('replicas', { name: 'compute', spec: { hard: { pods: '4', 'requests.cpu': '2' } } }, { actor: 'admin' });
    const done = await ledger.admit(admit('replicas', 'done'));
    const gone = await ledger.admit(admit('replicas', 'gone'));
    now += 1_000;
    await reconcile('replicas', ['done', 'gone']);
    // The pod `done` reached Succeeded and `gone` was deleted: eight replicas heard it and settle at once.
    now += 1_000;
    const finished: ReconcileListing = {
      ...listing([]),
      objects: [{ groupResource: PODS, uid: 'uid-done', name: 'done', object: { ...pod('done'), status: { phase: 'Succeeded' } } as Pod }],
    };
    const ledgers = Array.from({ length: 8 }, () => new Ledger(db.dataSource, { clock }));
    try {
      const outcomes = await Promise.all(
        ledgers.map((l) => l.reconcile('replicas', finished, { actor: 'system:reconciler', graceMs: GRACE_MS })),
      );
      expect(outcomes.flatMap((o) => o.actions)).toEqual(
        expect.arrayContaining([
          { kind: 'terminate', reservationId: done.result.reservationId, reason: 'Succeeded', uid: 'uid-done' },
          { kind: 'release', reservationId: gone.result.reservationId, reason: 'deleted', uid: 'uid-gone' },
        ]),
      );
      expect(outcomes.flatMap((o) => o.actions)).toHaveLength(2);
    } finally {
      await Promise.all(ledgers.map((l) => l.close()));
    }
    expect(await eventTypes('replicas')).toEqual([
      'QuotaDefined',
      'Reserved',
      'Reserved',
      'Committed',
      'Committed',
      'Terminated:Succeeded',
      'Released:deleted',
    ]);
    expect((await ledger.usage('replicas'))?.quotas[0]?.used).toEqual({ pods: '0', 'requests.cpu': '0' });
  });

  it('releases a committed reservation whose object was deleted, and adopts an object nobody reserved, reporting used > hard', async () => {
    await ledger.putQuota('drift', { name: 'compute', spec: { hard: { pods: '1' } } }, { actor: 'admin' });
    const kept = await ledger.admit(admit('drift', 'kept'));
    now += 1_000;
    await reconcile('drift', ['kept']);
    // Created while the webhook was failing open: two pods nobody reserved.
    now += 1_000;
    const adopted = await reconcile('drift', ['kept', 'rogue-1', 'rogue-2']);
    expect(adopted.actions.map((a) => a.kind)).toEqual(['adopt', 'adopt']);
    expect(adopted.overHard).toEqual([{ quota: 'compute', resource: 'pods', used: '3', hard: '1' }]);
    // The first pod is deleted.
    now += 1_000;
    const deleted = await reconcile('drift', ['rogue-1', 'rogue-2']);
    expect(deleted.actions).toEqual([{ kind: 'release', reservationId: kept.result.reservationId, reason: 'deleted', uid: 'uid-kept' }]);
    expect((await ledger.usage('drift'))?.quotas[0]?.used).toEqual({ pods: '2' });
  });

  it('releases as uncovered, after the grace period, a webhook reservation of a kind the listing does not cover; leaves a namespace the ledger does not know', async () => {
    await ledger.putQuota('partial', { name: 'compute', spec: { hard: { persistentvolumeclaims: '1', pods: '2' } } }, { actor: 'admin' });
    await ledger.admit({
      ...admit('partial', 'claim'),
      request: {
        operation: 'CREATE',
        groupResource: { group: '', resource: 'persistentvolumeclaims' },
        namespace: 'partial',
        name: 'claim',
        object: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'claim', uid: 'uid-claim' },
          spec: { resources: { requests: { storage: '1Gi' } } },
        },
      },
    });
    // Younger than the grace period: reported, kept.
    expect(await reconcile('partial', [])).toMatchObject({ actions: [], uncovered: [{ resource: 'persistentvolumeclaims', count: 1 }] });
    now += 10 * GRACE_MS;
    // The PVC can never be seen by a listing of pods: it is not left to count forever.
    expect(await reconcile('partial', [])).toMatchObject({
      actions: [{ kind: 'release', reason: 'uncovered', uid: 'uid-claim' }],
      uncovered: [],
    });
    expect(await eventTypes('partial')).toEqual(['QuotaDefined', 'Reserved', 'Released:uncovered']);
    expect(await reconcile('nobody-here', ['x'])).toMatchObject({ version: 0, actions: [] });
    expect(await eventTypes('nobody-here')).toEqual([]);
  });
});
