import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { fold, reservationsNeededBy, eventTypesNeeding } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import type { ExistingObject } from './reconcile.js';
import type { AdmitObject, AdmitResources, NamespaceCommand } from './commands.js';
import { decide } from './decide.js';
import { emptyFacts, type NamespaceFacts, type RecordedReservation, type StoredAnswer } from './facts.js';
import { needsOf } from './needs.js';

/**
 * The namespace decider, one scenario per rule: given the events of a namespace (and the facts
 * looked up beside them), when a command arrives, then these events and this answer.
 */
const T0 = Date.UTC(2026, 0, 1);
const NOW = T0 + 1000;
const NS = 'team-a';
const podFacts = { NotTerminating: true, Terminating: false, BestEffort: false, NotBestEffort: true };
const pods = { group: '', resource: 'pods' };

function given(events: readonly LedgerEvent[], extra: Partial<NamespaceFacts> = {}) {
  const state = fold(events.map((event, i) => ({ ...event, version: i + 1, at: T0 + i })));
  const facts: NamespaceFacts = { ...emptyFacts(NS, NOW, state, events.length > 0), ...extra };
  return {
    when: (command: NamespaceCommand) => decide(command, facts),
    needs: (command: NamespaceCommand) => needsOf(command, facts),
  };
}

const quota = (hard: Record<string, string>, name = 'compute'): LedgerEvent => ({ type: 'QuotaDefined', data: { name, spec: { hard } } });
const reserved = (
  id: string,
  uid: string,
  charged: Record<string, string> = { pods: '1', 'requests.cpu': '1' },
  extra: object = {},
): LedgerEvent => ({
  type: 'Reserved',
  data: {
    reservationId: id,
    object: { ...pods, kind: 'Pod', name: `pod-${uid}`, uid },
    operation: 'CREATE',
    charged,
    scopeFacts: podFacts,
    ...extra,
  },
});

function pod(name: string, cpu: string, uid = `uid-${name}`): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, uid },
    spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
  };
}

const admitPod = (object: Pod, extra: Partial<AdmitObject> = {}): AdmitObject => ({
  type: 'AdmitObject',
  request: { operation: 'CREATE', groupResource: pods, namespace: NS, name: object.metadata?.name ?? '', object },
  reservationId: 'r-new',
  dryRun: false,
  ...extra,
});

const admitList = (resources: Record<string, string>, extra: Partial<AdmitResources> = {}): AdmitResources => ({
  type: 'AdmitResources',
  groupResource: { group: 'example.com', resource: 'widgets' },
  name: 'w1',
  resources,
  reservationId: 'r-list',
  dryRun: false,
  ...extra,
});

const answered = (key: string, answer: StoredAnswer | null): Partial<NamespaceFacts> => ({ answers: new Map([[key, answer]]) });
const recorded = (record: RecordedReservation): Partial<NamespaceFacts> => ({ reservations: new Map([[record.id, record]]) });

