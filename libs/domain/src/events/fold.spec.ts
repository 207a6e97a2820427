import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvariantViolation } from '../assert.js';
import type { ResourceQuotaSpec } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { LedgerEvent, RecordedEvent } from './events.js';
import { evolve, fold, initialState, recomputeSharedUsed, recomputeUsed, type NamespaceState } from './fold.js';

const T0 = Date.UTC(2026, 0, 1);

/** Numbers a list of events as the ledger would: gap-free versions, one second apart. */
function record(events: readonly LedgerEvent[], fromVersion = 0): RecordedEvent[] {
  return events.map((event, i) => ({ ...event, version: fromVersion + i + 1, at: T0 + (fromVersion + i) * 1000 }));
}

const usedOf = (state: NamespaceState, quota: string): Record<string, string> =>
  Resources.canonicalResourceList(state.used.get(quota) ?? {});

const podFacts = { Terminating: false, NotTerminating: true, BestEffort: false, NotBestEffort: true, PriorityClass: [] as string[] };
const pods = { group: '', resource: 'pods', kind: 'Pod' };

const quota = (name: string, spec: ResourceQuotaSpec): LedgerEvent => ({ type: 'QuotaDefined', data: { name, spec } });
const reserve = (
  id: string,
  charged: Record<string, string>,
  extra: Partial<Extract<LedgerEvent, { type: 'Reserved' }>['data']> = {},
): LedgerEvent => ({
  type: 'Reserved',
  data: {
    reservationId: id,
    object: { ...pods, name: id, uid: `uid-${id}` },
    operation: 'CREATE',
    charged,
    scopeFacts: podFacts,
    ...extra,
  },
});
const committed = (id: string): LedgerEvent => ({ type: 'Committed', data: { reservationId: id } });
const terminated = (id: string, usage: Record<string, string>): LedgerEvent => ({
  type: 'Terminated',
  data: { reservationId: id, reason: 'Succeeded', usage },
});

