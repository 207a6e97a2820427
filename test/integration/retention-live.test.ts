import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fold, Resources, type Pod, type RecordedEvent } from '@quota/domain';
import { archiveLedger, UsageProjection, type AdmitCommand } from '@quota/ledger';
import { createMigratedDatabase } from '../support/database.js';
import { Ledger } from '../support/ledger.js';

/**
 * A month archived while its reservations are still live:
 * every real namespace holds long-lived objects, so the archive no longer waits for them. Their
 * making events leave with the month; each horizon state carries its namespace's live
 * reservations, and the projection and the as-of folds read them from there. Then they are
 * committed, terminated and released after the archive, and everything must stay exact: the
 * fold of the whole stream (the archived month as it was read before, and the retained events),
 * usage?at= at every instant from the horizon on (from the read model and by folding), the
 * projection followed incrementally and rebuilt from zero step by step.
 */

const JANUARY = '2025-01-01T00:00:00Z';
const HORIZON = '2025-02-01T00:00:00.000Z';
const PODS = { group: '', resource: 'pods' };

const pod = (name: string, cpu: string, phase?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
  ...(phase ? { status: { phase } } : {}),
});

const admitPod = (namespace: string, object: Pod): AdmitCommand => ({
  namespace,
  source: 'webhook',
  request: { operation: 'CREATE', groupResource: PODS, namespace, name: object.metadata?.name ?? '', object },
  dryRun: false,
  requester: 'alice',
});

const reserveWidget = (namespace: string, name: string): AdmitCommand => ({
  namespace,
  source: 'rest',
  request: { operation: 'CREATE', groupResource: { group: 'example.com', resource: 'widgets' }, namespace, name },
  resources: { pods: '1', 'requests.cpu': '50m' },
  kind: 'Widget',
  requestKey: `rest:${name}`,
  dryRun: false,
  requester: 'bob',
});

type Usage = Record<string, Record<string, string>>;
const usageOf = (events: readonly RecordedEvent[]): Usage => {
  const state = fold(events);
  return Object.fromEntries(
    [...state.quotas.keys()].sort().map((name) => [name, Resources.canonicalResourceList(state.used.get(name) ?? Resources.EMPTY)]),
  );
};