describe('decide: AdmitObject', () => {
  it('reserves a pod that fits the quota, charged its whole usage', () => {
    const { events, answer } = given([quota({ pods: '2', 'requests.cpu': '2' })]).when(admitPod(pod('web', '500m')));
    expect(events).toEqual([
      {
        type: 'Reserved',
        data: {
          reservationId: 'r-new',
          object: { ...pods, kind: 'Pod', name: 'web', uid: 'uid-web' },
          operation: 'CREATE',
          charged: expect.objectContaining({ pods: '1', 'requests.cpu': '500m' }),
          scopeFacts: expect.any(Object),
        },
      },
    ]);
    expect(answer).toMatchObject({
      kind: 'Decided',
      result: { allowed: true, code: 200, dryRun: false, reservationId: 'r-new', charged: { pods: '1', 'requests.cpu': '500m' } },
    });
  });

  it('denies a pod whose requests.cpu would exceed the quota, appending nothing', () => {
    const { events, answer } = given([quota({ 'requests.cpu': '1' }), reserved('r1', 'u1', { 'requests.cpu': '800m' })]).when(
      admitPod(pod('big', '500m')),
    );
    expect(events).toEqual([]);
    expect(answer).toEqual({
      kind: 'Decided',
      result: {
        allowed: false,
        code: 403,
        dryRun: false,
        stage: 'ResourceQuota',
        message:
          'pods "big" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=800m, limited: requests.cpu=1',
        denial: {
          kind: 'Exceeded',
          quota: 'compute',
          resource: 'requests.cpu',
          requested: '500m',
          used: '800m',
          hard: '1',
          exceeded: [{ resource: 'requests.cpu', requested: '500m', used: '800m', hard: '1' }],
        },
      },
    });
  });

  it('decides a dry run and appends nothing', () => {
    const { events, answer } = given([quota({ pods: '1' })]).when(admitPod(pod('d', '1'), { dryRun: true }));
    expect(events).toEqual([]);
    expect(answer).toMatchObject({ kind: 'Decided', result: { allowed: true, dryRun: true, charged: { pods: '1' } } });
    expect(answer.kind === 'Decided' && answer.result.reservationId).toBeUndefined();
  });

  it('charges the same object once: a second CREATE of a known uid answers with the reservation that charges it', () => {
    const first = given([quota({ pods: '5' })]).when(admitPod(pod('x', '100m', 'uid-x'), { reservationId: 'r1' })).events;
    const { events, answer } = given([quota({ pods: '5' }), ...first]).when(admitPod(pod('x', '100m', 'uid-x')));
    expect(events).toEqual([]);
    expect(answer).toMatchObject({ kind: 'Decided', result: { allowed: true, reservationId: 'r1' } });
  });

  it('repeats the stored answer to a repeated request key, deciding nothing', () => {
    const first = { allowed: true, code: 200, dryRun: false, reservationId: 'r0' } as const;
    const { events, answer } = given([quota({ pods: '0' })], answered('review:1', { result: first, digest: 'd1' })).when(
      admitPod(pod('a', '1'), { requestKey: 'review:1', requestDigest: 'd1' }),
    );
    expect(events).toEqual([]);
    expect(answer).toEqual({ kind: 'Repeated', result: first });
  });

  it('refuses a request key reused for a different request with 409, deciding nothing', () => {
    const first = { allowed: true, code: 200, dryRun: false } as const;
    const { events, answer } = given([quota({ pods: '5' })], answered('rest:k', { result: first, digest: 'd1' })).when(
      admitPod(pod('a', '1'), { requestKey: 'rest:k', requestDigest: 'other' }),
    );
    expect(events).toEqual([]);
    expect(answer).toEqual({
      kind: 'KeyReused',
      result: {
        allowed: false,
        code: 409,
        dryRun: false,
        message: 'the requestId "k" was already used in namespace "team-a" for a different request; a new request needs a new requestId',
      },
    });
  });

  it('admits uncharged and logs nothing in a namespace where nothing was ever defined', () => {
    const { events, answer } = given([]).when(admitPod(pod('a', '1')));
    expect(events).toEqual([]);
    expect(answer).toEqual({ kind: 'Unmanaged', result: { allowed: true, code: 200, dryRun: false } });
  });

  it('refuses with NamespaceNotFound there when the caller needs a managed namespace (REST)', () => {
    const { answer } = given([]).when(admitPod(pod('a', '1'), { requireKnownNamespace: true }));
    expect(answer).toEqual({
      kind: 'Refused',
      code: 'NamespaceNotFound',
      message: 'namespaces "team-a" not found: define a ResourceQuota or LimitRange in it first',
      details: { kind: 'namespaces', name: 'team-a' },
    });
  });

  it('needs the answer to its request key and the live reservations of its object before it can be decided', () => {
    const spec = given([quota({ pods: '5' })], { liveLoaded: new Set() });
    expect(spec.needs(admitPod(pod('a', '1'), { requestKey: 'review:9' }))).toEqual({
      requestKeys: ['review:9'],
      reservationIds: [],
      uids: ['uid-a'],
      allLive: false,
    });
    expect(spec.needs(admitPod(pod('a', '1'), { requestKey: 'review:9', dryRun: true }))).toEqual({
      requestKeys: [],
      reservationIds: [],
      uids: ['uid-a'],
      allLive: false,
    });
  });
});

describe('decide: AdmitResources', () => {
  it('reserves a resource list against the unscoped quotas that limit it', () => {
    const { events, answer } = given([quota({ 'example.com/gpu': '2' })]).when(admitList({ 'example.com/gpu': '1' }, { ttlMs: 60_000 }));
    expect(events).toEqual([
      {
        type: 'Reserved',
        data: {
          reservationId: 'r-list',
          object: { group: 'example.com', resource: 'widgets', name: 'w1' },
          operation: 'CREATE',
          charged: { 'example.com/gpu': '1' },
          scopeFacts: {},
          expiresAt: new Date(NOW + 60_000).toISOString(),
          source: 'rest',
        },
      },
    ]);
    expect(answer).toMatchObject({
      kind: 'Decided',
      result: { allowed: true, reservationId: 'r-list', expiresAt: new Date(NOW + 60_000).toISOString() },
    });
  });

  it('denies a list that would go over hard, naming the quota', () => {
    const { events, answer } = given([quota({ 'example.com/gpu': '1' })]).when(admitList({ 'example.com/gpu': '2' }));
    expect(events).toEqual([]);
    expect(answer).toMatchObject({
      kind: 'Decided',
      result: {
        allowed: false,
        code: 403,
        denial: { kind: 'Exceeded', quota: 'compute', resource: 'example.com/gpu', requested: '2', used: '0', hard: '1' },
      },
    });
  });
});

