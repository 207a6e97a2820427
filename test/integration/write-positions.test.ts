import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SharedQuotaDefinition } from '@quota/domain';
import { ClusterWriter, LedgerCommands, type AdmitCommand } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

/**
 * Every write tells its caller the position to read after (`?minPosition=`): the
 * last event it appended, taken from the group commit's one write statement, or the existing
 * event a write that appended nothing points to.
 */
let db: TestDatabase & { dataSource: DataSource };
let ledger: LedgerCommands;
let writer: ClusterWriter;

beforeAll(async () => {
  db = await createMigratedDatabase('qlpositions');
  ledger = new LedgerCommands(db.dataSource, { retryBaseMs: 1 });
  writer = new ClusterWriter(db.dataSource);
});
afterAll(async () => {
  await ledger?.close();
  await writer?.close();
  await db?.drop();
});

const actor = { actor: 'admin' };
const reserve = (namespace: string, name: string, extra: Partial<AdmitCommand> = {}): AdmitCommand => ({
  namespace,
  source: 'rest',
  request: { operation: 'CREATE', groupResource: { group: 'example.com', resource: 'widgets' }, namespace, name },
  resources: { 'example.com/gpu': '1' },
  dryRun: false,
  requester: 'alice',
  ...extra,
});

/** The position of the event of `type` about reservation `id` (or of the stream's event of that type, for a definition). */
async function positionOf(namespace: string, type: string, id?: string): Promise<string> {
  const rows: { position: string }[] = await db.dataSource.query(
    `SELECT position::text AS position FROM ledger_events WHERE namespace = $1 AND type = $2 AND ($3::text IS NULL OR data->>'reservationId' = $3) ORDER BY position DESC LIMIT 1`,
    [namespace, type, id ?? null],
  );
  const position = rows[0]?.position;
  if (position === undefined) throw new Error(`no ${type} event in ${namespace}`);
  return position;
}
const lastPosition = async (): Promise<string> =>
  ((await db.dataSource.query(`SELECT max(position)::text AS position FROM ledger_events`)) as { position: string }[])[0]!.position;