describe('archiving a month whose reservations are still live', () => {
  let db: Awaited<ReturnType<typeof createMigratedDatabase>>;
  let directory: string;
  let now = Date.parse('2025-01-10T10:00:00Z');
  let ledger: Ledger;
  /** Each namespace's archived events as they were read before the archive. */
  const archived = new Map<string, RecordedEvent[]>();
  const NAMESPACES = ['busy', 'still'];
  const ids = new Map<string, string>();

  beforeAll(async () => {
    db = await createMigratedDatabase('qlarchlive');
    directory = await mkdtemp(path.join(tmpdir(), 'ql-archive-live-'));
    ledger = new Ledger(db.dataSource, { clock: () => (now += 1000), retryBaseMs: 1 });
  });
  afterAll(async () => {
    await ledger?.close();
    await db?.drop();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  const stream = async (namespace: string): Promise<RecordedEvent[]> => {
    const rows = (await db.dataSource.query(
      `SELECT version::int AS version, type, data, (extract(epoch from recorded_at) * 1000)::float8 AS at_ms FROM ledger_events WHERE namespace = $1 ORDER BY version`,
      [namespace],
    )) as { version: number; type: string; data: unknown; at_ms: number }[];
    return rows.map((r) => ({ type: r.type, data: r.data, version: r.version, at: Math.floor(r.at_ms) }) as RecordedEvent);
  };
  /** The whole stream: the archived month as read before the archive, then what the ledger retains. */
  const wholeStream = async (namespace: string): Promise<RecordedEvent[]> => [
    ...(archived.get(namespace) ?? []),
    ...(await stream(namespace)),
  ];
  const usageAt = async (namespace: string, at: string): Promise<Usage> =>
    Object.fromEntries(((await ledger.usageAt(namespace, at))?.quotas ?? []).map((q) => [q.name, q.used]).sort()) as Usage;
  const listing = (objects: Pod[], listedAt: number) => ({
    covers: [PODS],
    objects: objects.map((o) => ({ groupResource: PODS, uid: o.metadata?.uid as string, name: o.metadata?.name as string, object: o })),
    listedAt,
  });
  const reconcile = async (namespace: string, objects: Pod[]) =>
    ledger.reconcile(namespace, listing(objects, await ledger.now()), { actor: 'system:reconciler', graceMs: 30 * 86_400_000 });

  /** Usage at every instant of `instants`, as the fold of the whole stream says it was. */
  const expectedAt = async (namespace: string, at: string): Promise<Usage> =>
    usageOf((await wholeStream(namespace)).filter((e) => e.at <= Date.parse(at)));

  async function expectExact(instants: readonly string[]): Promise<void> {
    for (const namespace of NAMESPACES) {
      const whole = await wholeStream(namespace);
      expect(whole.map((e) => e.version)).toEqual(whole.map((_, i) => i + 1));
      const head = await ledger.usage(namespace);
      expect(Object.fromEntries((head?.quotas ?? []).map((q) => [q.name, q.used])), `${namespace} head`).toEqual(usageOf(whole));
      const projected = await ledger.projectedUsage(namespace);
      expect(projected?.version, namespace).toBe(head?.version);
      expect(Object.fromEntries(projected?.used ?? []), `${namespace} projected`).toEqual(usageOf(whole));
      const live = (await db.dataSource.query(`SELECT reservation_id AS id FROM projected_reservations WHERE namespace = $1 ORDER BY 1`, [
        namespace,
      ])) as { id: string }[];
      expect(
        live.map((r) => r.id),
        `${namespace} live reservations`,
      ).toEqual([...fold(whole).reservations.keys()].sort());
      for (const at of instants) expect(await usageAt(namespace, at), `${namespace} at ${at}`).toEqual(await expectedAt(namespace, at));
    }
  }

  it('archives January with its reservations live, and keeps them in the horizon states', async () => {
    await db.dataSource.query(
      `SELECT ledger_events_add_partition($1), ledger_events_add_partition('2025-02-01T00:00:00Z'), ledger_events_add_partition('2025-03-01T00:00:00Z')`,
      [JANUARY],
    );
    for (const namespace of NAMESPACES)
      await ledger.putQuota(namespace, { name: 'compute', spec: { hard: { pods: '6', 'requests.cpu': '1' } } }, { actor: 'admin' });
    for (const [namespace, name, cpu] of [
      ['busy', 'p1', '300m'],
      ['busy', 'p2', '200m'],
      ['busy', 'p3', '100m'],
      ['still', 's1', '100m'],
    ] as const) {
      const admitted = await ledger.admit(admitPod(namespace, pod(name, cpu)));
      ids.set(name, admitted.result.reservationId ?? '');
    }
    ids.set('w1', (await ledger.admit(reserveWidget('busy', 'w1'))).result.reservationId ?? '');
    ids.set('w2', (await ledger.admit(reserveWidget('still', 'w2'))).result.reservationId ?? '');
    // In January still: p1 and p3 are listed (committed), p3 already Succeeded (terminated); w1 is committed.
    now = Date.parse('2025-01-20T10:00:00Z');
    expect((await reconcile('busy', [pod('p1', '300m'), pod('p3', '100m', 'Succeeded')])).actions.map((a) => a.kind).sort()).toEqual([
      'commit',
      'commit',
      'terminate',
    ]);
    await ledger.commit('busy', ids.get('w1') ?? '', { actor: 'bob' });
    await new UsageProjection(db.dataSource).catchUp();
    for (const namespace of NAMESPACES) archived.set(namespace, await stream(namespace));
    const before = new Map<string, Usage>();
    for (const namespace of NAMESPACES) before.set(namespace, usageOf(archived.get(namespace) ?? []));

    const report = await archiveLedger(db.dataSource, { before: HORIZON, directory });
    expect(report.archived.map((a) => a.partition)).toEqual(['ledger_events_p202501']);
    expect(report.horizon).toBe(HORIZON);
    expect(await stream('busy')).toEqual([]);
    const held = (await db.dataSource.query(
      `SELECT namespace, jsonb_array_length(reservations) AS n FROM ledger_horizon_states ORDER BY namespace`,
    )) as { namespace: string; n: number }[];
    expect(held).toEqual([
      { namespace: 'busy', n: 4 },
      { namespace: 'still', n: 2 },
    ]);
    for (const namespace of NAMESPACES) expect(await usageAt(namespace, HORIZON)).toEqual(before.get(namespace));
  });

  it('commits, terminates and releases them after the archive, with every usage exact at every instant', async () => {
    now = Date.parse('2025-02-03T10:00:00Z');
    // p2 appears: committed; p3 (terminated in January) is gone: released as deleted.
    expect((await reconcile('busy', [pod('p1', '300m'), pod('p2', '200m')])).actions.map((a) => `${a.kind}`).sort()).toEqual([
      'commit',
      'release',
    ]);
    now = Date.parse('2025-02-04T10:00:00Z');
    await ledger.release('busy', ids.get('w1') ?? '', { actor: 'bob' });
    now = Date.parse('2025-02-05T10:00:00Z');
    // p1 Succeeded: terminated; p2 gone: released.
    expect((await reconcile('busy', [pod('p1', '300m', 'Succeeded')])).actions.map((a) => a.kind).sort()).toEqual(['release', 'terminate']);
    now = Date.parse('2025-02-06T10:00:00Z');
    await ledger.admit(admitPod('busy', pod('p4', '400m')));
    // The projection follows: each of these names a reservation whose making event was archived.
    await new UsageProjection(db.dataSource).catchUp();
    const instants = [
      HORIZON,
      '2025-02-03T10:00:00.500Z',
      '2025-02-03T12:00:00Z',
      '2025-02-04T12:00:00Z',
      '2025-02-05T12:00:00Z',
      '2025-02-06T12:00:00Z',
      '2025-03-01T00:00:00Z',
    ];
    await expectExact(instants);
    // Still live at the end: p1 (terminated, counting count/pods only) and p4 in busy, both of still's.
    const live = [...fold(await wholeStream('busy')).reservations.keys()];
    expect(live).toHaveLength(2);
    expect(live).toContain(ids.get('p1'));
    // Its history names no requester: its Reserved event was archived (not the releaser of it).
    const w1 = await ledger.getReservation('busy', ids.get('w1') ?? '');
    expect(w1?.history?.map((e) => e.type)).toEqual(['Released']);
    expect(w1?.requester).toBeUndefined();
  });

  it('rebuilds from zero, every namespace from its horizon state, in steps of one event by fresh workers', async () => {
    const instants = [HORIZON, '2025-02-03T12:00:00Z', '2025-02-05T12:00:00Z', '2025-03-01T00:00:00Z'];
    await new UsageProjection(db.dataSource).rebuild();
    await expectExact(instants);
    await new UsageProjection(db.dataSource).reset();
    let steps = 0;
    while ((await new UsageProjection(db.dataSource, { batchSize: 1 }).step(1, 'force')) > 0) steps++;
    expect(steps).toBeGreaterThan(3);
    await expectExact(instants);
    // still was idle since January: projected as its horizon state, its two reservations live.
    expect(
      ((await db.dataSource.query(`SELECT count(*)::int AS n FROM projected_reservations WHERE namespace = 'still'`)) as { n: number }[])[0]
        ?.n,
    ).toBe(2);
    // And a release of one of them now is projected as usual.
    await ledger.release('still', ids.get('w2') ?? '', { actor: 'bob' });
    await new UsageProjection(db.dataSource).catchUp();
    await expectExact([...instants, '2025-03-02T00:00:00Z']);
  });
});