describe('fold', () => {
  it('counts a reservation toward every quota it matches, restricted to the quota’s hard resources', () => {
    const state = fold(
      record([
        quota('compute', { hard: { 'requests.cpu': '2', pods: '10' } }),
        quota('memory', { hard: { 'requests.memory': '1Gi' } }),
        reserve('a', { 'requests.cpu': '500m', 'requests.memory': '256Mi', pods: '1' }),
      ]),
    );
    expect(usedOf(state, 'compute')).toEqual({ 'requests.cpu': '500m', pods: '1' });
    expect(usedOf(state, 'memory')).toEqual({ 'requests.memory': '256Mi' });
    expect(state.version).toBe(3);
    expect(state.reservationsByUid.get('uid-a')).toBe('a');
  });

  it('a quota defined after objects exist counts them at once, as the quota controller would', () => {
    const state = fold(record([reserve('a', { pods: '1' }), reserve('b', { pods: '1' }), quota('q', { hard: { pods: '5' } })]));
    expect(usedOf(state, 'q')).toEqual({ pods: '2' });
  });

  it('a scoped quota counts only reservations whose facts match its scopes', () => {
    const terminating = { ...podFacts, Terminating: true, NotTerminating: false };
    const state = fold(
      record([
        quota('long', { hard: { pods: '5' }, scopes: ['NotTerminating'] }),
        quota('high', {
          hard: { pods: '5' },
          scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
        }),
        reserve('a', { pods: '1' }),
        reserve('b', { pods: '1' }, { scopeFacts: terminating }),
        reserve('c', { pods: '1' }, { scopeFacts: { ...podFacts, PriorityClass: ['high'] } }),
      ]),
    );
    expect(usedOf(state, 'long')).toEqual({ pods: '2' });
    expect(usedOf(state, 'high')).toEqual({ pods: '1' });
  });

  it('a release gives the usage back and the reservation leaves the state', () => {
    const state = fold(
      record([
        quota('q', { hard: { 'requests.cpu': '1' } }),
        reserve('a', { 'requests.cpu': '600m' }),
        { type: 'Committed', data: { reservationId: 'a' } },
        { type: 'Released', data: { reservationId: 'a', reason: 'deleted' } },
      ]),
    );
    expect(usedOf(state, 'q')).toEqual({ 'requests.cpu': '0' });
    expect(state.reservations.size).toBe(0);
    expect(state.reservationsByUid.size).toBe(0);
    expect(state.releasedCount).toBe(1);
  });

  it('an update charges only the increase while pending, and the whole new usage once committed', () => {
    const events = record([
      quota('q', { hard: { 'requests.cpu': '4', 'requests.memory': '4Gi' } }),
      reserve('v1', { 'requests.cpu': '1', 'requests.memory': '2Gi' }),
      { type: 'Committed', data: { reservationId: 'v1' } },
      {
        type: 'Reserved',
        data: {
          reservationId: 'v2',
          object: { ...pods, name: 'v1', uid: 'uid-v1' },
          operation: 'UPDATE',
          charged: { 'requests.cpu': '1', 'requests.memory': '0' },
          objectUsage: { 'requests.cpu': '2', 'requests.memory': '1Gi' },
          supersedes: 'v1',
          scopeFacts: podFacts,
        },
      },
    ]);
    const pending = fold(events);
    expect(usedOf(pending, 'q')).toEqual({ 'requests.cpu': '2', 'requests.memory': '2Gi' });
    const done = fold(
      record(
        [
          { type: 'Committed', data: { reservationId: 'v2' } },
          { type: 'Released', data: { reservationId: 'v1', reason: 'superseded' } },
        ],
        events.length,
      ),
      pending,
    );
    expect(usedOf(done, 'q')).toEqual({ 'requests.cpu': '2', 'requests.memory': '1Gi' });
    expect(done.reservationsByUid.get('uid-v1')).toBe('v2');
  });

  it('a released update falls back to the reservation of the object’s previous state', () => {
    const state = fold(
      record([
        reserve('v1', { pods: '1' }),
        {
          type: 'Reserved',
          data: {
            reservationId: 'v2',
            object: { ...pods, uid: 'uid-v1' },
            operation: 'UPDATE',
            charged: {},
            objectUsage: { pods: '1' },
            supersedes: 'v1',
            scopeFacts: podFacts,
          },
        },
        { type: 'Released', data: { reservationId: 'v2', reason: 'stale' } },
      ]),
    );
    expect(state.reservationsByUid.get('uid-v1')).toBe('v1');
  });

  it('an adopted object counts even when it pushes usage over hard', () => {
    const state = fold(
      record([
        quota('q', { hard: { pods: '1' } }),
        reserve('a', { pods: '1' }),
        { type: 'Adopted', data: { reservationId: 'b', object: { ...pods, uid: 'uid-b' }, usage: { pods: '1' }, scopeFacts: podFacts } },
      ]),
    );
    expect(usedOf(state, 'q')).toEqual({ pods: '2' });
    expect(state.reservations.get('b')?.status).toBe('committed');
  });

  it('a changed quota is recounted and keeps its creation time; a removed one disappears', () => {
    const events = record([
      quota('q', { hard: { pods: '5' } }),
      reserve('a', { pods: '1', 'requests.cpu': '1' }),
      { type: 'QuotaChanged', data: { name: 'q', spec: { hard: { pods: '5', 'requests.cpu': '3' } } } },
    ]);
    const changed = fold(events);
    expect(usedOf(changed, 'q')).toEqual({ pods: '1', 'requests.cpu': '1' });
    expect(changed.quotas.get('q')).toMatchObject({ version: 3, createdAt: T0, updatedAt: T0 + 2000 });
    const removed = fold(record([{ type: 'QuotaRemoved', data: { name: 'q' } }], 3), changed);
    expect(removed.quotas.size).toBe(0);
    expect(removed.used.size).toBe(0);
  });

  it.each<[string, LedgerEvent[]]>([
    [
      'a reservation released twice',
      [
        reserve('a', { pods: '1' }),
        { type: 'Released', data: { reservationId: 'a', reason: 'deleted' } },
        { type: 'Released', data: { reservationId: 'a', reason: 'deleted' } },
      ],
    ],
    ['a commit of an unknown reservation', [{ type: 'Committed', data: { reservationId: 'x' } }]],
    [
      'a reservation committed twice',
      [
        reserve('a', { pods: '1' }),
        { type: 'Committed', data: { reservationId: 'a' } },
        { type: 'Committed', data: { reservationId: 'a' } },
      ],
    ],
    ['a reservation id recorded twice', [reserve('a', { pods: '1' }), reserve('a', { pods: '1' })]],
    ['a negative charge', [reserve('a', { pods: '-1' })]],
    ['a quota defined twice', [quota('q', { hard: {} }), quota('q', { hard: {} })]],
    ['a quota changed before it exists', [{ type: 'QuotaChanged', data: { name: 'q', spec: { hard: {} } } }]],
    ['a limit range removed before it exists', [{ type: 'LimitRangeRemoved', data: { name: 'l' } }]],
    ['a pending reservation terminated', [reserve('a', { pods: '1' }), terminated('a', { pods: '1' })]],
    [
      'a reservation terminated twice',
      [
        reserve('a', { pods: '1', 'count/pods': '1' }),
        committed('a'),
        terminated('a', { 'count/pods': '1' }),
        terminated('a', { 'count/pods': '1' }),
      ],
    ],
    ['a termination that keeps more than was counted', [reserve('a', { pods: '1' }), committed('a'), terminated('a', { pods: '2' })]],
    ['a termination that keeps a key never counted', [reserve('a', { pods: '1' }), committed('a'), terminated('a', { 'count/pods': '1' })]],
  ])('crashes loudly on an impossible history: %s', (_name, events) => {
    expect(() => fold(record(events))).toThrow(InvariantViolation);
  });

  it('a terminated reservation keeps only what its event says, and its deletion releases that', () => {
    const charge = { pods: '1', 'count/pods': '1', 'requests.cpu': '500m' };
    const running = fold(
      record([quota('q', { hard: { pods: '5', 'count/pods': '5', 'requests.cpu': '2' } }), reserve('a', charge), committed('a')]),
    );
    const terminal = fold(record([terminated('a', { 'count/pods': '1' })], 3), running);
    expect(usedOf(terminal, 'q')).toEqual({ pods: '0', 'count/pods': '1', 'requests.cpu': '0' });
    expect(terminal.reservations.get('a')).toMatchObject({ status: 'committed', terminatedAt: T0 + 3000 });
    const deleted = fold(record([{ type: 'Released', data: { reservationId: 'a', reason: 'deleted' } }], 4), terminal);
    expect(usedOf(deleted, 'q')).toEqual({ pods: '0', 'count/pods': '0', 'requests.cpu': '0' });
  });

  it('counts the namespace’s quotas under count/resourcequotas and resourcequotas, as Kubernetes counts ResourceQuota objects, and nothing reserved toward them', () => {
    const limit = { hard: { 'count/resourcequotas': '3', resourcequotas: '3', pods: '5' } };
    const adoptedQuota: LedgerEvent = {
      type: 'Adopted',
      data: {
        reservationId: 'rq',
        object: { group: '', resource: 'resourcequotas', uid: 'uid-rq' },
        usage: { 'count/resourcequotas': '1', resourcequotas: '1' },
        scopeFacts: {},
      },
    };
    const two = fold(
      record([
        quota('a', limit),
        adoptedQuota,
        quota('b', { hard: { pods: '1' } }),
        quota('scoped', { hard: { resourcequotas: '9' }, scopes: ['BestEffort'] }),
      ]),
    );
    expect(usedOf(two, 'a')).toEqual({ 'count/resourcequotas': '3', resourcequotas: '3', pods: '0' });
    // A scoped quota counts no quota objects (the object-count evaluator matches no scope).
    expect(usedOf(two, 'scoped')).toEqual({ resourcequotas: '0' });
    expect(Resources.canonicalResourceList(recomputeUsed(two, 'a') ?? {})).toEqual(usedOf(two, 'a'));
    const one = fold(
      record(
        [
          { type: 'QuotaRemoved', data: { name: 'b' } },
          { type: 'Released', data: { reservationId: 'rq', reason: 'deleted' } },
        ],
        4,
      ),
      two,
    );
    expect(usedOf(one, 'a')).toEqual({ 'count/resourcequotas': '2', resourcequotas: '2', pods: '0' });
  });

  it('crashes loudly on a gap in the stream’s versions', () => {
    const [first] = record([reserve('a', { pods: '1' })]);
    expect(() => fold([{ ...first!, version: 2 }])).toThrow(/gap-free/);
  });

  it('evolve does not change the state it is given', () => {
    const before = fold(record([quota('q', { hard: { pods: '1' } })]));
    const after = evolve(before, record([reserve('a', { pods: '1' })], 1)[0]!);
    expect(usedOf(before, 'q')).toEqual({ pods: '0' });
    expect(usedOf(after, 'q')).toEqual({ pods: '1' });
  });
});

