import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { fold } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import { originOf } from './stored.js';
import type { AdmitObject, NamespaceCommand } from './commands.js';
import { decide } from './decide.js';
import { emptyFacts, type NamespaceFacts, type RecordedReservation } from './facts.js';

/**
 * A tenant must not release or shrink what the cluster reserved: a reservation the cluster made
 * (the kube-apiserver's review, or the reconciler's adoption) is settled only from what the
 * cluster holds; a tenant's REST call may act on REST reservations alone.
 */
const T0 = Date.UTC(2026, 0, 1);
const NS = 'team-a';
const pods = { group: '', resource: 'pods' };
const facts = {
  Terminating: false,
  NotTerminating: true,
  BestEffort: false,
  NotBestEffort: true,
  PriorityClass: [],
  CrossNamespacePodAffinity: false,
};
/** A running 500m pod's whole usage, as admission records it. */
const running = { 'count/pods': '1', pods: '1', cpu: '500m', 'requests.cpu': '500m', 'limits.cpu': '500m' };

const reserved = (id: string, uid: string | undefined, source?: 'webhook' | 'rest'): LedgerEvent => ({
  type: 'Reserved',
  data: {
    reservationId: id,
    object: { ...pods, kind: 'Pod', name: `pod-${id}`, ...(uid ? { uid } : {}) },
    operation: 'CREATE',
    charged: running,
    scopeFacts: facts,
    ...(source ? { source } : {}),
  },
});
const adopted = (id: string, uid: string): LedgerEvent => ({
  type: 'Adopted',
  data: { reservationId: id, object: { ...pods, kind: 'Pod', name: `pod-${id}`, uid }, usage: running, scopeFacts: facts },
});

function given(events: readonly LedgerEvent[], extra: Partial<NamespaceFacts> = {}) {
  const state = fold(
    [{ type: 'QuotaDefined', data: { name: 'compute', spec: { hard: { pods: '5', 'requests.cpu': '4' } } } } as LedgerEvent, ...events].map(
      (e, i) => ({ ...e, version: i + 1, at: T0 + i }),
    ),
  );
  const all: NamespaceFacts = { ...emptyFacts(NS, T0 + 1000, state, true), ...extra };
  return (command: NamespaceCommand) => decide(command, all);
}

const record = (id: string, origin: RecordedReservation['origin']): Partial<NamespaceFacts> => ({
  reservations: new Map([[id, { id, object: { ...pods, uid: `u-${id}` }, origin, status: 'reserved' }]]),
});

function resized(uid: string, cpu: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: NS, uid, resourceVersion: '7' },
    spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu }, limits: { cpu } } }] },
  };
}

const restUpdate = (uid: string, cpu: string): AdmitObject => ({
  type: 'AdmitObject',
  request: {
    operation: 'UPDATE',
    groupResource: pods,
    subresource: 'resize',
    namespace: NS,
    name: 'web',
    object: resized(uid, cpu),
    oldObject: resized(uid, '500m'),
  },
  reservationId: 'r-new',
  dryRun: false,
  source: 'rest',
});

describe('originOf', () => {
  it.each([
    ['the source it records', { operation: 'CREATE', source: 'rest', object: { ...pods, uid: 'u' } }, undefined, 'rest'],
    ['adopted, whatever else', { operation: 'ADOPT', object: { ...pods, uid: 'u' } }, 'rest:x', 'adopted'],
    ['an old reservation by its review key', { operation: 'CREATE', object: pods }, 'review:abc', 'webhook'],
    ['an old reservation by its REST key', { operation: 'CREATE', object: { ...pods, uid: 'u' } }, 'rest:abc', 'rest'],
    [
      'an old reservation of an object with a uid and no key: the webhook, the safe side',
      { operation: 'CREATE', object: { ...pods, uid: 'u' } },
      undefined,
      'webhook',
    ],
    ['an old reservation of a plain list and no key: REST', { operation: 'CREATE', object: pods }, undefined, 'rest'],
  ] as const)('tells %s', (_what, reservation, requestId, expected) => {
    expect(originOf(reservation, requestId)).toBe(expected);
  });
});

