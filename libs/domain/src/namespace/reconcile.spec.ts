import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { evolve, fold, type NamespaceState } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import { decideReconcile, type ExistingObject, type ReconcileInput } from './reconcile.js';

const T0 = Date.UTC(2026, 0, 1);
const GRACE = 60_000;
const facts = {
  NotTerminating: true,
  Terminating: false,
  BestEffort: false,
  NotBestEffort: true,
  PriorityClass: [],
  CrossNamespacePodAffinity: false,
};
const pods = { group: '', resource: 'pods' };

function history(events: LedgerEvent[], at = (i: number) => T0 + i): NamespaceState {
  return fold(events.map((event, i) => ({ ...event, version: i + 1, at: at(i) })));
}

function pod(uid: string, cpu = '1', extra: { status?: Pod['status']; metadata?: Partial<Pod['metadata']> } = {}): ExistingObject {
  const object: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${uid}`, namespace: 'ns', uid, ...extra.metadata },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu }, limits: { cpu } } }] },
    ...(extra.status ? { status: extra.status } : {}),
  };
  return { groupResource: pods, uid, name: `pod-${uid}`, object };
}

/** A pod's whole usage as admission records it for an UPDATE (objectUsage): every key its evaluator charges. */
const wholeUsage = (cpu: string) => ({ 'count/pods': '1', pods: '1', cpu, 'requests.cpu': cpu, 'limits.cpu': cpu });

const quota: LedgerEvent = { type: 'QuotaDefined', data: { name: 'q', spec: { hard: { 'requests.cpu': '2', pods: '2' } } } };
const reserve = (
  id: string,
  uid: string | undefined,
  extra: Partial<Extract<LedgerEvent, { type: 'Reserved' }>['data']> = {},
): LedgerEvent => ({
  type: 'Reserved',
  data: {
    reservationId: id,
    object: { ...pods, ...(uid ? { uid } : {}) },
    operation: 'CREATE',
    charged: wholeUsage('1'),
    scopeFacts: facts,
    ...extra,
  },
});

/** Ids enough for every listing here, as the ledger draws one per listed object. */
const IDS = Array.from({ length: 16 }, (_, i) => `adopted-${i + 1}`);
const input = (over: Partial<ReconcileInput>): ReconcileInput => ({
  covers: [pods],
  objects: [],
  listedAt: T0 + GRACE + 10,
  now: T0 + GRACE + 20,
  graceMs: GRACE,
  ids: IDS,
  ...over,
});

describe('decideReconcile', () => {
  it.each([
    // [case, reservation age at listing, object listed?, expected action]
    ['commits a reservation whose object exists, however young', 0, true, 'commit'],
    ['leaves a reservation younger than the grace period alone while its object is missing', GRACE - 1, false, undefined],
    ['releases as stale a reservation whose object did not appear within the grace period', GRACE, false, 'release:stale'],
  ])('%s', (_case, age, listed, expected) => {
    const listedAt = T0 + 1 + (age as number);
    const state = history([quota, reserve('r1', 'u1')]);
    const decision = decideReconcile(state, input({ listedAt, now: listedAt, objects: listed ? [pod('u1')] : [] }));
    const action = decision.actions[0];
    expect(action ? (action.kind === 'release' ? `release:${action.reason}` : action.kind) : undefined).toBe(expected);
    expect(decision.pending).toBe(expected === undefined ? 1 : 0);
  });

  it('releases a committed reservation whose object is gone as deleted, but not one committed after the listing began', () => {
    const state = history([quota, reserve('r1', 'u1'), { type: 'Committed', data: { reservationId: 'r1' } }], (i) => T0 + i * 1000);
    expect(decideReconcile(state, input({ listedAt: T0 + 2001 })).actions).toEqual([
      { kind: 'release', reservationId: 'r1', reason: 'deleted', uid: 'u1' },
    ]);
    expect(decideReconcile(state, input({ listedAt: T0 + 2000 })).actions).toEqual([]);
  });

  it('releases at once, as deleted, a reservation whose uid the source saw deleted, however young or newly committed; not one of another uid', () => {
    const young = T0 + 2;
    const state = history([
      quota,
      reserve('r1', 'u1'),
      reserve('r2', 'u2'),
      reserve('r3', 'u3'),
      { type: 'Committed', data: { reservationId: 'r3' } },
    ]);
    const decision = decideReconcile(state, input({ listedAt: young, now: young, deleted: new Set(['u1', 'u3', 'gone']) }));
    expect(decision.actions).toEqual([
      { kind: 'release', reservationId: 'r1', reason: 'deleted', uid: 'u1' },
      { kind: 'release', reservationId: 'r3', reason: 'deleted', uid: 'u3' },
    ]);
    expect(decision.pending).toBe(1);
  });

  it("charges an object re-created under a deleted one's name: its new uid is listed, the old uid alone is released", () => {
    const state = history([quota, reserve('r1', 'u1')]);
    const again = { ...pod('u2'), name: 'pod-u1' };
    const decision = decideReconcile(state, input({ listedAt: T0 + 2, now: T0 + 2, objects: [again], deleted: new Set(['u1']) }));
    expect(decision.actions).toEqual([
      { kind: 'release', reservationId: 'r1', reason: 'deleted', uid: 'u1' },
      { kind: 'adopt', reservationId: 'adopted-1', uid: 'u2', name: 'pod-u1', resource: 'pods.' },
    ]);
  });

  it('adopts an object that exists without a reservation, and reports a quota pushed over hard', () => {
    const state = history([quota, reserve('r1', 'u1'), reserve('r2', 'u2')]);
    const decision = decideReconcile(state, input({ objects: [pod('u1'), pod('u2'), pod('u3', '500m')] }));
    expect(decision.actions.map((a) => a.kind)).toEqual(['commit', 'commit', 'adopt']);
    const adopted = decision.events.at(-1);
    expect(adopted).toMatchObject({
      type: 'Adopted',
      data: { object: { uid: 'u3', name: 'pod-u3', kind: 'Pod' }, usage: { 'requests.cpu': '500m', pods: '1' } },
    });
    expect(decision.overHard).toEqual([
      { quota: 'q', resource: 'requests.cpu', used: '2500m', hard: '2' },
      { quota: 'q', resource: 'pods', used: '3', hard: '2' },
    ]);
  });

  it('does not adopt, on a listing older than the release, an object whose reservation another reconcile released as deleted', () => {
    // Listing L1 saw web-1; web-1 was deleted; L2 released it; web-2 took the room; L1 comes last.
    const state = history([
      quota,
      reserve('r1', 'web-1'),
      { type: 'Committed', data: { reservationId: 'r1' } },
      { type: 'Released', data: { reservationId: 'r1', reason: 'deleted' } },
    ]);
    const stale = input({ objects: [pod('web-1')], releasedSinceListing: new Set(['web-1']) });
    expect(decideReconcile(state, stale).events).toEqual([]);
    // A listing that began after the release, and still shows the object, adopts it.
    expect(decideReconcile(state, input({ objects: [pod('web-1')] })).actions.map((a) => a.kind)).toEqual(['adopt']);
  });

  it('leaves reservations without a uid to their clients and TTLs', () => {
    const state = history([quota, reserve('r2', undefined)]);
    expect(decideReconcile(state, input({ listedAt: T0 + 10 * GRACE }))).toMatchObject({ events: [], uncovered: [] });
  });

  describe('reservations of kinds the listing does not cover (never left to grow Used forever)', () => {
    const widget = (id: string, uid: string) =>
      reserve(id, uid, { object: { group: 'example.com', resource: 'widgets', uid }, charged: { 'count/widgets.example.com': '1' } });
    const state = history([quota, widget('w1', 'u1'), widget('w2', 'u2'), { type: 'Committed', data: { reservationId: 'w2' } }]);

    it('releases a reserved one as uncovered after the grace period, like an object that never appeared; reports the committed one', () => {
      const decision = decideReconcile(state, input({ listedAt: T0 + 1 + GRACE }));
      expect(decision.actions).toEqual([{ kind: 'release', reservationId: 'w1', reason: 'uncovered', uid: 'u1' }]);
      expect(decision.uncovered).toEqual([{ resource: 'widgets.example.com', count: 1 }]);
    });

    it('keeps and reports one younger than the grace period', () => {
      const decision = decideReconcile(state, input({ listedAt: T0 + GRACE }));
      expect(decision.events).toEqual([]);
      expect(decision.uncovered).toEqual([{ resource: 'widgets.example.com', count: 2 }]);
    });

    it('only reports them when there is no inventory at all (INVENTORY_SOURCE=none lists nothing, so judges nothing)', () => {
      const decision = decideReconcile(state, input({ covers: [], listedAt: T0 + 10 * GRACE }));
      expect(decision.events).toEqual([]);
      expect(decision.uncovered).toEqual([{ resource: 'widgets.example.com', count: 2 }]);
    });
  });

  it('releases an expired REST reservation whatever the listing says', () => {
    const state = history([quota, reserve('r1', undefined, { expiresAt: new Date(T0 + 100).toISOString() })]);
    expect(decideReconcile(state, input({ now: T0 + 100 })).actions).toEqual([{ kind: 'release', reservationId: 'r1', reason: 'expired' }]);
    expect(decideReconcile(state, input({ now: T0 + 99 })).actions).toEqual([]);
  });

  it('commits an update only when the object shows the new usage, retiring the state it replaces', () => {
    const update = reserve('r2', 'u1', {
      operation: 'UPDATE',
      charged: { 'requests.cpu': '0', pods: '0' },
      objectUsage: wholeUsage('1500m'),
      supersedes: 'r1',
      previousScopeFacts: facts,
    });
    const state = history([quota, reserve('r1', 'u1'), { type: 'Committed', data: { reservationId: 'r1' } }, update]);
    const unchanged = decideReconcile(state, input({ listedAt: T0 + 5, objects: [pod('u1', '1')] }));
    expect(unchanged.events).toEqual([]);
    expect(unchanged.pending).toBe(1);
    const changed = decideReconcile(state, input({ listedAt: T0 + 5, objects: [pod('u1', '1500m')] }));
    expect(changed.actions).toEqual([
      { kind: 'commit', reservationId: 'r2', uid: 'u1' },
      { kind: 'release', reservationId: 'r1', reason: 'superseded', uid: 'u1' },
    ]);
    const after = changed.events.reduce((s, e) => evolve(s, { ...e, version: s.version + 1, at: T0 + 99 }), state);
    expect(Resources.canonicalResourceList(after.used.get('q') ?? {})).toEqual({ 'requests.cpu': '1500m', pods: '1' });
  });

  it('never commits a change the listed object shows only in part (a resize claiming the pod Succeeded erased its compute)', () => {
    // What a resize review claiming `status.phase: Succeeded` reserved before the fix: the terminal usage, a count only.
    const claim = reserve('r2', 'u1', {
      operation: 'UPDATE',
      charged: { 'count/pods': '0' },
      objectUsage: { 'count/pods': '1' },
      supersedes: 'r1',
      previousScopeFacts: facts,
    });
    const state = history([quota, reserve('r1', 'u1'), { type: 'Committed', data: { reservationId: 'r1' } }, claim]);
    const running = decideReconcile(state, input({ listedAt: T0 + 5, objects: [pod('u1', '1')] }));
    expect(running.actions).toEqual([]);
    expect(running.pending).toBe(1);
    // Whereas a pod the listing shows Succeeded is cut down to its count by a Terminated event, from the listing.
    const done = decideReconcile(
      history([quota, reserve('r1', 'u1'), { type: 'Committed', data: { reservationId: 'r1' } }]),
      input({ objects: [pod('u1', '1', { status: { phase: 'Succeeded' } })] }),
    );
    expect(done.actions).toEqual([{ kind: 'terminate', reservationId: 'r1', reason: 'Succeeded', uid: 'u1' }]);
  });

  it('releases a stale older change once when a later change of the same object commits in the same pass', () => {
    const change = (id: string, cpu: string, supersedes: string) =>
      reserve(id, 'u1', {
        operation: 'UPDATE',
        charged: { 'requests.cpu': '0', pods: '0' },
        objectUsage: wholeUsage(cpu),
        supersedes,
        previousScopeFacts: facts,
      });
    // r2 is old enough to be stale; the object shows r3's usage.
    const state = history(
      [
        quota,
        reserve('r1', 'u1'),
        { type: 'Committed', data: { reservationId: 'r1' } },
        change('r2', '1200m', 'r1'),
        change('r3', '1500m', 'r2'),
      ],
      (i) => (i < 4 ? T0 + i : T0 + GRACE + 5),
    );
    const decision = decideReconcile(state, input({ objects: [pod('u1', '1500m')] }));
    expect(decision.actions).toEqual([
      { kind: 'release', reservationId: 'r2', reason: 'stale', uid: 'u1' },
      { kind: 'commit', reservationId: 'r3', uid: 'u1' },
      { kind: 'release', reservationId: 'r1', reason: 'superseded', uid: 'u1' },
    ]);
    // Folding the answer does not trip over a second release of r2 (it used to).
    const after = decision.events.reduce((s, e) => evolve(s, { ...e, version: s.version + 1, at: T0 + GRACE + 20 }), state);
    expect([...after.reservations.keys()]).toEqual(['r3']);
  });

  it('confirms, of a resize down and then up, only what the listing shows: never the resize down under the resize up it does not show yet', () => {
    const change = (id: string, cpu: string, supersedes: string, oldResourceVersion: string) =>
      reserve(id, 'u1', {
        operation: 'UPDATE',
        charged: {},
        objectUsage: wholeUsage(cpu),
        supersedes,
        previousScopeFacts: facts,
        oldResourceVersion,
      });
    const state = history([
      quota,
      reserve('c', 'u1'),
      { type: 'Committed', data: { reservationId: 'c' } },
      change('down', '300m', 'c', '10'),
      change('up', '1', 'down', '11'),
    ]);
    const at = (cpu: string, resourceVersion: string) =>
      input({ listedAt: T0 + 10, objects: [pod('u1', cpu, { metadata: { resourceVersion } })] });
    // Listed between the two (the report: this listing committed the resize down, 300m for good).
    expect(decideReconcile(state, at('300m', '11'))).toMatchObject({ events: [], pending: 2 });
    const after = decideReconcile(state, at('1', '12'));
    expect(after.actions).toEqual([
      { kind: 'commit', reservationId: 'up', uid: 'u1' },
      { kind: 'release', reservationId: 'c', reason: 'superseded', uid: 'u1' },
      { kind: 'release', reservationId: 'down', reason: 'superseded', uid: 'u1' },
    ]);
    const settled = after.events.reduce((s, e) => evolve(s, { ...e, version: s.version + 1, at: T0 + 99 }), state);
    expect(Resources.canonicalResourceList(settled.used.get('q') ?? {})).toEqual({ 'requests.cpu': '1', pods: '1' });
  });

  it('measures again, once, an object listed at other usage than its committed record with nothing of it waiting', () => {
    const state = history([quota, reserve('r1', 'u1'), { type: 'Committed', data: { reservationId: 'r1' } }]);
    const listing = input({ objects: [pod('u1', '500m')] });
    const decision = decideReconcile(state, listing);
    expect(decision.events).toEqual([
      {
        type: 'Adopted',
        data: {
          reservationId: 'adopted-1',
          object: { ...pods, kind: 'Pod', name: 'pod-u1', uid: 'u1' },
          usage: wholeUsage('500m'),
          scopeFacts: facts,
          replaces: 'r1',
        },
      },
      { type: 'Released', data: { reservationId: 'r1', reason: 'superseded' } },
    ]);
    expect(decision.actions).toEqual([{ kind: 'remeasure', reservationId: 'adopted-1', replaces: 'r1', uid: 'u1' }]);
    const after = decision.events.reduce((s, e) => evolve(s, { ...e, version: s.version + 1, at: listing.now }), state);
    expect(Resources.canonicalResourceList(after.used.get('q') ?? {})).toEqual({ 'requests.cpu': '500m', pods: '1' });
    expect(decideReconcile(after, { ...listing, listedAt: listing.now + 1 }).events).toEqual([]);
  });

  it('leaves out an object it cannot read, reporting it, and reconciles the rest (one bad object failed the whole namespace)', () => {
    const unparsable = (uid: string): ExistingObject => {
      const listed = pod(uid);
      return {
        ...listed,
        object: { ...listed.object, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: 'lots' } } }] } } as Pod,
      };
    };
    // u2's reservation is committed and u3 has none: neither is released, nor adopted, on this listing.
    const state = history([quota, reserve('r1', 'u1'), reserve('r2', 'u2'), { type: 'Committed', data: { reservationId: 'r2' } }]);
    const decision = decideReconcile(state, input({ objects: [pod('u1'), unparsable('u2'), unparsable('u3')] }));
    expect(decision.actions).toEqual([{ kind: 'commit', reservationId: 'r1', uid: 'u1' }]);
    expect(decision.unreadable).toEqual([
      { resource: 'pods', name: 'pod-u2', uid: 'u2', reason: expect.stringContaining('spec.containers[0].resources.requests[cpu]') },
      { resource: 'pods', name: 'pod-u3', uid: 'u3', reason: expect.stringContaining('spec.containers[0].resources.requests[cpu]') },
    ]);
  });

  it('reads a listed object as the API server stored it: a status condition reason longer than the ledger takes from a request', () => {
    const state = history([quota, reserve('r1', 'u1')]);
    const long = pod('u1', '1', {
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'r'.repeat(300) }] } as Pod['status'],
    });
    expect(decideReconcile(state, input({ objects: [long] }))).toMatchObject({
      actions: [{ kind: 'commit', reservationId: 'r1' }],
      unreadable: [],
    });
  });

  it('releases the pending changes of a deleted object with its committed state', () => {
    const change = reserve('r2', 'u1', {
      operation: 'UPDATE',
      charged: { 'requests.cpu': '500m', pods: '0' },
      objectUsage: { 'requests.cpu': '1500m', pods: '1' },
      supersedes: 'r1',
      previousScopeFacts: facts,
    });
    const state = history([quota, reserve('r1', 'u1'), { type: 'Committed', data: { reservationId: 'r1' } }, change], (i) => T0 + i);
    const decision = decideReconcile(state, input({ objects: [] }));
    expect(decision.actions).toEqual([
      { kind: 'release', reservationId: 'r1', reason: 'deleted', uid: 'u1' },
      { kind: 'release', reservationId: 'r2', reason: 'deleted', uid: 'u1' },
    ]);
  });

  it('is idempotent: reconciling the state it produced appends nothing', () => {
    const state = history([quota, reserve('r1', 'u1'), reserve('r2', 'u2')]);
    const listing = input({ objects: [pod('u1'), pod('u3')] });
    const first = decideReconcile(state, listing);
    expect(first.events.length).toBe(3);
    const after = first.events.reduce((s, e) => evolve(s, { ...e, version: s.version + 1, at: listing.now }), state);
    expect(decideReconcile(after, { ...listing, listedAt: listing.now - 1 }).events).toEqual([]);
  });

  describe('terminal pods (Kubernetes stops charging compute once a pod is terminal; count/pods stays)', () => {
    const countQuota: LedgerEvent = {
      type: 'QuotaDefined',
      data: { name: 'q', spec: { hard: { 'requests.cpu': '2', pods: '2', 'count/pods': '5' } } },
    };
    const charge = wholeUsage('1');
    const running = history([countQuota, reserve('r1', 'u1', { charged: charge }), { type: 'Committed', data: { reservationId: 'r1' } }]);
    const deleting = (graceSeconds: number) => ({
      metadata: { deletionTimestamp: new Date(T0).toISOString(), deletionGracePeriodSeconds: graceSeconds },
    });

    it.each([
      ['Succeeded', { status: { phase: 'Succeeded' } }, T0 + GRACE + 20],
      ['Failed', { status: { phase: 'Failed' } }, T0 + GRACE + 20],
      ['DeletionGracePeriodElapsed', deleting(30), T0 + 30_001],
    ] as const)('a committed pod listed as %s keeps only count/pods, by one Terminated event', (reason, extra, now) => {
      const decision = decideReconcile(running, input({ now, objects: [pod('u1', '1', extra)] }));
      expect(decision.events).toEqual([{ type: 'Terminated', data: { reservationId: 'r1', reason, usage: { 'count/pods': '1' } } }]);
      expect(decision.actions).toEqual([{ kind: 'terminate', reservationId: 'r1', reason, uid: 'u1' }]);
      const after = evolve(running, { ...decision.events[0]!, version: running.version + 1, at: now });
      expect(Resources.canonicalResourceList(after.used.get('q') ?? {})).toEqual({ 'requests.cpu': '0', pods: '0', 'count/pods': '1' });
      // Listed again, terminal still: nothing more to correct.
      expect(decideReconcile(after, input({ now, objects: [pod('u1', '1', extra)] })).events).toEqual([]);
    });

    it('leaves a running pod, and one still inside its deletion grace period, charged', () => {
      expect(decideReconcile(running, input({ objects: [pod('u1', '1', { status: { phase: 'Running' } })] })).events).toEqual([]);
      expect(decideReconcile(running, input({ now: T0 + 30_000, objects: [pod('u1', '1', deleting(30))] })).events).toEqual([]);
    });

    it('commits and terminates at once a reserved pod first listed after it completed', () => {
      const reserved = history([countQuota, reserve('r1', 'u1', { charged: charge })]);
      const decision = decideReconcile(reserved, input({ objects: [pod('u1', '1', { status: { phase: 'Succeeded' } })] }));
      expect(decision.events.map((e) => e.type)).toEqual(['Committed', 'Terminated']);
      expect(decision.actions.map((a) => a.kind)).toEqual(['commit', 'terminate']);
    });

    it('adopts a terminal pod nobody reserved at its object count, with nothing to terminate later', () => {
      const empty = history([countQuota]);
      const decision = decideReconcile(empty, input({ objects: [pod('u9', '1', { status: { phase: 'Failed' } })] }));
      expect(decision.events).toMatchObject([{ type: 'Adopted', data: { usage: { 'count/pods': '1' } } }]);
      const after = evolve(empty, { ...decision.events[0]!, version: 2, at: T0 + GRACE + 20 });
      expect(decideReconcile(after, input({ objects: [pod('u9', '1', { status: { phase: 'Failed' } })] })).events).toEqual([]);
    });

    it('releases a terminated pod as deleted once it is gone', () => {
      const terminal = evolve(running, {
        type: 'Terminated',
        data: { reservationId: 'r1', reason: 'Succeeded', usage: { 'count/pods': '1' } },
        version: 4,
        at: T0 + 5,
      });
      expect(decideReconcile(terminal, input({})).actions).toEqual([
        { kind: 'release', reservationId: 'r1', reason: 'deleted', uid: 'u1' },
      ]);
    });
  });
});