describe('decide: CommitReservation', () => {
  const history = [quota({ pods: '5' }), reserved('r1', 'u1')];
  const live: RecordedReservation = { id: 'r1', object: { ...pods, uid: 'u1' }, origin: 'webhook', status: 'reserved' };

  it('commits a live reservation', () => {
    expect(given(history, recorded(live)).when({ type: 'CommitReservation', reservationId: 'r1' })).toEqual({
      events: [{ type: 'Committed', data: { reservationId: 'r1' } }],
      answer: { kind: 'Committed' },
    });
  });

  it('commits once: a committed reservation appends nothing more', () => {
    const committed = [...history, { type: 'Committed', data: { reservationId: 'r1' } } as LedgerEvent];
    expect(given(committed, recorded({ ...live, status: 'committed' })).when({ type: 'CommitReservation', reservationId: 'r1' })).toEqual({
      events: [],
      answer: { kind: 'AlreadyCommitted' },
    });
  });

  it('releases a reservation past its TTL instead, and refuses the commit as Expired', () => {
    const expiresAt = new Date(NOW - 1).toISOString();
    const { events, answer } = given(
      [quota({ pods: '5' }), reserved('r1', 'u1', { pods: '1' }, { expiresAt })],
      recorded({ ...live, expiresAt: NOW - 1 }),
    ).when({
      type: 'CommitReservation',
      reservationId: 'r1',
    });
    expect(events).toEqual([{ type: 'Released', data: { reservationId: 'r1', reason: 'expired' } }]);
    expect(answer).toMatchObject({
      kind: 'Refused',
      code: 'Expired',
      message: `reservation "r1" expired at ${expiresAt} before it was committed and has been released; reserve again`,
    });
  });

  it('refuses to commit a released reservation with Conflict, naming why it was released', () => {
    const released: RecordedReservation = { ...live, status: 'released', releasedAt: T0, releaseReason: 'stale' };
    const { events, answer } = given([quota({ pods: '5' })], recorded(released)).when({ type: 'CommitReservation', reservationId: 'r1' });
    expect(events).toEqual([]);
    expect(answer).toMatchObject({
      kind: 'Refused',
      code: 'Conflict',
      message: `reservation "r1" was released (stale) at ${new Date(T0).toISOString()} and cannot be committed; reserve again`,
    });
  });

  it('answers NotFound for a reservation that never was, and NamespaceNotFound where nothing was defined', () => {
    expect(
      given(history, { reservations: new Map([['nope', null]]) }).when({ type: 'CommitReservation', reservationId: 'nope' }).answer,
    ).toMatchObject({ kind: 'Refused', code: 'NotFound' });
    expect(
      given([], { reservations: new Map([['r1', null]]) }).when({ type: 'CommitReservation', reservationId: 'r1' }).answer,
    ).toMatchObject({
      kind: 'Refused',
      code: 'NamespaceNotFound',
      message: 'namespaces "team-a" not found',
    });
  });

  it('needs the reservation by id, then the live reservations of its object', () => {
    expect(given(history, { liveLoaded: new Set() }).needs({ type: 'CommitReservation', reservationId: 'r1' })).toEqual({
      requestKeys: [],
      reservationIds: ['r1'],
      uids: [],
      allLive: false,
    });
    expect(given(history, { ...recorded(live), liveLoaded: new Set() }).needs({ type: 'CommitReservation', reservationId: 'r1' })).toEqual({
      requestKeys: [],
      reservationIds: [],
      uids: ['u1'],
      allLive: false,
    });
    expect(
      given(history, { ...recorded(live), liveLoaded: new Set(['u1']) }).needs({ type: 'CommitReservation', reservationId: 'r1' }),
    ).toBeUndefined();
  });
});

