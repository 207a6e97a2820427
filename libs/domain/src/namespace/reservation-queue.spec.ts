import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LedgerEvent, RecordedEvent } from '../events/events.js';
import { evolve, initialState, queueOrder, type NamespaceState } from '../events/fold.js';
import { isBlocking, type QueuePolicy } from '../queue/policy.js';
import * as Resources from '../resources/resource-list.js';
import type { NamespaceCommand } from './commands.js';
import { decide } from './decide.js';
import { emptyFacts, type NamespaceFacts, type RecordedReservation } from './facts.js';
import { drainQueue, shortfalls } from './reservation-queue.js';

const POLICY: QueuePolicy = { passMax: 2, passMs: 30, perNamespaceMax: 50, blockSharePercent: 100 };

/** A namespace driven through `decide` as the ledger drives it: each command's events folded in. */
class Stream {
  state: NamespaceState = initialState();
  now = 0;
  last: readonly LedgerEvent[] = [];

  facts(): NamespaceFacts {
    const reservations = new Map<string, RecordedReservation>(
      [...this.state.reservations.values()].map((r) => [r.id, { id: r.id, object: r.object, origin: 'rest', status: r.status }]),
    );
    return { ...emptyFacts('ns', this.now, this.state), reservations, queuePolicy: POLICY };
  }

  run(command: NamespaceCommand): { readonly before: NamespaceState; readonly events: readonly LedgerEvent[]; readonly answer: unknown } {
    const before = this.state;
    const { events, answer } = decide(command, this.facts());
    for (const event of events)
      this.state = evolve(this.state, { ...event, version: this.state.version + 1, at: this.now } as RecordedEvent);
    this.last = events;
    return { before, events, answer };
  }

  hard(cpu: number): void {
    this.run({
      type: 'PutQuota',
      definition: { name: 'compute', spec: { hard: { cpu: String(cpu) } } },
      uid: 'q',
      limit: { max: 4, setting: 'QUOTAS_PER_NAMESPACE_MAX' },
    });
  }

  reserve(id: string, cpu: number, wait?: { ms: number; priority: number }) {
    return this.run({
      type: 'AdmitResources',
      dryRun: false,
      reservationId: id,
      groupResource: { group: '', resource: 'widgets' },
      resources: { cpu: String(cpu) },
      ...(wait ? { wait } : {}),
    });
  }

  release(id: string) {
    return this.run({ type: 'ReleaseReservation', reservationId: id, reason: 'cancelled' });
  }

  /** A pod's webhook review asking for `cpu`: charged to the same quota as the REST waiters. */
  pod(id: string, cpu: number) {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: id, namespace: 'ns', uid: `uid-${id}` },
      spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: String(cpu) } } }] },
    };
    return this.run({
      type: 'AdmitObject',
      source: 'webhook',
      dryRun: false,
      reservationId: id,
      request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace: 'ns', name: id, object },
    });
  }

  used(): bigint {
    return Resources.get(this.state.used.get('compute') ?? Resources.EMPTY, 'cpu')?.nanos ?? 0n;
  }
}

let passesSeen = 0;

