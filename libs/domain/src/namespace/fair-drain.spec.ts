import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LedgerEvent, RecordedEvent } from '../events/events.js';
import { evolve, initialState, type NamespaceState } from '../events/fold.js';
import { FAIR_SHARE_WEIGHT_KEY } from '../queue/policy.js';
import * as Resources from '../resources/resource-list.js';
import type { SharedQuotaRef } from '../shared/shared-quota.js';
import { sharedQuotaKey } from '../shared/shared-quota.js';
import { decideFairDrain, freedSharedKeys } from './fair-drain.js';
import { emptyFacts, type NamespaceFacts } from './facts.js';

const NOW = Date.UTC(2026, 0, 1);
const REF: SharedQuotaRef = { kind: 'ClusterResourceQuota', name: 'pool' };
const KEY = sharedQuotaKey(REF);
const WIDGETS = { group: '', resource: 'widgets' };

/** A namespace under the shared quota: its weight, what it holds of the quota now (cpu), and how many waiters of `each` cpu it has queued. */
interface Given {
  readonly name: string;
  readonly weight: number;
  readonly used: number;
  readonly waiters: number;
  readonly each?: number;
  /** Its waiters' priority (default 0). */
  readonly priority?: number;
}

const fold = (events: readonly LedgerEvent[], state: NamespaceState = initialState()): NamespaceState =>
  events.reduce((s, event) => evolve(s, { ...event, version: s.version + 1, at: NOW } as RecordedEvent), state);

function stateOf(given: Given, hard: number): NamespaceState {
  const events: LedgerEvent[] = [
    { type: 'NamespaceDefined', data: { name: given.name, metadata: { labels: { [FAIR_SHARE_WEIGHT_KEY]: String(given.weight) } } } },
    { type: 'SharedQuotaApplied', data: { key: KEY, ref: REF, spec: { hard: { cpu: String(hard) } } } },
  ];
  if (given.used > 0)
    events.push({
      type: 'Reserved',
      data: {
        reservationId: `${given.name}-held`,
        object: WIDGETS,
        operation: 'CREATE',
        charged: { cpu: String(given.used) },
        scopeFacts: {},
      },
    });
  for (let i = 0; i < given.waiters; i++) {
    events.push({
      type: 'Queued',
      data: {
        reservationId: `${given.name}-w${i}`,
        object: WIDGETS,
        resources: { cpu: String(given.each ?? 1) },
        priority: given.priority ?? 0,
        deadline: new Date(NOW + 60_000).toISOString(),
        waitingFor: [],
      },
    });
  }
  return fold(events);
}

const cpu = (list: Resources.ResourceList | undefined): number =>
  Number((Resources.get(list ?? Resources.EMPTY, 'cpu')?.nanos ?? 0n) / 1_000_000_000n);

/** Every namespace's facts as one transaction reads them: its state, and the shared quota's usage in the others. */
function factsOf(states: readonly NamespaceState[], names: readonly string[]): NamespaceFacts[] {
  const total = states.reduce((sum, s) => Resources.add(sum, s.sharedUsed.get(KEY) ?? Resources.EMPTY), Resources.EMPTY);
  return states.map((state, i) => ({
    ...emptyFacts(names[i] ?? '', NOW, state),
    sharedElsewhere: new Map([[KEY, Resources.subtract(total, state.sharedUsed.get(KEY) ?? Resources.EMPTY)]]),
  }));
}

/** The drain decided, and the namespaces' states once its steps are appended. */
function drain(namespaces: readonly Given[], hard: number) {
  const states = namespaces.map((given) => stateOf(given, hard));
  const decision = decideFairDrain(
    factsOf(
      states,
      namespaces.map((n) => n.name),
    ),
    KEY,
  );
  const after = new Map(namespaces.map((given, i) => [given.name, states[i] ?? initialState()]));
  for (const step of decision.steps) after.set(step.namespace, fold(step.events, after.get(step.namespace)));
  const admitted = (name: string): number => decision.admitted.get(name) ?? 0;
  const used = [...after.values()].reduce((sum, s) => sum + cpu(s.sharedUsed.get(KEY)), 0);
  return { decision, after, admitted, used };
}