describe('decide: ReleaseReservation', () => {
  it('releases a settled reservation and the pending changes of its object with it', () => {
    const history = [
      quota({ pods: '5' }),
      reserved('r1', 'u1'),
      reserved(
        'r2',
        'u1',
        { pods: '0' },
        { operation: 'UPDATE', objectUsage: { pods: '1' }, supersedes: 'r1', previousScopeFacts: podFacts },
      ),
    ];
    const { events, answer } = given(
      history,
      recorded({ id: 'r1', object: { ...pods, uid: 'u1' }, origin: 'webhook', status: 'reserved' }),
    ).when({
      type: 'ReleaseReservation',
      reservationId: 'r1',
      reason: 'deleted',
    });
    expect(events).toEqual([
      { type: 'Released', data: { reservationId: 'r1', reason: 'deleted' } },
      { type: 'Released', data: { reservationId: 'r2', reason: 'deleted' } },
    ]);
    expect(answer).toEqual({ kind: 'Released' });
  });

  it('releases once: a released reservation appends nothing more', () => {
    const released: RecordedReservation = {
      id: 'r1',
      object: { ...pods, uid: 'u1' },
      origin: 'webhook',
      status: 'released',
      releasedAt: T0,
      releaseReason: 'cancelled',
    };
    expect(
      given([quota({ pods: '5' })], recorded(released)).when({ type: 'ReleaseReservation', reservationId: 'r1', reason: 'cancelled' }),
    ).toEqual({
      events: [],
      answer: { kind: 'AlreadyReleased' },
    });
  });
});

describe('decide: Reconcile', () => {
  const object = (uid: string): ExistingObject => ({ groupResource: pods, uid, name: `pod-${uid}`, object: pod(`pod-${uid}`, '1', uid) });
  const reconcile = (objects: ExistingObject[]) =>
    ({
      type: 'Reconcile',
      covers: [pods],
      objects,
      listedAt: NOW - 10,
      graceMs: 100,
      ids: objects.map((_, i) => `adopted-${i + 1}`),
    }) as const;

  it('commits what exists, releases what never appeared, and adopts what nothing reserved', () => {
    // r1 records what the listed pod measures (else the listing would re-measure it).
    const measured = { 'count/pods': '1', pods: '1', cpu: '1', 'requests.cpu': '1', 'limits.cpu': '1' };
    const facts = { ...podFacts, PriorityClass: [], CrossNamespacePodAffinity: false };
    const { events, answer } = given([quota({ pods: '5' }), reserved('r1', 'u1', measured, { scopeFacts: facts }), reserved('r2', 'u2')], {
      releasedSince: { since: NOW - 10, uids: new Set() },
    }).when(reconcile([object('u1'), object('u3')]));
    expect(events).toEqual([
      { type: 'Committed', data: { reservationId: 'r1' } },
      { type: 'Released', data: { reservationId: 'r2', reason: 'stale' } },
      expect.objectContaining({
        type: 'Adopted',
        data: expect.objectContaining({ reservationId: 'adopted-1', object: expect.objectContaining({ uid: 'u3' }) }),
      }),
    ]);
    expect(answer).toMatchObject({
      kind: 'Reconciled',
      pending: 0,
      actions: [{ kind: 'commit' }, { kind: 'release', reason: 'stale' }, { kind: 'adopt', uid: 'u3' }],
    });
  });

  it('does not adopt an object whose reservation was released after the listing started', () => {
    const { events } = given([quota({ pods: '5' })], { releasedSince: { since: NOW - 10, uids: new Set(['u3']) } }).when(
      reconcile([object('u3')]),
    );
    expect(events).toEqual([]);
  });

  it('needs every live reservation, then the releases since the listing of the objects none claims', () => {
    const history = [quota({ pods: '5' }), reserved('r1', 'u1')];
    expect(given(history, { liveLoaded: new Set() }).needs(reconcile([object('u1')]))).toMatchObject({ allLive: true });
    expect(given(history).needs(reconcile([object('u1'), object('u3')]))).toMatchObject({
      releasedSince: { since: NOW - 10, uids: ['u3'] },
    });
    expect(given([]).needs(reconcile([object('u1')]))).toBeUndefined();
  });
});