describe('a REST call against what the cluster made', () => {
  it.each([
    ['commit', { type: 'CommitReservation', reservationId: 'r1', by: 'rest' }],
    ['release', { type: 'ReleaseReservation', reservationId: 'r1', reason: 'cancelled', by: 'rest' }],
  ] as const)('may not %s a webhook reservation or an adopted one', (_what, command) => {
    for (const [events, origin] of [
      [[reserved('r1', 'u-r1', 'webhook')], 'webhook'],
      [[adopted('r1', 'u-r1')], 'adopted'],
    ] as const) {
      const { events: appended, answer } = given(events, { ...record('r1', origin), liveLoaded: 'all' })(command);
      expect(appended).toEqual([]);
      expect(answer).toMatchObject({ kind: 'Refused', code: 'Forbidden', details: { kind: 'reservations', name: 'r1' } });
      expect((answer as { message: string }).message).toContain('never by a REST call');
    }
  });

  it('may commit and release its own REST reservation, and the ledger (by nobody in particular) may settle any', () => {
    const decideOn = given([reserved('r1', 'u-r1', 'rest')], { ...record('r1', 'rest'), liveLoaded: 'all' });
    expect(decideOn({ type: 'CommitReservation', reservationId: 'r1', by: 'rest' }).answer).toEqual({ kind: 'Committed' });
    expect(decideOn({ type: 'ReleaseReservation', reservationId: 'r1', reason: 'cancelled', by: 'rest' }).answer).toEqual({
      kind: 'Released',
    });
    const cluster = given([reserved('r1', 'u-r1', 'webhook')], { ...record('r1', 'webhook'), liveLoaded: 'all' });
    expect(cluster({ type: 'CommitReservation', reservationId: 'r1' }).answer).toEqual({ kind: 'Committed' });
  });

  it('may not reserve an UPDATE of an object the cluster admitted (a PVC shrunk from 2Gi to 1Gi and committed stayed 1Gi)', () => {
    const { events, answer } = given([reserved('r1', 'u1', 'webhook')])(restUpdate('u1', '250m'));
    expect(events).toEqual([]);
    expect(answer).toMatchObject({ kind: 'Decided', result: { allowed: false, code: 403, stage: 'ResourceQuota' } });
    expect((answer as { result: { message: string } }).result.message).toContain("admitted by the cluster's webhook (reservation r1)");
  });

  it('may reserve an UPDATE of its own REST object, and the cluster may change a REST object', () => {
    expect(given([reserved('r1', 'u1', 'rest')])(restUpdate('u1', '1')).answer).toMatchObject({
      kind: 'Decided',
      result: { allowed: true },
    });
    const review: AdmitObject = { ...restUpdate('u1', '1'), source: 'webhook' };
    const { events, answer } = given([reserved('r1', 'u1', 'rest')])(review);
    expect(answer).toMatchObject({ kind: 'Decided', result: { allowed: true } });
    expect(events).toMatchObject([{ type: 'Reserved', data: { source: 'webhook', operation: 'UPDATE' } }]);
  });
});

describe("a request's word that its object has ended", () => {
  it('is not taken: a resize review claiming `phase: Succeeded` is measured as the running pod it is', () => {
    const finished = (cpu: string): Pod => ({ ...resized('u1', cpu), status: { phase: 'Succeeded' } });
    const review: AdmitObject = {
      type: 'AdmitObject',
      request: {
        operation: 'UPDATE',
        groupResource: pods,
        subresource: 'resize',
        namespace: NS,
        name: 'web',
        object: finished('500m'),
        oldObject: resized('u1', '500m'),
      },
      reservationId: 'r-new',
      dryRun: false,
      source: 'webhook',
    };
    const { events } = given([reserved('r1', 'u1', 'webhook'), { type: 'Committed', data: { reservationId: 'r1' } }])(review);
    // Nothing the ledger counts changes: no reservation, so nothing to commit that would cut the pod's compute.
    expect(events).toEqual([]);
    const bigger = given([reserved('r1', 'u1', 'webhook'), { type: 'Committed', data: { reservationId: 'r1' } }])({
      ...review,
      request: { ...review.request, object: finished('1') },
    });
    expect(bigger.events).toMatchObject([
      { type: 'Reserved', data: { operation: 'UPDATE', objectUsage: { 'requests.cpu': '1', 'count/pods': '1' } } },
    ]);
  });
});
