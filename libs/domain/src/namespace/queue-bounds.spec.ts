import { describe, expect, it } from 'vitest';
import type { LedgerEvent, RecordedEvent } from '../events/events.js';
import { evolve, initialState, type NamespaceState } from '../events/fold.js';
import type { QueuePolicy } from '../queue/policy.js';
import * as Resources from '../resources/resource-list.js';
import type { NamespaceCommand } from './commands.js';
import { decide } from './decide.js';
import { emptyFacts, type NamespaceFacts, type RecordedReservation } from './facts.js';
import { BlockingShares, neverFits, quotaLimitsOf } from './queue-bounds.js';

// A waiter that can never fit, and one principal's blocking waiters: what the queue refuses,
// lets go of, and stops holding back for.
const POLICY: QueuePolicy = { passMax: 0, passMs: 0, perNamespaceMax: 50, blockSharePercent: 50 };
const KEY = 'clusterresourcequotas/crq';
const CRQ: LedgerEvent = {
  type: 'SharedQuotaApplied',
  data: { key: KEY, ref: { kind: 'ClusterResourceQuota', name: 'crq' }, spec: { hard: { 'example.com/x': '10' } } },
};

class Stream {
  state: NamespaceState = initialState();
  /** What the shared quota's other namespaces use (its head's). */
  elsewhere = new Map<string, Resources.ResourceList>();

  constructor(private readonly policy: QueuePolicy = POLICY) {}

  facts(): NamespaceFacts {
    const reservations = new Map<string, RecordedReservation>(
      [...this.state.reservations.values()].map((r) => [r.id, { id: r.id, object: r.object, origin: 'rest', status: r.status }]),
    );
    const sharedElsewhere = new Map([...this.state.shared.keys()].map((key) => [key, this.elsewhere.get(key) ?? Resources.EMPTY]));
    return { ...emptyFacts('ns', 1000, this.state), reservations, queuePolicy: this.policy, sharedElsewhere };
  }

  fold(events: readonly LedgerEvent[]): void {
    for (const event of events) this.state = evolve(this.state, { ...event, version: this.state.version + 1, at: 1000 } as RecordedEvent);
  }

  run(command: NamespaceCommand) {
    const decided = decide(command, this.facts());
    this.fold(decided.events);
    return decided;
  }

  hard(x: string) {
    return this.run({
      type: 'PutQuota',
      definition: { name: 'compute', spec: { hard: { 'example.com/x': x } } },
      uid: 'q',
      limit: { max: 4, setting: 'QUOTAS_PER_NAMESPACE_MAX' },
    });
  }

  reserve(id: string, x: string, wait?: { principal?: string; priority?: number }) {
    return this.run({
      type: 'AdmitResources',
      dryRun: false,
      reservationId: id,
      groupResource: { group: 'example.com', resource: 'widgets' },
      name: id,
      resources: { 'example.com/x': x },
      ...(wait ? { wait: { ms: 3_600_000, priority: wait.priority ?? 0, ...(wait.principal ? { principal: wait.principal } : {}) } } : {}),
    });
  }
}

const types = (events: readonly LedgerEvent[]): string[] => events.map((e) => e.type);