describe('decide: PutQuota', () => {
  const put = (hard: Record<string, string>, extra: object = {}) =>
    ({
      type: 'PutQuota',
      definition: { name: 'compute', spec: { hard } },
      uid: 'uid-q',
      limit: { max: 2, setting: 'QUOTAS_PER_NAMESPACE_MAX' },
      ...extra,
    }) as const;

  it('defines a new quota with canonical quantities, the ledger uid and the creation time', () => {
    const { events, answer } = given([]).when(put({ 'requests.memory': '1.5Gi' }));
    expect(events).toEqual([
      {
        type: 'QuotaDefined',
        data: {
          name: 'compute',
          spec: { hard: { 'requests.memory': '1536Mi' } },
          metadata: { uid: 'uid-q', creationTimestamp: new Date(NOW).toISOString() },
        },
      },
    ]);
    expect(answer).toEqual({ kind: 'Defined' });
  });

  it('changes an existing quota, keeping its uid and creation time', () => {
    const first = given([]).when(put({ pods: '1' })).events;
    const { events, answer } = given(first).when(put({ pods: '2' }, { uid: 'another' }));
    expect(events).toEqual([
      {
        type: 'QuotaChanged',
        data: {
          name: 'compute',
          spec: { hard: { pods: '2' } },
          metadata: { uid: 'uid-q', creationTimestamp: new Date(NOW).toISOString() },
        },
      },
    ]);
    expect(answer).toEqual({ kind: 'Changed' });
  });

  it('changes nothing when the stored object would be the same', () => {
    const first = given([]).when(put({ pods: '1' })).events;
    expect(given(first).when(put({ pods: '1' }))).toEqual({ events: [], answer: { kind: 'Unchanged' } });
  });

  it('refuses a stale resourceVersion with Conflict', () => {
    const first = given([]).when(put({ pods: '1' })).events;
    expect(given(first).when(put({ pods: '2' }, { expectedVersion: 7 })).answer).toMatchObject({
      kind: 'Refused',
      code: 'Conflict',
      message: expect.stringContaining('the object has been modified'),
    });
    expect(given([]).when(put({ pods: '2' }, { expectedVersion: 1 })).answer).toMatchObject({
      kind: 'Refused',
      code: 'Conflict',
      message: expect.stringContaining('the object does not exist'),
    });
  });

  it('forbids one quota more than the namespace may hold, naming the setting', () => {
    const { events, answer } = given([quota({ pods: '1' }, 'a'), quota({ pods: '1' }, 'b')]).when(put({ pods: '1' }));
    expect(events).toEqual([]);
    expect(answer).toMatchObject({
      kind: 'Refused',
      code: 'Forbidden',
      message:
        'resourcequotas "compute" is forbidden: namespace "team-a" already has 2 ResourceQuotas, the most it may have (QUOTAS_PER_NAMESPACE_MAX=2)',
    });
  });

  it('needs every live reservation only when it will define or change the quota (usage is recounted)', () => {
    expect(given([], { liveLoaded: new Set() }).needs(put({ pods: '1' }))).toMatchObject({ allLive: true });
    const first = given([]).when(put({ pods: '1' })).events;
    expect(given(first, { liveLoaded: new Set() }).needs(put({ pods: '1' }))).toBeUndefined();
  });
});

/**
 * `count/resourcequotas` and its legacy name `resourcequotas` on a quota's CREATE, as
 * Kubernetes' ResourceQuota admission counts ResourceQuota objects: the new quota is one more,
 * checked against the unscoped quotas stored before it (never against its own limit).
 */
