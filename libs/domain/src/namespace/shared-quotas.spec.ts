import { describe, expect, it } from 'vitest';
import { decideSharedQuota, type PutSharedQuota, type SharedQuotaFacts } from './shared-quotas.js';

const team = (labels: Record<string, string>) => ({ name: '', metadata: { labels } });
const crq: PutSharedQuota = {
  type: 'PutSharedQuota',
  definition: {
    ref: { kind: 'ClusterResourceQuota', name: 'team' },
    spec: { hard: { pods: '10' } },
    selector: { labels: { matchLabels: { team: 'a' } } },
  },
  uid: 'u-1',
  namespacesMax: 2,
};
const facts = (over: Partial<SharedQuotaFacts> = {}): SharedQuotaFacts => ({
  now: Date.parse('2026-01-01T00:00:00Z'),
  head: undefined,
  namespaces: [
    { namespace: 'b', object: team({ team: 'a' }), shared: [] },
    { namespace: 'a', object: team({ team: 'a' }), shared: [] },
    { namespace: 'c', object: team({ team: 'z' }), shared: ['clusterresourcequotas/team'] },
  ],
  ...over,
});

describe('the shared-quota decider', () => {
  it('defines a new quota with a uid and creation time, and resyncs what it selects and what it covered, in name order', () => {
    const { events, answer, resync } = decideSharedQuota(crq, facts());
    expect(answer).toMatchObject({
      kind: 'Defined',
      definition: { metadata: { uid: 'u-1', creationTimestamp: '2026-01-01T00:00:00.000Z' } },
    });
    expect(events.map((e) => e.type)).toEqual(['SharedQuotaDefined']);
    expect(resync).toEqual([
      { namespace: 'a', covered: true },
      { namespace: 'b', covered: true },
      { namespace: 'c', covered: false },
    ]);
  });

  it('changes nothing when the stored definition is the same, whatever its key order', () => {
    const stored = decideSharedQuota(crq, facts()).answer;
    if (stored.kind !== 'Defined') throw new Error('defined first');
    const reordered = JSON.parse(
      JSON.stringify({
        spec: stored.definition.spec,
        metadata: stored.definition.metadata,
        selector: stored.definition.selector,
        ref: stored.definition.ref,
      }),
    );
    expect(decideSharedQuota(crq, facts({ head: { version: 3, definition: reordered, members: ['a', 'b'] } }))).toEqual({
      events: [],
      answer: { kind: 'Unchanged' },
      resync: [],
    });
  });

  it('refuses a stale resourceVersion, and a selection over the most namespaces one may cover', () => {
    expect(decideSharedQuota({ ...crq, expectedVersion: 1 }, facts()).answer).toMatchObject({ kind: 'Refused', code: 'Conflict' });
    expect(decideSharedQuota({ ...crq, namespacesMax: 1 }, facts()).answer).toMatchObject({
      kind: 'Refused',
      code: 'Forbidden',
      details: { kind: 'clusterresourcequotas', name: 'team' },
    });
  });

  it('removes a quota from every namespace it covered, and answers NotFound for one that is gone', () => {
    const ref = crq.definition.ref;
    expect(
      decideSharedQuota(
        { type: 'RemoveSharedQuota', ref },
        facts({ head: { version: 2, definition: crq.definition, members: ['b', 'a'] } }),
      ),
    ).toEqual({
      events: [{ type: 'SharedQuotaRemoved', data: { ref } }],
      answer: { kind: 'Removed' },
      resync: [
        { namespace: 'a', covered: false },
        { namespace: 'b', covered: false },
      ],
    });
    expect(decideSharedQuota({ type: 'RemoveSharedQuota', ref }, facts()).answer).toMatchObject({ kind: 'Refused', code: 'NotFound' });
  });
});