describe('a waiter that can never fit', () => {
  it.each([
    [
      'more than the hard limit',
      { 'example.com/x': '10' },
      { 'example.com/x': '11' },
      { quota: 'compute', resource: 'example.com/x', requested: '11', hard: '10' },
    ],
    ['exactly the hard limit', { 'example.com/x': '10' }, { 'example.com/x': '10' }, undefined],
    [
      'a million under a limit of 10',
      { 'example.com/x': '10' },
      { 'example.com/x': '1M' },
      { quota: 'compute', resource: 'example.com/x', requested: '1M', hard: '10' },
    ],
    ['a resource the quota does not limit', { 'example.com/x': '10' }, { 'example.com/y': '11' }, undefined],
    [
      'the one limited resource of two it exceeds',
      { cpu: '4', memory: '1Gi' },
      { cpu: '1', memory: '2Gi' },
      { quota: 'compute', resource: 'memory', requested: '2Gi', hard: '1Gi' },
    ],
    ['a milli-unit past the limit', { cpu: '2' }, { cpu: '2001m' }, { quota: 'compute', resource: 'cpu', requested: '2001m', hard: '2' }],
  ])('finds %s', (_name, hard, request, unfit) => {
    const s = new Stream();
    s.run({
      type: 'PutQuota',
      definition: { name: 'compute', spec: { hard } },
      uid: 'q',
      limit: { max: 4, setting: 'QUOTAS_PER_NAMESPACE_MAX' },
    });
    expect(neverFits(quotaLimitsOf(s.state), Resources.resourceList(request))).toEqual(unfit);
  });

  it.each([
    ['a ResourceQuota', false, '11'],
    ['a ResourceQuota, a million', false, '1000000'],
    ['a ClusterResourceQuota', true, '11'],
  ])('refuses a wait past the hard limit of %s at once, 403 with the exceeded-quota message, as if it had no wait', (_name, shared, x) => {
    const s = new Stream();
    if (shared) s.fold([CRQ]);
    else s.hard('10');
    const waited = s.reserve('big', x, { principal: 'p' });
    const plain = s.reserve('plain', x);
    expect(waited.events).toEqual([]);
    expect(waited.answer).toMatchObject({ kind: 'Decided', result: { allowed: false, code: 403, denial: { kind: 'Exceeded' } } });
    const message = (waited.answer as { result: { message: string } }).result.message;
    expect(message).toMatch(
      shared ? /exceeded cluster quota: crq, requested: example.com\/x=/ : /exceeded quota: compute, requested: example.com\/x=/,
    );
    expect(message.replace('"big"', '"plain"')).toBe((plain.answer as { result: { message: string } }).result.message);
    expect(s.state.queue.size).toBe(0);
  });

  it('queues a wait that fits the hard limit but not the room left, as before', () => {
    const s = new Stream();
    s.hard('10');
    s.reserve('held', '5');
    expect(s.reserve('w', '10', { principal: 'p' }).answer).toMatchObject({ result: { code: 202 } });
  });

  it('lets a queued waiter go when its hard limit is lowered below its request, saying why, and admits the one behind it', () => {
    const s = new Stream({ ...POLICY, blockSharePercent: 100 });
    s.hard('10');
    s.reserve('held', '4');
    s.reserve('big', '8', { principal: 'p', priority: 1000 });
    // big blocks (passMs 0): small fits the room left, and queues behind it.
    expect(s.reserve('small', '2', { principal: 'q' }).answer).toMatchObject({ result: { code: 202 } });
    const lowered = s.hard('6');
    expect(types(lowered.events)).toEqual(['QuotaChanged', 'Expired', 'AdmittedFromQueue', 'Reserved']);
    expect(lowered.events[1]).toEqual({
      type: 'Expired',
      data: {
        reservationId: 'big',
        reason: 'can never be admitted: it asks for example.com/x=8, more than the hard limit of quota compute (example.com/x=6)',
      },
    });
    expect(s.state.queue.size).toBe(0);
  });

  it('holds nothing back until the drain lets it go (a limit lowered before this rule)', () => {
    const s = new Stream({ ...POLICY, blockSharePercent: 100 });
    s.hard('10');
    s.reserve('held', '9');
    s.reserve('big', '10', { principal: 'p' });
    expect(s.reserve('blocked', '0.5').answer).toMatchObject({
      result: { code: 403, message: expect.stringContaining('queued reservation big') },
    });
    // The lowered limit folded without the drain that would follow it now.
    s.fold([{ type: 'QuotaChanged', data: { name: 'compute', spec: { hard: { 'example.com/x': '9.5' } } } } as LedgerEvent]);
    expect(s.state.queue.has('big')).toBe(true);
    const free = s.reserve('free', '0.5');
    expect(free.answer).toMatchObject({ result: { allowed: true } });
    expect(types(free.events)).toEqual(['Reserved', 'Expired']);
  });
});