describe("decide: PutQuota counts the namespace's quotas", () => {
  const put = (name: string, hard: Record<string, string>) =>
    ({
      type: 'PutQuota',
      definition: { name, spec: { hard } },
      uid: `uid-${name}`,
      limit: { max: 16, setting: 'QUOTAS_PER_NAMESPACE_MAX' },
    }) as const;
  const adoptedQuota = (i: number): LedgerEvent => ({
    type: 'Adopted',
    data: {
      reservationId: `adopted-${i}`,
      object: { group: '', resource: 'resourcequotas', kind: 'ResourceQuota', name: `cluster-${i}`, uid: `rq-${i}` },
      usage: { 'count/resourcequotas': '1', resourcequotas: '1' },
      scopeFacts: {},
    },
  });
  const exceeded = (name: string, quotaName: string, text: string) => ({
    kind: 'Refused',
    code: 'Forbidden',
    message: `resourcequotas "${name}" is forbidden: exceeded quota: ${quotaName}, ${text}`,
    details: { kind: 'resourcequotas', name },
  });

  it.each<readonly [string, readonly LedgerEvent[], ReturnType<typeof put>, object]>([
    ['the first quota, whatever its own limit (nothing limits it yet)', [], put('objects', { resourcequotas: '0' }), { kind: 'Defined' }],
    ['a second quota under a limit of 2', [quota({ resourcequotas: '2' }, 'objects')], put('compute', { pods: '1' }), { kind: 'Defined' }],
    [
      'a second quota over a limit of 1 (resourcequotas)',
      [quota({ resourcequotas: '1' }, 'objects')],
      put('compute', { pods: '1' }),
      exceeded('compute', 'objects', 'requested: resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1'),
    ],
    [
      'a second quota over a limit of 1 (count/resourcequotas)',
      [quota({ 'count/resourcequotas': '1' }, 'objects')],
      put('compute', { pods: '1' }),
      exceeded('compute', 'objects', 'requested: count/resourcequotas=1, used: count/resourcequotas=1, limited: count/resourcequotas=1'),
    ],
    [
      'a third quota over both names, each named',
      [quota({ 'count/resourcequotas': '2', resourcequotas: '2' }, 'objects'), quota({ pods: '1' }, 'compute')],
      put('storage', { 'requests.storage': '1Gi' }),
      exceeded(
        'storage',
        'objects',
        'requested: count/resourcequotas=1,resourcequotas=1, used: count/resourcequotas=2,resourcequotas=2, limited: count/resourcequotas=2,resourcequotas=2',
      ),
    ],
    [
      'a quota whose own limit it breaks (it is not stored yet when it is checked)',
      [quota({ pods: '1' }, 'compute')],
      put('objects', { resourcequotas: '1' }),
      { kind: 'Defined' },
    ],
    [
      'a quota the first full quota by name refuses, though another has room',
      [quota({ resourcequotas: '5' }, 'a'), quota({ resourcequotas: '2' }, 'b')],
      put('c', { pods: '1' }),
      exceeded('c', 'b', 'requested: resourcequotas=1, used: resourcequotas=2, limited: resourcequotas=2'),
    ],
    [
      'a quota beside quotas that limit other resources only',
      [quota({ pods: '1' }, 'a'), quota({ pods: '1' }, 'b')],
      put('c', { pods: '1' }),
      { kind: 'Defined' },
    ],
    [
      'a replaced quota (a change counts nothing, as an UPDATE)',
      [quota({ resourcequotas: '1' }, 'objects')],
      put('objects', { resourcequotas: '1', pods: '2' }),
      { kind: 'Changed' },
    ],
    [
      'a quota counted by the quotas defined here, not by ResourceQuota objects adopted from the cluster',
      [quota({ resourcequotas: '2' }, 'objects'), adoptedQuota(1), adoptedQuota(2)],
      put('compute', { pods: '1' }),
      { kind: 'Defined' },
    ],
  ])('%s', (_name, history, command, answer) => {
    const decided = given(history).when(command);
    expect(decided.answer).toEqual(answer);
    expect(decided.events).toHaveLength('code' in answer ? 0 : 1);
  });
});

describe('decide: RemoveQuota', () => {
  it('removes a quota that exists, and answers NotFound for one that does not', () => {
    expect(given([quota({ pods: '1' })]).when({ type: 'RemoveQuota', name: 'compute' })).toEqual({
      events: [{ type: 'QuotaRemoved', data: { name: 'compute' } }],
      answer: { kind: 'Removed' },
    });
    expect(given([quota({ pods: '1' })]).when({ type: 'RemoveQuota', name: 'other' })).toEqual({
      events: [],
      answer: {
        kind: 'Refused',
        code: 'NotFound',
        message: 'resourcequotas "other" not found',
        details: { kind: 'resourcequotas', name: 'other' },
      },
    });
  });
});

describe('decide: PutLimitRange', () => {
  const put = {
    type: 'PutLimitRange',
    definition: { name: 'defaults', spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] } },
    uid: 'uid-lr',
    limit: { max: 16, setting: 'LIMIT_RANGES_PER_NAMESPACE_MAX' },
  } as const;

  it('defines a limit range, then changes nothing when it is put again as it is', () => {
    const { events, answer } = given([]).when(put);
    expect(events).toEqual([
      {
        type: 'LimitRangeDefined',
        data: { ...put.definition, metadata: { uid: 'uid-lr', creationTimestamp: new Date(NOW).toISOString() } },
      },
    ]);
    expect(answer).toEqual({ kind: 'Defined' });
    expect(given(events).when(put)).toEqual({ events: [], answer: { kind: 'Unchanged' } });
  });

  it('forbids one more than the namespace may hold', () => {
    expect(given([]).when({ ...put, limit: { max: 0, setting: 'LIMIT_RANGES_PER_NAMESPACE_MAX' } }).answer).toMatchObject({
      kind: 'Refused',
      code: 'Forbidden',
    });
  });
});