// ---------------------------------------------------------------------------------------
// Laws, over random valid histories.

const KEYS = ['pods', 'requests.cpu', 'limits.memory', 'count/services'] as const;
const SCOPES = [undefined, ['Terminating'], ['NotBestEffort'], ['BestEffort', 'NotTerminating']] as const;

type Step =
  | { kind: 'quota'; name: number; hard: bigint[]; scopes: number }
  | { kind: 'removeQuota'; name: number }
  | { kind: 'reserve'; usage: bigint[]; facts: [boolean, boolean, number] }
  | { kind: 'update'; pick: number; usage: bigint[] }
  | { kind: 'commit'; pick: number }
  | { kind: 'release'; pick: number; reason: number }
  | { kind: 'adopt'; usage: bigint[]; facts: [boolean, boolean, number] }
  | { kind: 'terminate'; pick: number; keep: boolean[] };

const amounts = fc.array(fc.bigInt({ min: 0n, max: 5_000_000_000n }), { minLength: KEYS.length, maxLength: KEYS.length });
const factsArb = fc.tuple(fc.boolean(), fc.boolean(), fc.nat(2));
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('quota' as const), name: fc.nat(2), hard: amounts, scopes: fc.nat(SCOPES.length - 1) }),
  fc.record({ kind: fc.constant('removeQuota' as const), name: fc.nat(2) }),
  fc.record({ kind: fc.constant('reserve' as const), usage: amounts, facts: factsArb }),
  fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), usage: amounts }),
  fc.record({ kind: fc.constant('commit' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), reason: fc.nat(3) }),
  fc.record({ kind: fc.constant('adopt' as const), usage: amounts, facts: factsArb }),
  fc.record({
    kind: fc.constant('terminate' as const),
    pick: fc.nat(),
    keep: fc.array(fc.boolean(), { minLength: KEYS.length, maxLength: KEYS.length }),
  }),
);