describe('the reservation queue: wait for room instead of a 403', () => {
  it('queues a reserve with a wait that does not fit, with what it waits for, and admits it when a release frees room', () => {
    const s = new Stream();
    s.hard(2);
    s.reserve('a', 2);
    const queued = s.reserve('b', 1, { ms: 1000, priority: 0 });
    expect(queued.events.map((e) => e.type)).toEqual(['Queued']);
    expect(queued.answer).toMatchObject({
      kind: 'Decided',
      result: {
        code: 202,
        reservationId: 'b',
        queued: { position: 1, waitingFor: [{ quota: 'compute', resources: [{ resource: 'cpu', requested: '1', used: '2', hard: '2' }] }] },
      },
    });
    const freed = s.release('a');
    expect(freed.events.map((e) => e.type)).toEqual(['Released', 'AdmittedFromQueue', 'Reserved']);
    expect(freed.events[1]).toMatchObject({ data: { reservationId: 'b', freedBy: { version: 4, type: 'Released' } } });
    expect(s.state.queue.size).toBe(0);
    expect(s.state.reservations.has('b')).toBe(true);
  });

  it('admits by priority, then arrival, and a raised hard admits in the same command', () => {
    const s = new Stream();
    s.hard(1);
    s.reserve('a', 1);
    s.reserve('low', 1, { ms: 1000, priority: 0 });
    s.reserve('high', 1, { ms: 1000, priority: 5 });
    s.reserve('low2', 1, { ms: 1000, priority: 0 });
    expect(queueOrder(s.state.queue).map((w) => w.id)).toEqual(['high', 'low', 'low2']);
    s.hard(3);
    expect(s.last.filter((e) => e.type === 'AdmittedFromQueue').map((e) => (e.data as { reservationId: string }).reservationId)).toEqual([
      'high',
      'low',
    ]);
  });

  it('lets small ones pass a big waiter until it is blocking (passMax), then holds the room for it', () => {
    const s = new Stream();
    s.hard(4);
    for (const id of ['f1', 'f2', 'f3', 'f4']) s.reserve(id, 1);
    s.reserve('big', 3, { ms: 1000, priority: 0 });
    for (const id of ['s1', 's2', 's3']) s.reserve(id, 1, { ms: 1000, priority: 0 });
    const admittedBy = (id: string): string[] =>
      s.release(id).events.flatMap((e) => (e.type === 'AdmittedFromQueue' ? [e.data.reservationId] : []));
    expect(admittedBy('f1')).toEqual(['s1']);
    expect(admittedBy('f2')).toEqual(['s2']);
    expect(s.state.queue.get('big')?.passed).toBe(POLICY.passMax);
    // big is blocking now: s3 fits but waits behind it.
    expect(admittedBy('f3')).toEqual([]);
    expect(admittedBy('f4')).toEqual([]);
    expect(admittedBy('s1')).toEqual(['big']);
  });

  it('blocks a waiter past passMs too, and a new reserve with a wait queues behind a blocking one', () => {
    const s = new Stream();
    s.hard(2);
    s.reserve('f1', 1);
    s.reserve('big', 2, { ms: 1000, priority: 0 });
    s.now = POLICY.passMs;
    expect(s.reserve('late', 1, { ms: 1000, priority: 0 }).answer).toMatchObject({
      result: { code: 202, queued: { position: 2, waitingFor: [{ quota: 'queued reservation big' }] } },
    });
    expect(s.release('f1').events.flatMap((e) => (e.type === 'AdmittedFromQueue' ? [e.data.reservationId] : []))).toEqual(['big']);
  });

  it('holds back a request without a wait behind a blocking waiter short of the same resource, not one asking for others', () => {
    const s = new Stream();
    s.run({
      type: 'PutQuota',
      definition: { name: 'compute', spec: { hard: { cpu: '2', memory: '2Gi' } } },
      uid: 'q',
      limit: { max: 4, setting: 'QUOTAS_PER_NAMESPACE_MAX' },
    });
    s.reserve('f1', 1);
    s.reserve('big', 2, { ms: 1000, priority: 0 });
    expect(s.reserve('small', 1).answer).toMatchObject({ result: { allowed: true } });
    s.release('small');
    s.now = POLICY.passMs;
    expect(s.reserve('late', 1).answer).toMatchObject({
      result: { allowed: false, code: 403, message: expect.stringContaining('queued reservation big') },
    });
    const memory = s.run({
      type: 'AdmitResources',
      dryRun: false,
      reservationId: 'mem',
      groupResource: { group: '', resource: 'widgets' },
      resources: { memory: '1Gi' },
    });
    expect(memory.answer).toMatchObject({ result: { allowed: true } });
  });

  it("holds back a pod's review behind a blocking waiter short of what the pod asks for, so a stream of pods cannot starve it", () => {
    const s = new Stream();
    s.hard(2);
    s.reserve('holder', 1);
    s.reserve('big', 2, { ms: 1000, priority: 0 });
    // Before it is blocking, a pod that fits passes it, as a REST list does.
    expect(s.pod('early', 1).answer).toMatchObject({ result: { allowed: true } });
    s.release('early');
    s.now = POLICY.passMs;
    expect(s.pod('web', 1)).toMatchObject({
      events: [],
      answer: {
        result: {
          allowed: false,
          code: 403,
          stage: 'ResourceQuota',
          message: `pods "web" is forbidden: queued reservation big (priority 0, waiting since ${new Date(0).toISOString()}) is first in line for these resources; retry once it is admitted, cancelled or expired`,
        },
      },
    });
    // The holder's release admits the waiter, in the same command: the room went to it, not to the pods.
    expect(s.release('holder').events.map((e) => e.type)).toEqual(['Released', 'AdmittedFromQueue', 'Reserved']);
  });

  it('expires a waiter past its deadline with the reason, and cancels one', () => {
    const s = new Stream();
    s.hard(1);
    s.reserve('a', 1);
    s.reserve('b', 1, { ms: 10, priority: 0 });
    s.reserve('c', 1, { ms: 100, priority: 0 });
    expect(s.run({ type: 'CancelQueued', reservationId: 'c' }).events.map((e) => e.type)).toEqual(['Cancelled']);
    s.now = 20;
    const swept = s.run({ type: 'SweepQueue' });
    expect(swept.events).toEqual([
      { type: 'Expired', data: { reservationId: 'b', reason: expect.stringContaining('without room in compute') } },
    ]);
    expect(s.state.queue.size).toBe(0);
  });

  it('answers 429 when the namespace queue is full', () => {
    const s = new Stream();
    s.hard(1);
    s.reserve('a', 1);
    for (let i = 0; i < POLICY.perNamespaceMax; i++) s.reserve(`w${i}`, 1, { ms: 1000, priority: 0 });
    expect(s.reserve('over', 1, { ms: 1000, priority: 0 }).answer).toMatchObject({ result: { code: 429 } });
  });

  it('property: a random history never admits over hard, never out of order, and leaves no waiter that fits (no lost wake-up)', () => {
    type Op =
      | { op: 'reserve'; cpu: number; wait: number; priority: number }
      | { op: 'pod'; cpu: number }
      | { op: 'release'; pick: number }
      | { op: 'hard'; cpu: number }
      | { op: 'cancel'; pick: number }
      | { op: 'tick'; ms: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          op: fc.constant('reserve' as const),
          cpu: fc.constantFrom(1, 1, 3, 4),
          wait: fc.integer({ min: 0, max: 200 }),
          priority: fc.integer({ min: 0, max: 1 }),
        }),
      },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('pod' as const), cpu: fc.constantFrom(1, 2) }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('hard' as const), cpu: fc.integer({ min: 0, max: 8 }) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 10 }) }) },
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 20, maxLength: 80 }), (ops) => {
        const s = new Stream();
        s.hard(4);
        let n = 0;
        for (const o of ops) {
          const step = apply(s, o, () => `r${n++}`);
          checkStep(s, step, o.op === 'reserve' && o.wait ? o.priority : 0);
        }
      }),
      { numRuns: 300 },
    );
    // The histories do exercise the BestEffortFIFO rule: waiters were passed.
    expect(passesSeen).toBeGreaterThan(50);
  });
});