describe('decide: warnings of quotas near their limits', () => {
  const warningsOf = (events: readonly LedgerEvent[], command: AdmitObject | AdmitResources, extra: Partial<NamespaceFacts> = {}) => {
    const { answer } = given(events, extra).when(command);
    return answer.kind === 'Decided' ? answer.result.warnings : ['not decided'];
  };
  it.each([
    ['below the threshold: none', [quota({ pods: '10' }), reserved('r1', 'u1', { pods: '7' })], 90, undefined],
    [
      'at the threshold: the charged resource',
      [quota({ pods: '10' }), reserved('r1', 'u1', { pods: '8' })],
      90,
      ['quota "compute": pods at 90% of its limit (9/10)'],
    ],
    [
      'filling the quota',
      [quota({ pods: '2', 'requests.cpu': '10' }), reserved('r1', 'u1', { pods: '1' })],
      90,
      ['quota "compute": pods at 100% of its limit (2/2)'],
    ],
    [
      'several quotas, each named',
      [quota({ pods: '1' }), quota({ pods: '2' }, 'small')],
      50,
      ['quota "compute": pods at 100% of its limit (1/1)', 'quota "small": pods at 50% of its limit (1/2)'],
    ],
    ['not asked for: none', [quota({ pods: '1' })], undefined, undefined],
  ])('%s', (_case, events, percent, expected) => {
    const command = admitPod(pod('web', '100m'), percent === undefined ? {} : { warnAtPercent: percent });
    expect(warningsOf(events as LedgerEvent[], command)).toEqual(expected);
  });

  it('names a cluster quota as a denial does, with its usage over every namespace it covers', () => {
    const applied: LedgerEvent = {
      type: 'SharedQuotaApplied',
      data: { key: 'clusterresourcequotas/acme', ref: { kind: 'ClusterResourceQuota', name: 'acme' }, spec: { hard: { pods: '10' } } },
    };
    const elsewhere = { sharedElsewhere: new Map([['clusterresourcequotas/acme', { pods: Quantity.parse('8') }]]) };
    expect(warningsOf([quota({ 'requests.cpu': '10' }), applied], admitPod(pod('web', '100m'), { warnAtPercent: 90 }), elsewhere)).toEqual([
      'cluster quota "acme": pods at 90% of its limit (9/10)',
    ]);
  });

  it('warns a REST admission and a dry run too, and never a denial', () => {
    expect(
      warningsOf(
        [quota({ 'count/widgets.example.com': '1' })],
        admitList({ 'count/widgets.example.com': '1' }, { warnAtPercent: 90, dryRun: true }),
      ),
    ).toEqual(['quota "compute": count/widgets.example.com at 100% of its limit (1/1)']);
    expect(
      warningsOf([quota({ pods: '1' }), reserved('r1', 'u1', { pods: '1' })], admitPod(pod('web', '100m'), { warnAtPercent: 90 })),
    ).toBeUndefined();
  });
});

