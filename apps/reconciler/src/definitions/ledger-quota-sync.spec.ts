import { describe, expect, it } from 'vitest';
import type {
  ClusterObjectApi as LedgerQuotaApi,
  ClusterObject as LedgerQuotaObject,
  ObjectStatus as LedgerQuotaStatus,
} from './cluster-object-api.js';
import { MANAGED_BY_ANNOTATION, MANAGED_BY_CLUSTER } from '@quota/domain';
import { LedgerError } from '@quota/ledger';
import { authorOf, LedgerQuotaSync, type LedgerQuotaLedger } from './ledger-quota-sync.js';

type Stored = { name: string; spec: unknown; metadata?: { annotations?: Record<string, string> } };

/** A ledger of quota definitions by namespace, recording who wrote what. */
function fakeLedger(initial: Record<string, Stored[]> = {}) {
  const quotas = new Map(Object.entries(initial).map(([ns, list]) => [ns, [...list]]));
  const writes: string[] = [];
  const view = (namespace: string, q: Stored) => ({
    namespace,
    definition: q,
    hard: (q.spec as { hard?: Record<string, string> }).hard ?? {},
    used: { pods: '1' },
    version: 1,
    createdAt: '',
    updatedAt: '',
  });
  const ledger = {
    putQuota: async (namespace: string, definition: Stored, options: { actor: string }) => {
      const list = quotas.get(namespace) ?? [];
      const before = list.find((q) => q.name === definition.name);
      const changed = JSON.stringify(before) !== JSON.stringify(definition);
      quotas.set(namespace, [...list.filter((q) => q.name !== definition.name), definition]);
      if (changed) writes.push(`put ${namespace}/${definition.name} by ${options.actor}`);
      return { created: !before, changed, view: view(namespace, definition), position: '1' };
    },
    deleteQuota: async (namespace: string, name: string, options: { actor: string }) => {
      quotas.set(
        namespace,
        (quotas.get(namespace) ?? []).filter((q) => q.name !== name),
      );
      writes.push(`delete ${namespace}/${name} by ${options.actor}`);
      return {};
    },
    managedDefinitions: async (_kind: 'quotas', managedBy: string) =>
      [...quotas.entries()].flatMap(([namespace, list]) =>
        list.filter((q) => q.metadata?.annotations?.[MANAGED_BY_ANNOTATION] === managedBy).map((q) => ({ namespace, name: q.name })),
      ),
  };
  return { ledger: ledger as unknown as LedgerQuotaLedger, writes, quotas };
}

function fakeApi(objects: LedgerQuotaObject[] | undefined) {
  const statuses: { name: string; status: LedgerQuotaStatus }[] = [];
  const api: LedgerQuotaApi = {
    list: async () => objects,
    updateStatus: async (object, status) => {
      statuses.push({ name: object.metadata.name, status });
      return 'updated';
    },
  };
  return { api, statuses };
}

const object = (name: string, hard: Record<string, string>, extra: Partial<LedgerQuotaObject['metadata']> = {}): LedgerQuotaObject => ({
  metadata: {
    name,
    namespace: 'team-a',
    generation: 2,
    managedFields: [{ manager: 'kubectl-client-side-apply', operation: 'Update', time: '2026-01-01T00:00:00Z' }],
    ...extra,
  },
  spec: { hard },
});