describe('decideFairDrain', () => {
  it.each([
    // [case, namespaces, hard, admitted per namespace]
    [
      'shares freed room equally between namespaces of equal weight',
      [
        { name: 'a', weight: 1, used: 0, waiters: 5 },
        { name: 'b', weight: 1, used: 0, waiters: 5 },
      ],
      4,
      { a: 2, b: 2 },
    ],
    [
      'shares it in proportion to the weights',
      [
        { name: 'a', weight: 1, used: 0, waiters: 8 },
        { name: 'b', weight: 3, used: 0, waiters: 8 },
      ],
      8,
      { a: 2, b: 6 },
    ],
    [
      'serves a higher priority first, across namespaces, whatever the shares',
      [
        { name: 'a', weight: 1, used: 0, waiters: 3 },
        { name: 'b', weight: 1, used: 3, waiters: 3, priority: 5 },
      ],
      5,
      { a: 0, b: 2 },
    ],
    [
      'shares among equal priorities by weight; a lower priority waits while they fit',
      [
        { name: 'a', weight: 1, used: 0, waiters: 4, priority: 1 },
        { name: 'b', weight: 3, used: 0, waiters: 4, priority: 1 },
        { name: 'c', weight: 1, used: 0, waiters: 4 },
      ],
      6,
      { a: 2, b: 4, c: 0 },
    ],
    [
      'serves first the namespace that holds less of the quota',
      [
        { name: 'a', weight: 1, used: 3, waiters: 4 },
        { name: 'b', weight: 1, used: 0, waiters: 4 },
      ],
      5,
      { a: 0, b: 2 },
    ],
    [
      'gives a namespace whose queue runs dry no more, and the rest to the others',
      [
        { name: 'a', weight: 1, used: 0, waiters: 1 },
        { name: 'b', weight: 1, used: 0, waiters: 6 },
      ],
      5,
      { a: 1, b: 4 },
    ],
    [
      'breaks a tie by the namespace name',
      [
        { name: 'b', weight: 1, used: 0, waiters: 2 },
        { name: 'a', weight: 1, used: 0, waiters: 2 },
      ],
      1,
      { a: 1, b: 0 },
    ],
    [
      'admits nothing where no waiter fits the room left',
      [
        { name: 'a', weight: 1, used: 2, waiters: 2, each: 3 },
        { name: 'b', weight: 1, used: 1, waiters: 1, each: 3 },
      ],
      5,
      { a: 0, b: 0 },
    ],
  ] as const)('%s', (_case, namespaces, hard, expected) => {
    const { admitted, used, decision } = drain(namespaces, hard);
    expect(Object.fromEntries(namespaces.map((n) => [n.name, admitted(n.name)]))).toEqual(expected);
    expect(used).toBeLessThanOrEqual(
      Math.max(
        hard,
        namespaces.reduce((sum, n) => sum + n.used, 0),
      ),
    );
    // Each admission is the waiter's AdmittedFromQueue and its Reserved, appended to its own namespace.
    for (const step of decision.steps) expect(step.events.map((e) => e.type)).toEqual(['AdmittedFromQueue', 'Reserved']);
  });

  it('admits in queue order within a namespace, and interleaves the namespaces one admission at a time', () => {
    const { decision } = drain(
      [
        { name: 'a', weight: 1, used: 0, waiters: 3 },
        { name: 'b', weight: 1, used: 0, waiters: 3 },
      ],
      4,
    );
    const ids = decision.steps.map((step) => (step.events[0]?.data as { reservationId: string }).reservationId);
    expect(ids).toEqual(['a-w0', 'b-w0', 'a-w1', 'b-w1']);
  });

  it('stops after `max` admissions, the rest left for the next drain', () => {
    const { decision } = drain([{ name: 'a', weight: 1, used: 0, waiters: 5 }], 10);
    expect(decideFairDrain(factsOf([stateOf({ name: 'a', weight: 1, used: 0, waiters: 5 }, 10)], ['a']), KEY, 2).admitted.get('a')).toBe(2);
    expect(decision.admitted.get('a')).toBe(5);
  });
});

describe('decideFairDrain laws', () => {
  const namespacesArb = fc.uniqueArray(
    fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      weight: fc.integer({ min: 1, max: 5 }),
      waiters: fc.integer({ min: 0, max: 12 }),
    }),
    {
      selector: (n) => n.name,
      minLength: 1,
      maxLength: 4,
    },
  );

  it('never charges the shared quota over hard, and leaves no room while a waiter that fits still waits', () => {
    fc.assert(
      fc.property(namespacesArb, fc.integer({ min: 0, max: 30 }), (given, hard) => {
        const { admitted, used } = drain(
          given.map((n) => ({ ...n, used: 0 })),
          hard,
        );
        expect(used).toBeLessThanOrEqual(hard);
        const waiting = given.some((n) => admitted(n.name) < n.waiters);
        if (waiting) expect(used).toBe(hard);
      }),
    );
  });

  it('gives no namespace more than its weighted share while another waits: (admitted − 1) / weight ≤ the other’s admitted / weight', () => {
    fc.assert(
      fc.property(namespacesArb, fc.integer({ min: 0, max: 30 }), (given, hard) => {
        const { admitted } = drain(
          given.map((n) => ({ ...n, used: 0 })),
          hard,
        );
        for (const x of given) {
          for (const y of given) {
            // y still waits: when x was last served, its share was at most y's then (and y's only grew).
            if (x === y || admitted(y.name) >= y.waiters || admitted(x.name) === 0) continue;
            expect((admitted(x.name) - 1) * y.weight).toBeLessThanOrEqual(admitted(y.name) * x.weight);
          }
        }
      }),
    );
  });
});

describe('freedSharedKeys', () => {
  const held = stateOf({ name: 'a', weight: 1, used: 2, waiters: 0 }, 4);
  const waiting = stateOf({ name: 'a', weight: 1, used: 2, waiters: 1 }, 4);
  const reserve: LedgerEvent = {
    type: 'Reserved',
    data: { reservationId: 'more', object: WIDGETS, operation: 'CREATE', charged: { cpu: '1' }, scopeFacts: {} },
  };
  const release: LedgerEvent = { type: 'Released', data: { reservationId: 'a-held', reason: 'cancelled' } };
  const cancel: LedgerEvent = { type: 'Cancelled', data: { reservationId: 'a-w0' } };
  it.each([
    ['a release charged to the quota frees room in it', held, [release], [KEY]],
    ['a new reservation frees none', held, [reserve], []],
    ['a waiter leaving the queue may unblock the others: every quota covering the namespace', waiting, [cancel], [KEY]],
    ['a new waiter frees none', waiting, [reserve], []],
  ] as const)('%s', (_case, before, events, expected) => {
    expect(freedSharedKeys(before, fold(events, before), events)).toEqual(expected);
  });
});