describe('decide: warnings of resource names no quota charges', () => {
  const decided = (events: readonly LedgerEvent[], command: AdmitObject | AdmitResources, extra: Partial<NamespaceFacts> = {}) =>
    given(events, extra).when(command);
  const unchargedOf = (events: readonly LedgerEvent[], command: AdmitObject | AdmitResources, extra: Partial<NamespaceFacts> = {}) => {
    const { answer } = decided(events, command, extra);
    return answer.kind === 'Decided' || answer.kind === 'Repeated' ? answer.uncharged : ['not decided'];
  };
  const crq: LedgerEvent = {
    type: 'SharedQuotaApplied',
    data: { key: 'clusterresourcequotas/acme', ref: { kind: 'ClusterResourceQuota', name: 'acme' }, spec: { hard: { pods: '10' } } },
  };
  const hrq: LedgerEvent = {
    type: 'SharedQuotaApplied',
    data: {
      key: 'hierarchicalresourcequotas/org/gpus',
      ref: { kind: 'HierarchicalResourceQuota', namespace: 'org', name: 'gpus' },
      spec: { hard: { 'example.com/gpu': '4' } },
    },
  };
  const elsewhere = {
    sharedElsewhere: new Map([
      ['clusterresourcequotas/acme', {}],
      ['hierarchicalresourcequotas/org/gpus', {}],
    ]),
  };

  it('admits requests.cpus and pod, charging nothing, and says so with the standard names', () => {
    const { events, answer } = decided([quota({ 'requests.cpu': '2', pods: '5' })], admitList({ 'requests.cpus': '1', pod: '1' }));
    // Admitted as before: the reservation is made, and no quota is charged.
    expect(events).toHaveLength(1);
    expect(answer).toMatchObject({ kind: 'Decided', result: { allowed: true, charged: { 'requests.cpus': '1', pod: '1' } } });
    expect(answer.kind === 'Decided' && answer.result.warnings).toBeFalsy();
    expect(answer).toMatchObject({
      uncharged: [
        'pod: no quota covering namespace "team-a" limits this resource, so nothing is charged for it (did you mean pods?)',
        'requests.cpus: no quota covering namespace "team-a" limits this resource, so nothing is charged for it (did you mean requests.cpu?)',
      ],
    });
  });

  it('says nothing of a name a quota, a ClusterResourceQuota or a HierarchicalResourceQuota covering the namespace limits', () => {
    expect(
      unchargedOf(
        [quota({ 'requests.cpu': '2' }), crq, hrq],
        admitList({ 'requests.cpu': '1', pods: '1', 'example.com/gpu': '1' }),
        elsewhere,
      ),
    ).toBeUndefined();
    expect(
      unchargedOf([quota({ 'requests.cpu': '2' }), crq], admitList({ 'requests.cpu': '1', pods: '1', 'example.com/gpu': '1' }), elsewhere),
    ).toEqual(['example.com/gpu: no quota covering namespace "team-a" limits this resource, so nothing is charged for it']);
  });

  it('names the scoped quotas when only they limit the name: a resource list matches no scope', () => {
    const scoped: LedgerEvent = {
      type: 'QuotaDefined',
      data: { name: 'best-effort', spec: { hard: { pods: '3' }, scopes: ['BestEffort'] } },
    };
    expect(unchargedOf([scoped], admitList({ pods: '1' }))).toEqual([
      'pods: only scoped quotas limit this resource in namespace "team-a" (quota "best-effort"), and a resource list matches no scope, so nothing is charged for it',
    ]);
  });

  it('suggests another spelling a quota limits, and leaves zero quantities alone', () => {
    expect(unchargedOf([quota({ 'requests.cpu': '2' })], admitList({ cpu: '1', memory: '0' }))).toEqual([
      'cpu: no quota covering namespace "team-a" limits this resource, so nothing is charged for it (did you mean requests.cpu?)',
    ]);
  });

  it('warns a dry run and a repeated request too, but never a denial, an object, or where ResourceQuota is off', () => {
    const events = [quota({ pods: '1' })];
    expect(unchargedOf(events, admitList({ pod: '1' }, { dryRun: true }))).toHaveLength(1);
    const stored = {
      id: '7',
      result: { allowed: true, code: 200, dryRun: false, reservationId: 'r-list', charged: { pod: '1' } },
      digest: undefined,
    } as const;
    const repeated = decided(events, admitList({ pod: '1' }, { requestKey: 'rest:k' }), answered('rest:k', stored));
    expect(repeated.answer).toMatchObject({
      kind: 'Repeated',
      result: stored.result,
      uncharged: [expect.stringMatching(/^pod: .*did you mean pods\?/)],
    });
    expect(unchargedOf([quota({ pods: '0' })], admitList({ pods: '1', pod: '1' }))).toBeUndefined();
    expect(unchargedOf(events, admitPod(pod('web', '100m')))).toBeUndefined();
    expect(unchargedOf(events, admitList({ pod: '1' }, { plugins: ['LimitRanger'] }))).toBeUndefined();
  });

  it('keeps the result as it was: what the decisions log stores', () => {
    const { answer } = decided([quota({ pods: '5' })], admitList({ pod: '1' }));
    expect(answer.kind === 'Decided' && answer.result).toEqual({
      allowed: true,
      code: 200,
      dryRun: false,
      reservationId: 'r-list',
      charged: { pod: '1' },
    });
  });
});

describe('decide: RemoveLimitRange', () => {
  it('removes a limit range that exists, and answers NotFound for one that does not', () => {
    const defined: LedgerEvent = { type: 'LimitRangeDefined', data: { name: 'defaults', spec: { limits: [] } } };
    expect(given([defined]).when({ type: 'RemoveLimitRange', name: 'defaults' })).toEqual({
      events: [{ type: 'LimitRangeRemoved', data: { name: 'defaults' } }],
      answer: { kind: 'Removed' },
    });
    expect(given([defined]).when({ type: 'RemoveLimitRange', name: 'x' }).answer).toMatchObject({ kind: 'Refused', code: 'NotFound' });
  });
});

describe('reservationsNeededBy', () => {
  it('says a quota definition (or a shared quota applied) needs every live reservation, a commit, termination or release the one it names, the rest none', () => {
    expect(eventTypesNeeding('all').sort()).toEqual(['QuotaChanged', 'QuotaDefined', 'SharedQuotaApplied']);
    expect(eventTypesNeeding('named').sort()).toEqual(['Committed', 'Released', 'Terminated']);
    expect(reservationsNeededBy('Reserved')).toBe('none');
    expect(reservationsNeededBy('SomethingNewer')).toBe('all');
  });
});
