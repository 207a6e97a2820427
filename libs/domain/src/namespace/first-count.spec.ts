import { describe, expect, it } from 'vitest';
import type { LedgerEvent, RecordedEvent } from '../events/events.js';
import { fold } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import type { ExistingObject } from './reconcile.js';
import type { NamespaceCommand } from './commands.js';
import { decide } from './decide.js';
import { emptyFacts, type NamespaceFacts } from './facts.js';

/**
 * A quota that starts covering existing objects must not count them as 0: objects admitted
 * while a namespace was not managed were never recorded, so a namespace made managed awaits its
 * first count (where an inventory can count), and its quotas refuse what they would charge until
 * a listing has adopted what exists, as Kubernetes refuses with `status unknown for quota`.
 */
const T0 = Date.UTC(2026, 0, 1);
const NS = 'team-a';
const PODS = { group: '', resource: 'pods' };

function pod(name: string, cpu = '100m'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu }, limits: { cpu } } }] },
  };
}

/** The namespace's facts after these events (appended one millisecond apart from T0). */
function facts(events: readonly LedgerEvent[], listedAt = 0): NamespaceFacts {
  const recorded: RecordedEvent[] = events.map((event, i) => ({ ...event, version: i + 1, at: T0 + i }) as RecordedEvent);
  const state = fold(recorded);
  // A reconcile is told which listed uids were released since its listing began: none here.
  return { ...emptyFacts(NS, T0 + 1000, state, events.length > 0), releasedSince: { since: listedAt, uids: new Set() } };
}

const reconcileOn = (command: NamespaceCommand & { type: 'Reconcile' }, events: readonly LedgerEvent[]) =>
  decide(command, facts(events, command.listedAt));

const putQuota = (hard: Record<string, string>, awaitFirstCount = true): NamespaceCommand => ({
  type: 'PutQuota',
  definition: { name: 'compute', spec: { hard } },
  uid: 'q-uid',
  limit: { max: 16, setting: 'QUOTAS_PER_NAMESPACE_MAX' },
  awaitFirstCount,
});

const admit = (name: string): NamespaceCommand => ({
  type: 'AdmitObject',
  request: { operation: 'CREATE', groupResource: PODS, namespace: NS, name, object: pod(name) },
  reservationId: `r-${name}`,
  dryRun: false,
  source: 'webhook',
});

const listing = (names: string[], listedAt: number): NamespaceCommand & { type: 'Reconcile' } => ({
  type: 'Reconcile',
  covers: [PODS],
  objects: names.map((name): ExistingObject => ({ groupResource: PODS, uid: `uid-${name}`, name, object: pod(name) })),
  listedAt,
  graceMs: 60_000,
  ids: names.map((_, i) => `adopted-${i + 1}`),
});

const quotaDefined: LedgerEvent = { type: 'QuotaDefined', data: { name: 'compute', spec: { hard: { pods: '2' } } } };
const awaited: LedgerEvent = { type: 'CountAwaited', data: { reason: 'managed' } };

describe('a namespace made managed', () => {
  it('awaits its first count where an inventory can count, and only when it was not managed before', () => {
    expect(decide(putQuota({ pods: '2' }), facts([])).events).toEqual([{ type: 'QuotaDefined', data: expect.anything() }, awaited]);
    expect(decide(putQuota({ pods: '2' }, false), facts([])).events.map((e) => e.type)).toEqual(['QuotaDefined']);
    const objectOnly: LedgerEvent = { type: 'NamespaceDefined', data: { name: NS, metadata: { labels: { team: 'a' } } } };
    expect(decide(putQuota({ pods: '2' }), facts([objectOnly])).events.map((e) => e.type)).toEqual(['QuotaDefined', 'CountAwaited']);
    const managed: LedgerEvent = { type: 'LimitRangeDefined', data: { name: 'lr', spec: { limits: [] } } };
    expect(decide(putQuota({ pods: '2' }), facts([managed])).events.map((e) => e.type)).toEqual(['QuotaDefined']);
  });

  it('refuses what its quotas would charge until counted, naming the quota as Kubernetes does', () => {
    const { events, answer } = decide(admit('third'), facts([quotaDefined, awaited]));
    expect(events).toEqual([]);
    expect(answer).toMatchObject({
      kind: 'Decided',
      result: { allowed: false, code: 403, denial: { kind: 'StatusUnknown', quota: 'compute', resources: ['pods'] } },
    });
    expect((answer as { result: { message: string } }).result.message).toBe(
      'pods "third" is forbidden: status unknown for quota: compute, resources: pods',
    );
    const list = decide(
      {
        type: 'AdmitResources',
        groupResource: PODS,
        name: 'x',
        resources: { pods: '1' },
        reservationId: 'r-x',
        dryRun: false,
        source: 'rest',
      },
      facts([quotaDefined, awaited]),
    );
    expect(list.answer).toMatchObject({
      kind: 'Decided',
      result: { allowed: false, denial: { kind: 'StatusUnknown', quota: 'compute', resources: ['pods'] } },
    });
  });

  it('is counted by a complete listing begun after it awaited, which adopts what exists; the next pod over hard is then refused', () => {
    // Begun before the namespace awaited (CountAwaited at T0 + 1): it adopts, but is no count.
    const before = reconcileOn(listing(['a', 'b'], T0), [quotaDefined, awaited]);
    expect(before.events.map((e) => e.type)).toEqual(['Adopted', 'Adopted']);
    expect(reconcileOn({ ...listing(['a', 'b'], T0 + 5), covers: [] }, [quotaDefined, awaited]).events).toEqual([]);
    // Begun after, but before the webhooks were sent the namespace's writes (its label not yet in place): no count.
    expect(reconcileOn({ ...listing(['a', 'b'], T0 + 5), countable: false }, [quotaDefined, awaited]).events.map((e) => e.type)).toEqual([
      'Adopted',
      'Adopted',
    ]);
    const { events, answer } = reconcileOn(listing(['a', 'b'], T0 + 5), [quotaDefined, awaited]);
    expect(events.map((e) => e.type)).toEqual(['Adopted', 'Adopted', 'Counted']);
    expect(answer).toMatchObject({ kind: 'Reconciled', counted: true });
    const after = facts([quotaDefined, awaited, ...events]);
    expect(after.state.awaitingCountSince).toBeUndefined();
    expect(decide(admit('third'), after).answer).toMatchObject({
      kind: 'Decided',
      result: { allowed: false, denial: { kind: 'Exceeded', quota: 'compute' } },
    });
  });
});
