import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerCommands } from '@quota/ledger';
import { startApi, type RunningApi } from '../support/api.js';

// The REST admin API refuses to change or delete a definition a cluster object manages (409). The
// refusal is decided in the write's own transaction: before, the API read the definition first and
// wrote after, so a sync that landed between the two was overwritten by the REST write, and the
// cluster object lost its definition until the next pass. Here a sync and a REST write of the same
// quota race round after round, and the ledger's history is checked: no REST write ever lands on a
// definition that was the cluster's.

const NS = 'team-race';
const NAME = 'raced';
const ROUNDS = 60;
const SYNC = 'system:reconciler';
const MANAGED = { annotations: { 'quota-ledger.io/managed-by': 'ledgerquotas.quota-ledger.io' } };

let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlmanagedrace');
});
afterAll(async () => {
  await api?.close();
});

const jitter = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 4));

interface Row {
  type: string;
  actor: string;
  data: { name?: string; metadata?: { annotations?: Record<string, string> } };
}

/** The REST writes (any actor but the sync) that changed or removed a definition the sync had made the cluster's. */
function restWritesOverManaged(rows: readonly Row[]): string[] {
  let managed = false;
  const found: string[] = [];
  rows.forEach((row, i) => {
    if (row.data.name !== NAME) return;
    if (row.actor !== SYNC && managed && row.type !== 'QuotaDefined')
      found.push(`event ${i + 1}: ${row.type} by ${row.actor} on the cluster's definition`);
    if (row.type === 'QuotaRemoved') managed = false;
    else if (row.type === 'QuotaDefined' || row.type === 'QuotaChanged')
      managed = row.data.metadata?.annotations?.['quota-ledger.io/managed-by'] !== undefined;
  });
  return found;
}

describe('a REST write racing the cluster sync', () => {
  it('never overwrites or removes a definition the sync made the cluster’s, and is told 409 when it loses', async () => {
    const ledger = api.app.get(LedgerCommands);
    const outcomes = new Map<string, number>();
    const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
    for (let round = 0; round < ROUNDS; round++) {
      const remove = round % 2 === 1;
      // Every third round the REST write gets a head start, so that both orders happen whatever the machine's pace.
      const sync = jitter()
        .then(() => (round % 3 === 0 ? new Promise((resolve) => setTimeout(resolve, 25)) : undefined))
        .then(() => ledger.putQuota(NS, { name: NAME, spec: { hard: { pods: String(round + 1) } }, metadata: MANAGED }, { actor: SYNC }));
      const rest = jitter().then(() =>
        remove
          ? api.request('DELETE', `/v1/namespaces/${NS}/resourcequotas/${NAME}`, undefined, { 'x-remote-user': 'alice' })
          : api.request(
              'PUT',
              `/v1/namespaces/${NS}/resourcequotas/${NAME}`,
              { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: NAME }, spec: { hard: { pods: '99' } } },
              { 'x-remote-user': 'alice' },
            ),
      );
      const [, answer] = await Promise.all([sync, rest]);
      count(`${remove ? 'DELETE' : 'PUT'} ${answer.status}`);
      if (answer.status === 409)
        expect(answer.body.message).toContain(`it is managed by the cluster object ledgerquotas.quota-ledger.io "${NAME}"`);
      // The cluster object goes away: the next round starts from nothing.
      await ledger.deleteQuota(NS, NAME, { actor: SYNC }).catch(() => undefined);
    }
    const rows: Row[] = await api.db.dataSource.query(`SELECT type, actor, data FROM ledger_events WHERE namespace = $1 ORDER BY version`, [
      NS,
    ]);
    expect(restWritesOverManaged(rows), JSON.stringify(Object.fromEntries(outcomes))).toEqual([]);
    // Both orders happened: the race was run, not one side always first.
    expect(outcomes.get('PUT 409'), JSON.stringify(Object.fromEntries(outcomes))).toBeGreaterThan(0);
    expect((outcomes.get('PUT 201') ?? 0) + (outcomes.get('PUT 200') ?? 0), JSON.stringify(Object.fromEntries(outcomes))).toBeGreaterThan(
      0,
    );
  });
});