const list = (values: bigint[]): Record<string, string> =>
  Object.fromEntries(KEYS.map((key, i) => [key, Quantity.fromNanos(values[i] ?? 0n).canonical()]));

/** Turns random intents into a valid history, tracking just enough to stay valid. */
function history(steps: readonly Step[]): LedgerEvent[] {
  const events: LedgerEvent[] = [];
  const quotas = new Set<string>();
  const live = new Map<
    string,
    { status: 'reserved' | 'committed'; uid: string; usage: bigint[]; supersedes?: string; facts: ScopeFactsTuple; terminated?: true }
  >();
  type ScopeFactsTuple = [boolean, boolean, number];
  const factsOf = ([terminating, bestEffort, priority]: ScopeFactsTuple) => ({
    Terminating: terminating,
    NotTerminating: !terminating,
    BestEffort: bestEffort,
    NotBestEffort: !bestEffort,
    PriorityClass: priority === 0 ? [] : [`p${priority}`],
  });
  let next = 0;
  const pick = <T>(items: T[], n: number): T | undefined => items[n % Math.max(items.length, 1)];
  for (const step of steps) {
    switch (step.kind) {
      case 'quota': {
        const name = `q${step.name}`;
        const scopes = SCOPES[step.scopes];
        const spec: ResourceQuotaSpec = { hard: list(step.hard), ...(scopes ? { scopes: [...scopes] } : {}) };
        events.push({ type: quotas.has(name) ? 'QuotaChanged' : 'QuotaDefined', data: { name, spec } });
        quotas.add(name);
        break;
      }
      case 'removeQuota': {
        const name = `q${step.name}`;
        if (quotas.delete(name)) events.push({ type: 'QuotaRemoved', data: { name } });
        break;
      }
      case 'reserve':
      case 'adopt': {
        const id = `r${next++}`;
        const uid = `u${id}`;
        const object = { ...pods, uid };
        if (step.kind === 'reserve') {
          events.push({
            type: 'Reserved',
            data: { reservationId: id, object, operation: 'CREATE', charged: list(step.usage), scopeFacts: factsOf(step.facts) },
          });
          live.set(id, { status: 'reserved', uid, usage: step.usage, facts: step.facts });
        } else {
          events.push({ type: 'Adopted', data: { reservationId: id, object, usage: list(step.usage), scopeFacts: factsOf(step.facts) } });
          live.set(id, { status: 'committed', uid, usage: step.usage, facts: step.facts });
        }
        break;
      }
      case 'update': {
        const previous = pick(
          [...live.entries()].filter(([, r]) => r.status === 'committed' && !r.supersedes),
          step.pick,
        );
        if (!previous) break;
        const [oldId, old] = previous;
        const id = `r${next++}`;
        const charged = step.usage.map((n, i) => (n > (old.usage[i] ?? 0n) ? n - (old.usage[i] ?? 0n) : 0n));
        events.push({
          type: 'Reserved',
          data: {
            reservationId: id,
            object: { ...pods, uid: old.uid },
            operation: 'UPDATE',
            charged: list(charged),
            objectUsage: list(step.usage),
            supersedes: oldId,
            scopeFacts: factsOf(old.facts),
            // Half the updates come from an object that was in other scopes (a pod turning terminating).
            previousScopeFacts: factsOf(step.pick % 2 === 0 ? old.facts : [!old.facts[0], old.facts[1], old.facts[2]]),
          },
        });
        live.set(id, { status: 'reserved', uid: old.uid, usage: step.usage, supersedes: oldId, facts: old.facts });
        break;
      }
      case 'commit': {
        const chosen = pick(
          [...live.entries()].filter(([, r]) => r.status === 'reserved'),
          step.pick,
        );
        if (!chosen) break;
        const [id, reservation] = chosen;
        events.push({ type: 'Committed', data: { reservationId: id } });
        reservation.status = 'committed';
        if (reservation.supersedes && live.has(reservation.supersedes)) {
          events.push({ type: 'Released', data: { reservationId: reservation.supersedes, reason: 'superseded' } });
          live.delete(reservation.supersedes);
        }
        delete reservation.supersedes;
        break;
      }
      case 'terminate': {
        // A committed object turns terminal: it keeps some keys of its charge (a pod keeps count/pods).
        const chosen = pick(
          [...live.entries()].filter(([, r]) => r.status === 'committed' && !r.terminated),
          step.pick,
        );
        if (!chosen) break;
        const [id, reservation] = chosen;
        const kept = reservation.usage.map((n, i) => (step.keep[i] ? n : undefined));
        const usage = Object.fromEntries(
          KEYS.flatMap((key, i) => (kept[i] === undefined ? [] : [[key, Quantity.fromNanos(kept[i] as bigint).canonical()]])),
        );
        const reason = (['Succeeded', 'Failed', 'DeletionGracePeriodElapsed'] as const)[step.pick % 3] ?? 'Succeeded';
        events.push({ type: 'Terminated', data: { reservationId: id, reason, usage } });
        reservation.usage = kept.map((n) => n ?? 0n);
        reservation.terminated = true;
        break;
      }
      case 'release': {
        const chosen = pick([...live.keys()], step.pick);
        if (!chosen) break;
        const reason = (['stale', 'deleted', 'cancelled', 'expired'] as const)[step.reason] ?? 'deleted';
        events.push({ type: 'Released', data: { reservationId: chosen, reason } });
        live.delete(chosen);
        for (const r of live.values()) if (r.supersedes === chosen) delete r.supersedes;
        break;
      }
    }
  }
  return events;
}

