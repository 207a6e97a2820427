import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { fold } from '../events/fold.js';
import { MANAGED_BY_ANNOTATION } from '../quota/managed-by.js';
import type { NamespaceCommand } from './commands.js';
import { decide } from './decide.js';
import { emptyFacts } from './facts.js';
import { decideSharedQuota, type PutSharedQuota } from './shared-quotas.js';

/**
 * A REST write (`unmanagedOnly`) to a definition a cluster object manages is refused in the
 * write's own decision, on the state its transaction read: the reconciler's sync (no
 * `unmanagedOnly`) writes the same definitions, and REST writes to the others go through.
 */
const T0 = Date.UTC(2026, 0, 1);
const NS = 'team-a';
const managed = (by: string) => ({ annotations: { [MANAGED_BY_ANNOTATION]: by } });
const limit = { max: 16, setting: 'QUOTAS_PER_NAMESPACE_MAX' } as const;
const cpuLimits = { limits: [{ type: 'Container', default: { cpu: '1' } }] };

function decideOn(events: readonly LedgerEvent[], command: NamespaceCommand) {
  const state = fold(events.map((event, i) => ({ ...event, version: i + 1, at: T0 + i })));
  return decide(command, { ...emptyFacts(NS, T0 + 1000, state, events.length > 0), liveLoaded: 'all' });
}

const quotaFrom = (metadata?: object): LedgerEvent => ({
  type: 'QuotaDefined',
  data: { name: 'compute', spec: { hard: { pods: '1' } }, ...(metadata ? { metadata } : {}) },
});
const limitRangeFrom = (metadata?: object): LedgerEvent => ({
  type: 'LimitRangeDefined',
  data: { name: 'defaults', spec: cpuLimits, ...(metadata ? { metadata } : {}) },
});
const putQuota = (extra: object = {}): NamespaceCommand => ({
  type: 'PutQuota',
  definition: { name: 'compute', spec: { hard: { pods: '2' } } },
  uid: 'u',
  limit,
  ...extra,
});
const putLimitRange = (extra: object = {}): NamespaceCommand => ({
  type: 'PutLimitRange',
  definition: { name: 'defaults', spec: { limits: [] } },
  uid: 'u',
  limit,
  ...extra,
});

const conflict = (resource: string, name: string, manager: string, verb: string) => ({
  kind: 'Refused',
  code: 'Conflict',
  message: `Operation cannot be fulfilled on ${resource} "${name}": it is managed by the cluster object ${manager} "${name}" in namespace "${NS}"; it can be ${verb} there (kubectl), not through this API`,
  details: { kind: resource, name },
});