function apply(s: Stream, o: { op: string; cpu?: number; wait?: number; priority?: number; pick?: number; ms?: number }, id: () => string) {
  const pick = <T>(items: readonly T[]): T | undefined => items[(o.pick ?? 0) % Math.max(1, items.length)];
  switch (o.op) {
    case 'reserve':
      return s.reserve(id(), o.cpu ?? 1, o.wait ? { ms: o.wait, priority: o.priority ?? 0 } : undefined);
    case 'pod':
      return s.pod(id(), o.cpu ?? 1);
    case 'release': {
      const live = pick([...s.state.reservations.keys()]);
      return live ? s.release(live) : s.run({ type: 'SweepQueue' });
    }
    case 'hard': {
      const before = s.state;
      s.hard(o.cpu ?? 0);
      return { before, events: s.last, answer: undefined };
    }
    case 'cancel':
      return s.run({ type: 'CancelQueued', reservationId: pick([...s.state.queue.keys()]) ?? 'none' });
    default:
      s.now += o.ms ?? 1;
      return s.run({ type: 'SweepQueue' });
  }
}

/** The laws of one step: no admission over hard; none out of the stated order; none left that fits. */
function checkStep(s: Stream, step: { readonly before: NamespaceState; readonly events: readonly LedgerEvent[] }, priority: number): void {
  const hard = Resources.get(s.state.quotas.get('compute')?.hard ?? Resources.EMPTY, 'cpu')?.nanos ?? 0n;
  const admitted = step.events.filter((e) => e.type === 'AdmittedFromQueue' || e.type === 'Reserved');
  if (admitted.length > 0) expect(s.used()).toBeLessThanOrEqual(hard);
  const fromQueue = step.events.flatMap((e) => (e.type === 'AdmittedFromQueue' ? [e.data.reservationId] : []));
  const order = queueOrder(step.before.queue);
  for (const id of fromQueue) {
    const at = order.findIndex((w) => w.id === id);
    // Every waiter passed (ordered before it, still queued) did not fit and was not blocking.
    for (const ahead of order.slice(0, Math.max(0, at))) {
      if (!s.state.queue.has(ahead.id)) continue;
      passesSeen++;
      expect(isBlocking(ahead, s.now, POLICY)).toBe(false);
      expect(shortfalls(s.state, ahead.resources).length).toBeGreaterThan(0);
    }
  }
  // No arrival passes a blocking waiter of its priority or above that can fit (all ask for cpu): a REST list nor a pod.
  const direct = step.events.filter((e) => e.type === 'Reserved' && !fromQueue.includes(e.data.reservationId));
  const hardBefore = Resources.get(step.before.quotas.get('compute')?.hard ?? Resources.EMPTY, 'cpu');
  for (const waiter of direct.length > 0 ? order.filter((w) => w.priority >= priority) : []) {
    const fits = hardBefore !== undefined && (Resources.get(waiter.resources, 'cpu')?.cmp(hardBefore) ?? 1) <= 0;
    expect(
      isBlocking(waiter, s.now, POLICY) && fits,
      `${direct.map((e) => e.type === 'Reserved' && e.data.reservationId)} passed ${waiter.id}`,
    ).toBe(false);
  }
  // No lost wake-up: the drain on the state left admits nothing more.
  expect(drainQueue(s.facts()).filter((e) => e.type === 'AdmittedFromQueue')).toEqual([]);
  expect(s.used()).toBeGreaterThanOrEqual(0n);
}