const historyArb = fc.array(stepArb, { maxLength: 60 }).map((steps) => record(history(steps)));

describe('fold laws', () => {
  it('never yields negative usage from any valid history', () => {
    fc.assert(
      fc.property(historyArb, (events) => {
        const state = fold(events);
        for (const used of state.used.values()) expect(Resources.negativeKeys(used)).toEqual([]);
      }),
    );
  });

  it('keeps each quota’s usage equal to a recount of its live reservations', () => {
    fc.assert(
      fc.property(historyArb, (events) => {
        const state = fold(events);
        for (const name of state.quotas.keys()) {
          expect(Resources.equals(state.used.get(name) ?? {}, recomputeUsed(state, name) ?? {})).toBe(true);
        }
      }),
    );
  });

  it('folding a history in two parts equals folding it whole (as-of from a snapshot)', () => {
    fc.assert(
      fc.property(historyArb, fc.nat(), (events, cut) => {
        const at = events.length === 0 ? 0 : cut % (events.length + 1);
        const whole = fold(events);
        const split = fold(events.slice(at), fold(events.slice(0, at)));
        expect(split.version).toBe(whole.version);
        expect([...split.used.keys()].sort()).toEqual([...whole.used.keys()].sort());
        for (const [name, used] of whole.used) expect(Resources.equals(split.used.get(name) ?? {}, used)).toBe(true);
        expect([...split.reservations.keys()].sort()).toEqual([...whole.reservations.keys()].sort());
      }),
    );
  });

  it('evolving event by event equals folding', () => {
    fc.assert(
      fc.property(historyArb, (events) => {
        const stepped = events.reduce(evolve, initialState());
        const folded = fold(events);
        for (const [name, used] of folded.used) expect(Resources.equals(stepped.used.get(name) ?? {}, used)).toBe(true);
        expect(stepped.reservations.size).toBe(folded.reservations.size);
      }),
      { numRuns: 50 },
    );
  });
});