describe('the position a write answers', () => {
  it('is, for each command of a group, its own event, though the group wrote many namespaces and many commands each in one statement', async () => {
    const namespaces = ['pos-a', 'pos-b', 'pos-c'];
    for (const namespace of namespaces)
      await ledger.putQuota(namespace, { name: 'gpus', spec: { hard: { 'example.com/gpu': '100' } } }, actor);
    const before = { ...ledger.stats };
    const outcomes = await Promise.all(
      namespaces.flatMap((namespace) =>
        Array.from({ length: 12 }, (_, i) => ledger.admit(reserve(namespace, `w-${i}`)).then((outcome) => ({ namespace, outcome }))),
      ),
    );
    // Submitted together, they were decided in fewer transactions than commands.
    expect(ledger.stats.transactions - before.transactions).toBeLessThan(outcomes.length);
    for (const { namespace, outcome } of outcomes) {
      const id = outcome.result.reservationId ?? '';
      expect(outcome.position, id).toBe(await positionOf(namespace, 'Reserved', id));
    }
  });

  it('is, for a repeated request, the event its first answer appended; a denial and a dry run have none', async () => {
    await ledger.putQuota('pos-repeat', { name: 'gpus', spec: { hard: { 'example.com/gpu': '1' } } }, actor);
    const first = await ledger.admit(reserve('pos-repeat', 'w', { requestKey: 'rest:deploy-1' }));
    const id = first.result.reservationId ?? '';
    expect(first.position).toBe(await positionOf('pos-repeat', 'Reserved', id));
    // Later events do not move what the repeat points to.
    await ledger.commit('pos-repeat', id, actor);
    const repeated = await ledger.admit(reserve('pos-repeat', 'w', { requestKey: 'rest:deploy-1' }));
    expect(repeated).toMatchObject({ repeated: true, position: first.position });

    const denied = await ledger.admit(reserve('pos-repeat', 'w2', { requestKey: 'rest:deploy-2' }));
    expect(denied.result.allowed).toBe(false);
    expect(denied.position).toBeUndefined();
    expect((await ledger.admit(reserve('pos-repeat', 'w2', { requestKey: 'rest:deploy-2' }))).position).toBeUndefined();
    const dry = await ledger.admit(reserve('pos-repeat', 'w3', { dryRun: true, resources: { pods: '1' } }));
    expect(dry.result.allowed).toBe(true);
    expect(dry.position).toBeUndefined();
  });

  it("is, for a commit and a release, their event, and for a repeat of either the reservation's latest", async () => {
    await ledger.putQuota('pos-life', { name: 'gpus', spec: { hard: { 'example.com/gpu': '5' } } }, actor);
    const id = (await ledger.admit(reserve('pos-life', 'w'))).result.reservationId ?? '';
    const committed = await ledger.commit('pos-life', id, actor);
    expect(committed.position).toBe(await positionOf('pos-life', 'Committed', id));
    expect((await ledger.commit('pos-life', id, actor)).position).toBe(committed.position);
    const released = await ledger.release('pos-life', id, actor);
    expect(released.position).toBe(await positionOf('pos-life', 'Released', id));
    expect((await ledger.release('pos-life', id, actor)).position).toBe(released.position);
  });

  it('is, for a quota or limit range, the event that defined, changed or removed it; an unchanged PUT points to the last change', async () => {
    const put = (cpu: string) => ledger.putQuota('pos-defs', { name: 'compute', spec: { hard: { 'requests.cpu': cpu } } }, actor);
    const defined = await put('1');
    expect(defined.position).toBe(await positionOf('pos-defs', 'QuotaDefined'));
    const changed = await put('2');
    expect(changed.position).toBe(await positionOf('pos-defs', 'QuotaChanged'));
    await ledger.putLimitRange('pos-defs', { name: 'limits', spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } }, actor);
    const unchanged = await put('2');
    expect(unchanged).toMatchObject({ changed: false, position: changed.position });
    expect((await ledger.deleteQuota('pos-defs', 'compute', actor)).position).toBe(await positionOf('pos-defs', 'QuotaRemoved'));
    expect((await ledger.deleteLimitRange('pos-defs', 'limits', actor)).position).toBe(await positionOf('pos-defs', 'LimitRangeRemoved'));
  });

  it('is, for a shared quota or a Namespace, the last event of every stream the write moved; unchanged, its last definition event', async () => {
    const crq: SharedQuotaDefinition = {
      ref: { kind: 'ClusterResourceQuota', name: 'pos-shared' },
      spec: { hard: { pods: '9' } },
      selector: { labels: { matchLabels: { team: 'pos' } } },
    };
    const labelled = await writer.putNamespace({ name: 'pos-ns', metadata: { labels: { team: 'pos' } } }, actor);
    expect(labelled.position).toBe(await lastPosition());
    const defined = await writer.putSharedQuota(crq, actor);
    // Its definition event and the namespace it now covers, written together: the last of them.
    expect(defined.position).toBe(await lastPosition());
    expect(BigInt(defined.position ?? 0)).toBeGreaterThan(BigInt(labelled.position ?? 0));
    const definition = await positionOf('clusterresourcequotas/pos-shared', 'SharedQuotaDefined');
    expect(await writer.putSharedQuota(crq, actor)).toMatchObject({ changed: false, position: definition });
    expect((await writer.putNamespace({ name: 'pos-ns', metadata: { labels: { team: 'pos' } } }, actor)).position).toBe(labelled.position);
    expect((await writer.deleteSharedQuota(crq.ref, actor)).position).toBe(await lastPosition());
    expect((await writer.deleteNamespace('pos-ns', actor)).position).toBe(await lastPosition());
  });
});
