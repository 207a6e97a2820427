import { describe, expect, it } from 'vitest';
import { MANAGED_BY_ANNOTATION } from '@quota/domain';
import type { ClusterObject, ClusterObjectApi } from './cluster-object-api.js';
import { LimitRangeSync, type LimitRangeLedger } from './limit-range-sync.js';

type Stored = { name: string; spec: unknown; metadata?: { annotations?: Record<string, string> } };

/** A ledger of LimitRanges by namespace, recording who wrote what. */
function fakeLedger(initial: Record<string, Stored[]> = {}) {
  const ranges = new Map(Object.entries(initial).map(([ns, list]) => [ns, [...list]]));
  const writes: string[] = [];
  const view = (namespace: string, definition: Stored) => ({ namespace, definition, version: 1, createdAt: '', updatedAt: '' });
  const ledger = {
    putLimitRange: async (namespace: string, definition: Stored, options: { actor: string; onBehalfOf?: string }) => {
      const list = ranges.get(namespace) ?? [];
      const before = list.find((r) => r.name === definition.name);
      const changed = JSON.stringify(before) !== JSON.stringify(definition);
      ranges.set(namespace, [...list.filter((r) => r.name !== definition.name), definition]);
      if (changed)
        writes.push(`put ${namespace}/${definition.name} by ${options.actor}${options.onBehalfOf ? ` for ${options.onBehalfOf}` : ''}`);
      return { created: !before, changed, view: view(namespace, definition), position: '1' };
    },
    deleteLimitRange: async (namespace: string, name: string, options: { actor: string }) => {
      ranges.set(
        namespace,
        (ranges.get(namespace) ?? []).filter((r) => r.name !== name),
      );
      writes.push(`delete ${namespace}/${name} by ${options.actor}`);
      return {};
    },
    managedDefinitions: async (_kind: 'limitRanges', managedBy: string) =>
      [...ranges.entries()].flatMap(([namespace, list]) =>
        list.filter((r) => r.metadata?.annotations?.[MANAGED_BY_ANNOTATION] === managedBy).map((r) => ({ namespace, name: r.name })),
      ),
  };
  return { ledger: ledger as unknown as LimitRangeLedger, writes, ranges };
}

function fakeApi(objects: ClusterObject[]) {
  let statusWrites = 0;
  const api: ClusterObjectApi = {
    list: async () => objects,
    updateStatus: async () => {
      statusWrites++;
      return 'updated';
    },
  };
  return { api, statusWrites: () => statusWrites };
}

const limitRange = (name: string, limits: unknown[], annotations: Record<string, string> = {}): ClusterObject => ({
  metadata: { name, namespace: 'team-a', annotations: { 'quota-ledger.io/last-applied-by': 'alice', ...annotations } },
  spec: { limits },
});

describe('LimitRangeSync', () => {
  it("puts each LimitRange into the ledger as the API server stores it, by the user our webhook stamped, marked as the cluster's, and writes no status", async () => {
    const { ledger, writes, ranges } = fakeLedger();
    const { api, statusWrites } = fakeApi([limitRange('defaults', [{ type: 'Container', max: { cpu: '1500m' } }], { team: 'a' })]);
    expect(await new LimitRangeSync(ledger, api).sync()).toEqual({ put: 1, removed: 0, statuses: 0, refused: 0 });
    expect(writes).toEqual(['put team-a/defaults by system:reconciler for alice']);
    expect(ranges.get('team-a')).toEqual([
      {
        name: 'defaults',
        spec: { limits: [{ type: 'Container', max: { cpu: '1500m' }, default: { cpu: '1500m' }, defaultRequest: { cpu: '1500m' } }] },
        metadata: { annotations: { team: 'a', [MANAGED_BY_ANNOTATION]: 'limitranges' } },
      },
    ]);
    expect(statusWrites()).toBe(0);
    // Unchanged on the next pass: nothing appended.
    expect((await new LimitRangeSync(ledger, api).sync()).put).toBe(0);
  });

  it('removes the ledger LimitRanges from the cluster whose object is gone, and leaves those made through REST and the quotas', async () => {
    const fromCluster = { name: 'gone', spec: { limits: [] }, metadata: { annotations: { [MANAGED_BY_ANNOTATION]: 'limitranges' } } };
    const fromLedgerQuota = {
      name: 'quota-like',
      spec: { limits: [] },
      metadata: { annotations: { [MANAGED_BY_ANNOTATION]: 'ledgerquotas.quota-ledger.io' } },
    };
    const { ledger, writes } = fakeLedger({ 'team-a': [fromCluster, fromLedgerQuota, { name: 'rest', spec: { limits: [] } }] });
    expect((await new LimitRangeSync(ledger, fakeApi([]).api).sync()).removed).toBe(1);
    expect(writes).toEqual(['delete team-a/gone by system:reconciler']);
  });

  it('refuses one the ledger cannot hold, keeps what the ledger had, and goes on', async () => {
    const { ledger, writes } = fakeLedger();
    const logged: string[] = [];
    const { api } = fakeApi([limitRange('bad', [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }]), limitRange('good', [])]);
    expect(await new LimitRangeSync(ledger, api, { log: (_level, msg) => logged.push(msg) }).sync()).toMatchObject({ put: 1, refused: 1 });
    expect(writes).toEqual(['put team-a/good by system:reconciler for alice']);
    expect(logged).toContain('one of the limit ranges was not put into the ledger');
  });
});