describe('a REST write to a definition a cluster object manages', () => {
  it.each<readonly [string, readonly LedgerEvent[], NamespaceCommand, object]>([
    [
      'PUT of a LedgerQuota’s quota',
      [quotaFrom(managed('ledgerquotas.quota-ledger.io'))],
      putQuota({ unmanagedOnly: true }),
      conflict('resourcequotas', 'compute', 'ledgerquotas.quota-ledger.io', 'changed'),
    ],
    [
      'DELETE of it',
      [quotaFrom(managed('ledgerquotas.quota-ledger.io'))],
      { type: 'RemoveQuota', name: 'compute', unmanagedOnly: true },
      conflict('resourcequotas', 'compute', 'ledgerquotas.quota-ledger.io', 'deleted'),
    ],
    [
      'PUT of a LimitRange object’s',
      [limitRangeFrom(managed('limitranges'))],
      putLimitRange({ unmanagedOnly: true }),
      conflict('limitranges', 'defaults', 'limitranges', 'changed'),
    ],
    [
      'DELETE of it',
      [limitRangeFrom(managed('limitranges'))],
      { type: 'RemoveLimitRange', name: 'defaults', unmanagedOnly: true },
      conflict('limitranges', 'defaults', 'limitranges', 'deleted'),
    ],
    [
      'PUT with a resourceVersion, stale or not: managed is said first',
      [quotaFrom(managed('ledgerquotas.quota-ledger.io'))],
      putQuota({ unmanagedOnly: true, expectedVersion: 9 }),
      conflict('resourcequotas', 'compute', 'ledgerquotas.quota-ledger.io', 'changed'),
    ],
  ])('%s is refused with 409', (_, history, command, answer) => {
    const decided = decideOn(history, command);
    expect(decided.answer).toEqual(answer);
    expect(decided.events).toEqual([]);
  });

  it.each<readonly [string, readonly LedgerEvent[], NamespaceCommand, string]>([
    ['the sync’s PUT of the managed quota', [quotaFrom(managed('ledgerquotas.quota-ledger.io'))], putQuota(), 'Changed'],
    ['the sync’s DELETE of it', [quotaFrom(managed('ledgerquotas.quota-ledger.io'))], { type: 'RemoveQuota', name: 'compute' }, 'Removed'],
    ['a REST PUT of a quota made through REST', [quotaFrom()], putQuota({ unmanagedOnly: true }), 'Changed'],
    ['a REST PUT of a new quota', [], putQuota({ unmanagedOnly: true }), 'Defined'],
    [
      'a REST DELETE of a LimitRange made through REST',
      [limitRangeFrom()],
      { type: 'RemoveLimitRange', name: 'defaults', unmanagedOnly: true },
      'Removed',
    ],
  ])('%s goes through', (_, history, command, kind) => {
    expect(decideOn(history, command).answer).toEqual({ kind });
  });

  it('is refused for shared quotas too, a ClusterResourceQuota’s and a HierarchicalResourceQuota’s', () => {
    const crq: PutSharedQuota = {
      type: 'PutSharedQuota',
      definition: { ref: { kind: 'ClusterResourceQuota', name: 'team' }, spec: { hard: { pods: '10' } } },
      uid: 'u',
      namespacesMax: 10,
    };
    const head = (metadata?: object) => ({ version: 1, definition: { ...crq.definition, ...(metadata ? { metadata } : {}) }, members: [] });
    const facts = (metadata?: object) => ({ now: T0, head: head(metadata), namespaces: [] });
    const byCluster = managed('ledgerclusterquotas.quota-ledger.io');
    expect(decideSharedQuota({ ...crq, unmanagedOnly: true }, facts(byCluster)).answer).toMatchObject({
      code: 'Conflict',
      message:
        'Operation cannot be fulfilled on clusterresourcequotas "team": it is managed by the cluster object ledgerclusterquotas.quota-ledger.io "team"; it can be changed there (kubectl), not through this API',
    });
    expect(
      decideSharedQuota({ type: 'RemoveSharedQuota', ref: crq.definition.ref, unmanagedOnly: true }, facts(byCluster)).answer,
    ).toMatchObject({
      code: 'Conflict',
      message: expect.stringContaining('it can be deleted there'),
    });
    expect(decideSharedQuota({ type: 'RemoveSharedQuota', ref: crq.definition.ref }, facts(byCluster)).answer).toEqual({ kind: 'Removed' });
    expect(decideSharedQuota({ ...crq, unmanagedOnly: true }, facts()).answer).toMatchObject({ kind: 'Changed' });
    const hrqRef = { kind: 'HierarchicalResourceQuota', name: 'tree', namespace: NS } as const;
    const hrq = {
      version: 1,
      definition: { ref: hrqRef, spec: { hard: { pods: '1' } }, metadata: managed('ledgerhierarchicalquotas.quota-ledger.io') },
      members: [],
    };
    expect(
      decideSharedQuota({ type: 'RemoveSharedQuota', ref: hrqRef, unmanagedOnly: true }, { now: T0, head: hrq, namespaces: [] }).answer,
    ).toMatchObject({
      code: 'Conflict',
      message: expect.stringContaining(
        `hierarchicalresourcequotas "tree": it is managed by the cluster object ledgerhierarchicalquotas.quota-ledger.io "tree" in namespace "${NS}"`,
      ),
    });
  });
});