describe("one principal's blocking waiters hold back at most QUEUE_BLOCK_SHARE_PERCENT of a quota", () => {
  // hard 10, 9 held: every waiter below is short of room and blocking by the pass bound (passMs 0).
  it.each([
    ['a waiter asking for half the limit blocks', [['a', 'p', '5']], 50, 'a'],
    ['a waiter asking for more than half does not', [['a', 'p', '6']], 50, undefined],
    ['with no bound (100 %) it does', [['a', 'p', '6']], 100, 'a'],
    [
      'one past the share leaves it to the next of the same principal',
      [
        ['a', 'p', '6'],
        ['b', 'p', '3'],
      ],
      50,
      'b',
    ],
    [
      "the principal's second waiter within the share blocks",
      [
        ['a', 'p', '2'],
        ['b', 'p', '3'],
      ],
      50,
      'a',
    ],
    [
      "another principal's waiter blocks on its own share",
      [
        ['a', 'p', '6'],
        ['b', 'q', '4'],
      ],
      50,
      'b',
    ],
    ['a share of 30 % lets a third of the limit block', [['a', 'p', '3']], 30, 'a'],
  ] as const)('%s', (_name, waiters, percent, blocker) => {
    const s = new Stream({ ...POLICY, blockSharePercent: percent });
    s.hard('10');
    s.reserve('held', '9');
    for (const [id, principal, x] of waiters) expect(s.reserve(id, x, { principal }).answer).toMatchObject({ result: { code: 202 } });
    const fresh = s.reserve('fresh', '1');
    if (blocker)
      expect(fresh.answer).toMatchObject({
        result: { allowed: false, code: 403, message: expect.stringContaining(`queued reservation ${blocker} `) },
      });
    else expect(fresh.answer).toMatchObject({ result: { allowed: true } });
  });

  it.each([
    [50, ['small']],
    [100, []],
  ])("with a share of %d percent, a release's drain admits %j past a waiter asking for 70 percent of the limit", (percent, admitted) => {
    const s = new Stream({ ...POLICY, blockSharePercent: percent });
    s.hard('10');
    s.reserve('held-1', '5');
    s.reserve('held-2', '4');
    s.reserve('huge', '7', { principal: 'p' });
    expect(s.reserve('small', '2', { principal: 'q' }).answer).toMatchObject({ result: { code: 202 } });
    const freed = s.run({ type: 'ReleaseReservation', reservationId: 'held-2', reason: 'cancelled' });
    expect(freed.events.flatMap((e) => (e.type === 'AdmittedFromQueue' ? [e.data.reservationId] : []))).toEqual(admitted);
  });

  it.each([
    ['waiters queued before principals were kept count as principals of their own', [undefined, undefined, undefined], [true, true, true]],
    ["one principal's waiters count together", ['p', 'p', 'p'], [true, false, false]],
    ['two principals count apart', ['p', 'q', 'p'], [true, true, false]],
  ] as const)('%s', (_name, principals, blocks) => {
    const s = new Stream();
    s.hard('10');
    const shares = new BlockingShares(quotaLimitsOf(s.state), 50);
    const waiter = (id: string, principal: string | undefined) => ({
      id,
      object: { group: '', resource: 'widgets' },
      resources: Resources.resourceList({ 'example.com/x': '3' }),
      priority: 0,
      version: 1,
      queuedAt: 0,
      deadline: 1,
      passed: 0,
      waitingFor: [],
      ...(principal ? { principal } : {}),
    });
    expect(principals.map((principal, i) => shares.take(waiter(`w${i}`, principal)))).toEqual(blocks);
  });
});
