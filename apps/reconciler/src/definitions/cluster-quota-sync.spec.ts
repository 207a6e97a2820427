import { describe, expect, it } from 'vitest';
import { MANAGED_BY_ANNOTATION } from '@quota/domain';
import type { ClusterObject, ClusterObjectApi, ObjectStatus } from './cluster-object-api.js';
import { ClusterQuotaSync, HierarchicalQuotaSync, type ClusterQuotaLedger } from './cluster-quota-sync.js';

type Held = {
  definition: { ref: { kind: string; name: string; namespace?: string }; metadata?: { annotations?: Record<string, string> } };
};

function fakeLedger(held: Held[]) {
  const writes: string[] = [];
  const ledger = {
    putSharedQuota: async (definition: { ref: { name: string }; spec: unknown }, options: { actor: string; onBehalfOf?: string }) => {
      writes.push(`put ${definition.ref.name} by ${options.actor} for ${options.onBehalfOf}`);
      return { created: true, changed: true, view: { hard: { pods: '2' }, used: { pods: '1' } }, position: '1' };
    },
    deleteSharedQuota: async (ref: { name: string; namespace?: string }, options: { actor: string }) => {
      writes.push(`delete ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name} by ${options.actor}`);
      return {};
    },
    listSharedQuotas: async (prefix: string) =>
      held.filter(
        (h) => prefix === (h.definition.ref.kind === 'ClusterResourceQuota' ? 'clusterresourcequotas/' : 'hierarchicalresourcequotas/'),
      ),
  };
  return { ledger: ledger as unknown as ClusterQuotaLedger, writes };
}

const object: ClusterObject = {
  metadata: { name: 'acme', namespace: '', generation: 1, annotations: { 'quota-ledger.io/last-applied-by': 'alice' } },
  spec: { selector: { labels: { matchLabels: { tenant: 'acme' } } }, quota: { hard: { pods: '2' } } },
};

describe('ClusterQuotaSync', () => {
  it("puts each LedgerClusterQuota into the ledger as the ClusterResourceQuota of its name, writes the ledger's total into its status, and removes only its own orphans", async () => {
    const gone = {
      definition: {
        ref: { kind: 'ClusterResourceQuota' as const, name: 'gone' },
        metadata: { annotations: { [MANAGED_BY_ANNOTATION]: 'ledgerclusterquotas.quota-ledger.io' } },
      },
    };
    const rest = { definition: { ref: { kind: 'ClusterResourceQuota' as const, name: 'rest' } } };
    const present = { definition: { ref: { kind: 'ClusterResourceQuota' as const, name: 'acme' }, metadata: gone.definition.metadata } };
    const { ledger, writes } = fakeLedger([gone, rest, present]);
    const statuses: ObjectStatus[] = [];
    const api: ClusterObjectApi = { list: async () => [object], updateStatus: async (_o, status) => (statuses.push(status), 'updated') };
    expect(await new ClusterQuotaSync(ledger, api).sync()).toEqual({ put: 1, removed: 1, statuses: 1, refused: 0 });
    expect(writes).toEqual(['put acme by system:reconciler for alice', 'delete gone by system:reconciler']);
    expect(statuses[0]).toMatchObject({ hard: { pods: '2' }, used: { pods: '1' }, observedGeneration: 1 });
  });

  it('puts a LedgerHierarchicalQuota as the HierarchicalResourceQuota of its namespace and name, and removes its own orphans by namespace', async () => {
    const managed = { annotations: { [MANAGED_BY_ANNOTATION]: 'ledgerhierarchicalquotas.quota-ledger.io' } };
    const gone = { definition: { ref: { kind: 'HierarchicalResourceQuota', name: 'org-pods', namespace: 'old-org' }, metadata: managed } };
    const crq = { definition: { ref: { kind: 'ClusterResourceQuota', name: 'org-pods' }, metadata: managed } };
    const { ledger, writes } = fakeLedger([gone, crq]);
    const objects: ClusterObject[] = [{ metadata: { name: 'org-pods', namespace: 'org' }, spec: { hard: { pods: '2' } } }];
    const api: ClusterObjectApi = { list: async () => objects, updateStatus: async () => 'updated' };
    expect(await new HierarchicalQuotaSync(ledger, api).sync()).toMatchObject({ put: 1, removed: 1 });
    expect(writes).toEqual(['put org-pods by kubernetes:unknown for undefined', 'delete old-org/org-pods by system:reconciler']);
  });
});