describe('LedgerQuotaSync', () => {
  it('puts each object into the ledger as made by its manager, marked as from the cluster, and writes used and hard into its status', async () => {
    const { ledger, writes, quotas } = fakeLedger();
    const { api, statuses } = fakeApi([
      object('compute', { pods: '1' }, { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', team: 'a' } }),
    ]);
    const outcome = await new LedgerQuotaSync(ledger, api).sync();
    expect(outcome).toMatchObject({ put: 1, removed: 0, statuses: 1, refused: 0 });
    expect(writes).toEqual(['put team-a/compute by kubernetes:kubectl-client-side-apply']);
    expect(quotas.get('team-a')?.[0]?.metadata?.annotations).toEqual({ team: 'a', [MANAGED_BY_ANNOTATION]: MANAGED_BY_CLUSTER });
    expect(statuses[0]?.status).toMatchObject({
      hard: { pods: '1' },
      used: { pods: '1' },
      observedGeneration: 2,
      conditions: [{ type: 'Synced', status: 'True' }],
    });

    // A second pass with the status as written changes nothing.
    const again = fakeApi([{ ...object('compute', { pods: '1' }, { annotations: { team: 'a' } }), status: statuses[0]?.status }]);
    expect(await new LedgerQuotaSync(ledger, again.api).sync()).toEqual({ put: 0, removed: 0, statuses: 0, refused: 0 });
  });

  it('removes the ledger quotas from the cluster whose object is gone, and leaves those made through REST', async () => {
    const fromCluster = {
      name: 'gone',
      spec: { hard: { pods: '1' } },
      metadata: { annotations: { [MANAGED_BY_ANNOTATION]: MANAGED_BY_CLUSTER } },
    };
    const { ledger, writes } = fakeLedger({ 'team-a': [fromCluster, { name: 'rest', spec: { hard: { pods: '2' } } }] });
    const { api } = fakeApi([]);
    expect((await new LedgerQuotaSync(ledger, api).sync()).removed).toBe(1);
    expect(writes).toEqual(['delete team-a/gone by system:reconciler']);
  });

  it('counts nothing, and goes on, when another replica removed the quota first', async () => {
    const fromCluster = {
      name: 'gone',
      spec: { hard: { pods: '1' } },
      metadata: { annotations: { [MANAGED_BY_ANNOTATION]: MANAGED_BY_CLUSTER } },
    };
    const { ledger } = fakeLedger({ 'team-a': [fromCluster], 'team-b': [{ ...fromCluster, name: 'also-gone' }] });
    const deleted: string[] = [];
    ledger.deleteQuota = async (namespace, name) => {
      deleted.push(`${namespace}/${name}`);
      if (namespace === 'team-a') throw new LedgerError('NotFound', `resourcequotas "${name}" not found`);
      return {} as never;
    };
    expect((await new LedgerQuotaSync(ledger, fakeApi([]).api).sync()).removed).toBe(1);
    expect(deleted).toEqual(['team-a/gone', 'team-b/also-gone']);
  });

  it('removes nothing when the cluster does not serve the kind', async () => {
    const fromCluster = {
      name: 'kept',
      spec: { hard: { pods: '1' } },
      metadata: { annotations: { [MANAGED_BY_ANNOTATION]: MANAGED_BY_CLUSTER } },
    };
    const { ledger, writes } = fakeLedger({ 'team-a': [fromCluster] });
    await new LedgerQuotaSync(ledger, fakeApi(undefined).api).sync();
    expect(writes).toEqual([]);
  });

  it('refuses an invalid spec with a Synced=False condition and leaves the ledger as it was', async () => {
    const { ledger, writes } = fakeLedger();
    const { api, statuses } = fakeApi([object('bad', { pods: 'lots' })]);
    expect((await new LedgerQuotaSync(ledger, api).sync()).refused).toBe(1);
    expect(writes).toEqual([]);
    expect(statuses[0]?.status.conditions?.[0]).toMatchObject({ type: 'Synced', status: 'False', reason: 'Refused' });
    expect(statuses[0]?.status.conditions?.[0]?.message).toContain('spec.hard[pods]');
  });

  it("names the newest main-resource managedFields entry's manager, not the status writer's", () => {
    const managedFields = [
      { manager: 'kubectl-client-side-apply', operation: 'Update', time: '2026-01-01T00:00:00Z' },
      { manager: 'argocd-controller', operation: 'Apply', time: '2026-01-02T00:00:00Z' },
      { manager: 'quota-ledger-reconciler', operation: 'Update', time: '2026-01-03T00:00:00Z', subresource: 'status' },
    ];
    expect(authorOf(object('q', {}, { managedFields }))).toEqual({ actor: 'kubernetes:argocd-controller' });
    expect(authorOf(object('q', {}, { managedFields: [] }))).toEqual({ actor: 'kubernetes:unknown' });
  });

  it('names the user the webhook stamped, as the reconciler acting on their behalf', () => {
    const stamped = object('q', {}, { annotations: { 'quota-ledger.io/last-applied-by': 'alice' } });
    expect(authorOf(stamped)).toEqual({ actor: 'system:reconciler', onBehalfOf: 'alice' });
  });
});