describe('fold laws for a shared quota covering the namespace', () => {
  const applied = (spec: ResourceQuotaSpec): LedgerEvent => ({
    type: 'SharedQuotaApplied',
    data: { key: 'clusterresourcequotas/team', ref: { kind: 'ClusterResourceQuota', name: 'team' }, spec },
  });
  const specOf = (events: readonly RecordedEvent[]): ResourceQuotaSpec => {
    const defined = events.find((e) => e.type === 'QuotaDefined' || e.type === 'QuotaChanged');
    return defined && (defined.type === 'QuotaDefined' || defined.type === 'QuotaChanged')
      ? defined.data.spec
      : { hard: { pods: '10', 'requests.cpu': '4' } };
  };

  it('keeps the namespace’s part equal to a recount, and to a ResourceQuota of the same spec applied at the same point', () => {
    fc.assert(
      fc.property(historyArb, fc.nat(), (events, cut) => {
        const at = events.length === 0 ? 0 : cut % (events.length + 1);
        const spec = specOf(events);
        const plain = events.map(({ version: _v, at: _at, ...e }) => e as LedgerEvent);
        const withShared = record([
          ...plain.slice(0, at),
          applied(spec),
          { type: 'QuotaDefined', data: { name: 'twin', spec } },
          ...plain.slice(at),
        ]);
        const state = fold(withShared);
        const part = state.sharedUsed.get('clusterresourcequotas/team') ?? {};
        expect(Resources.equals(part, recomputeSharedUsed(state, 'clusterresourcequotas/team') ?? {})).toBe(true);
        // The twin quota is never changed or removed by the history (its name is new), so it counts the same.
        expect(Resources.canonicalResourceList(part)).toEqual(usedOf(state, 'twin'));
      }),
    );
  });

  it('forgets the namespace’s part once the shared quota is withdrawn, and a Namespace object alone leaves it unmanaged', () => {
    const state = fold(
      record([
        applied({ hard: { pods: '5' } }),
        reserve('a', { pods: '1' }),
        { type: 'SharedQuotaWithdrawn', data: { key: 'clusterresourcequotas/team' } },
      ]),
    );
    expect(state.shared.size).toBe(0);
    expect(state.sharedUsed.size).toBe(0);
    const labelled = fold(record([{ type: 'NamespaceDefined', data: { name: 'a', metadata: { labels: { team: 'x' } } } }]));
    expect(labelled.objectOnly).toBe(true);
    expect(labelled.object?.definition.metadata?.labels).toEqual({ team: 'x' });
    expect(fold(record([applied({ hard: { pods: '5' } })], 1), labelled).objectOnly).toBeUndefined();
  });
});
