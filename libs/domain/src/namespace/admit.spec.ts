import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LedgerEvent, RecordedEvent } from '../events/events.js';
import { evolve, fold, initialState, type NamespaceState } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import { admitObject } from './admit.js';
import type { AdmitObject } from './commands.js';
import { emptyFacts } from './facts.js';
import { decideCommit, decideRelease } from './lifecycle.js';
import { LIVE_PER_OBJECT_MAX } from './stored.js';

const T0 = Date.UTC(2026, 0, 1);
const PODS = { group: '', resource: 'pods' };

/** An object's admission as the namespace decider makes it, on this state (every live reservation of the object loaded). */
const decideOn = (command: AdmitObject, state: NamespaceState) => admitObject(command, emptyFacts('team-a', T0, state));

function recordAll(events: readonly LedgerEvent[]): RecordedEvent[] {
  return events.map((event, i) => ({ ...event, version: i + 1, at: T0 + i }));
}

const append = (state: NamespaceState, event: LedgerEvent): NamespaceState =>
  evolve(state, { ...event, version: state.version + 1, at: T0 + state.version + 1 });

const pod = (name: string, requests: Record<string, string>, limits: Record<string, string> = requests): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests, limits } }] },
});

const create = (object: Pod, id = `res-${object.metadata?.name}`): AdmitObject => ({
  request: { operation: 'CREATE', groupResource: PODS, namespace: 'team-a', name: object.metadata?.name ?? '', object },
  reservationId: id,
  type: 'AdmitObject',
  dryRun: false,
});

const withQuota = (hard: Record<string, string>, extra: LedgerEvent[] = []): NamespaceState =>
  fold(recordAll([{ type: 'QuotaDefined', data: { name: 'compute', spec: { hard } } }, ...extra]));

const stored = <T extends { metadata: object }>(o: T): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: '5' } });

describe('admitObject', () => {
  it('admits a pod within quota and reserves its whole usage, keyed by its uid', () => {
    const state = withQuota({ 'requests.cpu': '1', pods: '2' });
    const decision = decideOn(create(pod('web', { cpu: '500m', memory: '128Mi' })), state);
    expect(decision.allowed).toBe(true);
    if (!decision.allowed) return;
    expect(decision.reservation?.data).toMatchObject({
      reservationId: 'res-web',
      operation: 'CREATE',
      object: { group: '', resource: 'pods', kind: 'Pod', name: 'web', uid: 'uid-web' },
      charged: { pods: '1', 'count/pods': '1', 'requests.cpu': '500m', 'requests.memory': '128Mi', 'limits.cpu': '500m' },
    });
    expect(Resources.canonicalResourceList(decision.charges[0]?.used ?? {})).toEqual({ 'requests.cpu': '500m', pods: '1' });
  });

  it('denies a pod whose requests.cpu would exceed the quota, with Kubernetes’ message and a structured denial', () => {
    const state = withQuota({ 'requests.cpu': '1' });
    const first = decideOn(create(pod('a', { cpu: '600m' })), state);
    if (!first.allowed || !first.reservation) throw new Error('first pod should be admitted');
    const after = append(state, first.reservation);
    const second = decideOn(create(pod('b', { cpu: '600m' })), after);
    expect(second).toMatchObject({
      allowed: false,
      code: 403,
      stage: 'ResourceQuota',
      message:
        'pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1',
    });
    if (second.allowed) return;
    expect(second.denial?.kind).toBe('Exceeded');
  });

  it('applies LimitRange defaults before the quota check and answers them as a JSONPatch', () => {
    const state = fold(
      recordAll([
        { type: 'QuotaDefined', data: { name: 'compute', spec: { hard: { 'limits.memory': '1Gi' } } } },
        {
          type: 'LimitRangeDefined',
          data: {
            name: 'defaults',
            spec: { limits: [{ type: 'Container', default: { memory: '512Mi' }, defaultRequest: { memory: '256Mi' } }] },
          },
        },
      ]),
    );
    const bare: Pod = { kind: 'Pod', metadata: { name: 'bare', uid: 'u1' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } };
    const decision = decideOn(create(bare), state);
    expect(decision.allowed).toBe(true);
    if (!decision.allowed) return;
    expect(decision.patch.length).toBeGreaterThan(0);
    expect(decision.reservation?.data.charged).toMatchObject({ 'limits.memory': '512Mi', 'requests.memory': '256Mi' });
  });

  it('a LimitRange violation is refused before quota is looked at', () => {
    const state = fold(
      recordAll([{ type: 'LimitRangeDefined', data: { name: 'caps', spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } } }]),
    );
    const decision = decideOn(create(pod('big', { cpu: '2' })), state);
    expect(decision).toMatchObject({
      allowed: false,
      code: 403,
      stage: 'LimitRanger',
      message: 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
    });
  });

  it('reserves a pod in a namespace without quota, so a quota created later counts it', () => {
    const decision = decideOn(create(pod('early', { cpu: '1' })), initialState());
    if (!decision.allowed || !decision.reservation) throw new Error('expected a reservation');
    const later = append(append(initialState(), decision.reservation), {
      type: 'QuotaDefined',
      data: { name: 'q', spec: { hard: { 'requests.cpu': '4' } } },
    });
    expect(Resources.canonicalResourceList(later.used.get('q') ?? {})).toEqual({ 'requests.cpu': '1' });
  });

  it.each<{ kind: string; resource: { group: string; resource: string }; hard: Record<string, string>; reserved: boolean }>([
    { kind: 'a ConfigMap (one of CHARGED_KINDS)', resource: { group: '', resource: 'configmaps' }, hard: { pods: '4' }, reserved: true },
    { kind: 'a Widget no quota counts', resource: { group: 'example.com', resource: 'widgets' }, hard: { pods: '4' }, reserved: false },
    {
      kind: 'a Widget a quota counts',
      resource: { group: 'example.com', resource: 'widgets' },
      hard: { 'count/widgets.example.com': '2' },
      reserved: true,
    },
    { kind: 'a Role no quota counts', resource: { group: 'rbac.authorization.k8s.io', resource: 'roles' }, hard: {}, reserved: false },
  ])('reserves $kind: $reserved (a kind outside CHARGED_KINDS only where a quota counts it)', ({ resource, hard, reserved }) => {
    const object = { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x', namespace: 'team-a', uid: 'uid-x' } };
    const decision = decideOn(
      {
        request: { operation: 'CREATE', groupResource: resource, namespace: 'team-a', name: 'x', object },
        reservationId: 'r',
        type: 'AdmitObject',
        dryRun: false,
      },
      withQuota(hard),
    );
    expect(decision.allowed).toBe(true);
    expect(decision.allowed && decision.reservation !== undefined).toBe(reserved);
  });

  it('DELETE is always allowed and reserves nothing', () => {
    const decision = decideOn(
      {
        request: { operation: 'DELETE', groupResource: PODS, namespace: 'team-a', oldObject: pod('x', { cpu: '1' }) },
        reservationId: 'r',
        type: 'AdmitObject',
        dryRun: false,
      },
      withQuota({ 'requests.cpu': '0' }),
    );
    expect(decision).toEqual({ allowed: true, patch: [], charges: [] });
  });

  it('an update of a service charges only its increase and supersedes the object’s reservation', () => {
    const svc = (type: string) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', uid: 'uid-s' },
      spec: { type, ports: [{ port: 80 }] },
    });
    const state = withQuota({ 'services.loadbalancers': '1' });
    const created = decideOn(
      {
        request: { operation: 'CREATE', groupResource: { group: '', resource: 'services' }, namespace: 'team-a', object: svc('ClusterIP') },
        reservationId: 'r1',
        type: 'AdmitObject',
        dryRun: false,
      },
      state,
    );
    if (!created.allowed || !created.reservation) throw new Error('expected a reservation');
    const after = append(state, created.reservation);
    const updated = decideOn(
      {
        request: {
          operation: 'UPDATE',
          groupResource: { group: '', resource: 'services' },
          namespace: 'team-a',
          object: svc('LoadBalancer'),
          oldObject: stored(svc('ClusterIP')),
        },
        reservationId: 'r2',
        type: 'AdmitObject',
        dryRun: false,
      },
      after,
    );
    if (!updated.allowed) throw new Error(updated.message);
    expect(updated.reservation?.data).toMatchObject({
      operation: 'UPDATE',
      supersedes: 'r1',
      charged: { services: '0', 'services.loadbalancers': '1' },
      objectUsage: { services: '1', 'services.loadbalancers': '1' },
    });
  });

  it('an update whose old object has no resourceVersion (create-on-update) is charged its whole usage, as the quota check charges it', () => {
    const svc = (type: string) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', uid: 'uid-s' },
      spec: { type, ports: [{ port: 80 }] },
    });
    const updated = decideOn(
      {
        request: {
          operation: 'UPDATE',
          groupResource: { group: '', resource: 'services' },
          namespace: 'team-a',
          object: svc('LoadBalancer'),
          oldObject: svc('ClusterIP'),
        },
        reservationId: 'r2',
        type: 'AdmitObject',
        dryRun: false,
      },
      withQuota({ 'services.loadbalancers': '1' }),
    );
    if (!updated.allowed) throw new Error(updated.message);
    expect(updated.reservation?.data.charged).toMatchObject({ services: '1', 'services.loadbalancers': '1' });
  });

  it('dates a REST reservation’s expiry in RFC 3339', () => {
    const decision = decideOn({ ...create(pod('t', { cpu: '1' })), ttlMs: 60_000 }, initialState());
    if (!decision.allowed) throw new Error('expected admission');
    expect(decision.reservation?.data.expiresAt).toBe('2026-01-01T00:01:00.000Z');
  });
});

describe('a change of an object while another of it waits to be confirmed', () => {
  const ox = (cpu: string, resourceVersion: string): Pod => ({
    ...pod('ox', { cpu }, {}),
    metadata: { name: 'ox', namespace: 'team-a', uid: 'uid-ox', resourceVersion },
  });
  const resize = (to: Pod, from: Pod, id: string, source: AdmitObject['source'] = 'webhook'): AdmitObject => ({
    request: {
      operation: 'UPDATE',
      groupResource: PODS,
      subresource: 'resize',
      namespace: 'team-a',
      name: 'ox',
      object: to,
      oldObject: from,
    },
    reservationId: id,
    type: 'AdmitObject',
    dryRun: false,
    ...(source ? { source } : {}),
  });
  /** Pod ox created at 500m and committed, then resized down to 300m (waiting to be confirmed). */
  function resizedDown(): NamespaceState {
    let state = withQuota({ 'requests.cpu': '2' });
    for (const admit of [
      { ...create(ox('500m', '1'), 'c'), source: 'webhook' as const },
      resize(ox('300m', '10'), ox('500m', '10'), 'down'),
    ]) {
      const decision = decideOn(admit, state);
      if (!decision.allowed || !decision.reservation) throw new Error('fits');
      state = append(state, decision.reservation);
      if (admit.reservationId === 'c') state = append(state, { type: 'Committed', data: { reservationId: 'c' } });
    }
    return state;
  }

  it('records a resize back up to the settled size (the report: ox 500m, down to 300m, up to 500m before the first was confirmed)', () => {
    const up = decideOn(resize(ox('500m', '11'), ox('300m', '11'), 'up'), resizedDown());
    expect(up).toMatchObject({
      allowed: true,
      charges: [],
      reservation: {
        data: {
          operation: 'UPDATE',
          charged: { 'requests.cpu': '0' },
          objectUsage: { 'requests.cpu': '500m' },
          supersedes: 'down',
          oldResourceVersion: '11',
        },
      },
    });
    // Committing the resize down under it would charge 300m while the pod may be at 500m: refused.
    const state = append(resizedDown(), (up as { reservation: LedgerEvent }).reservation);
    expect(decideCommit(state, 'down', T0)).toEqual({ kind: 'Blocked', by: 'up' });
    expect(Resources.canonicalResourceList(state.used.get('compute') ?? {})).toEqual({ 'requests.cpu': '500m' });
  });

  it('records a repeat of the waiting change too: it is a request of its own, which may be written when the first is not', () => {
    const again = decideOn(resize(ox('300m', '10'), ox('500m', '10'), 'again'), resizedDown());
    expect(again).toMatchObject({
      allowed: true,
      reservation: { data: { operation: 'UPDATE', objectUsage: { 'requests.cpu': '300m' }, supersedes: 'down' } },
    });
  });

  it("records the resourceVersion a change was read at from the API server's review only, never from a REST call's oldObject", () => {
    const fresh = withQuota({ 'requests.cpu': '2' });
    const review = decideOn(resize(ox('400m', '11'), ox('300m', '11'), 'review', 'webhook'), fresh);
    const rest = decideOn(resize(ox('400m', '11'), ox('300m', '11'), 'rest', 'rest'), fresh);
    expect(review).toMatchObject({ allowed: true, reservation: { data: { operation: 'UPDATE', oldResourceVersion: '11' } } });
    expect(rest).toMatchObject({ allowed: true, reservation: { data: { operation: 'UPDATE' } } });
    expect((rest as { reservation: { data: object } }).reservation.data).not.toHaveProperty('oldResourceVersion');
  });
});

describe('admitObject laws', () => {
  const podArb = fc.record({
    cpuMilli: fc.integer({ min: 1, max: 1500 }),
    memMi: fc.integer({ min: 1, max: 700 }),
    terminating: fc.boolean(),
  });
  const quotaArb = fc.record({
    cpuMilli: fc.integer({ min: 0, max: 4000 }),
    memMi: fc.integer({ min: 0, max: 2048 }),
    pods: fc.integer({ min: 0, max: 8 }),
  });

  it('never admits a request that takes any quota over hard, and its reported usage is the fold’s', () => {
    fc.assert(
      fc.property(quotaArb, quotaArb, fc.array(podArb, { maxLength: 25 }), (all, longRunning, pods) => {
        let state = fold(
          recordAll([
            {
              type: 'QuotaDefined',
              data: {
                name: 'all',
                spec: { hard: { 'requests.cpu': `${all.cpuMilli}m`, 'requests.memory': `${all.memMi}Mi`, pods: `${all.pods}` } },
              },
            },
            {
              type: 'QuotaDefined',
              data: {
                name: 'long',
                spec: { hard: { 'limits.cpu': `${longRunning.cpuMilli}m`, pods: `${longRunning.pods}` }, scopes: ['NotTerminating'] },
              },
            },
          ]),
        );
        pods.forEach((p, i) => {
          const object: Pod = {
            kind: 'Pod',
            metadata: { name: `p${i}`, uid: `u${i}` },
            spec: {
              ...(p.terminating ? { activeDeadlineSeconds: 60 } : {}),
              containers: [
                {
                  name: 'c',
                  resources: {
                    requests: { cpu: `${p.cpuMilli}m`, memory: `${p.memMi}Mi` },
                    limits: { cpu: `${p.cpuMilli}m`, memory: `${p.memMi}Mi` },
                  },
                },
              ],
            },
          };
          const decision = decideOn(create(object, `r${i}`), state);
          if (!decision.allowed || !decision.reservation) return;
          state = append(state, decision.reservation);
          for (const charge of decision.charges) {
            expect(Resources.equals(charge.used, Resources.mask(state.used.get(charge.quota) ?? {}, Object.keys(charge.used)))).toBe(true);
          }
        });
        for (const quota of state.quotas.values()) {
          expect(Resources.lessThanOrEqual(state.used.get(quota.name) ?? {}, quota.hard).ok).toBe(true);
        }
      }),
    );
  });

  type Step =
    { kind: 'create'; cpuMilli: number; terminating: boolean } | { kind: 'flip'; pick: number } | { kind: 'commit'; pick: number };
  const stepArb: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('create' as const), cpuMilli: fc.integer({ min: 1, max: 1200 }), terminating: fc.boolean() }),
    fc.record({ kind: fc.constant('flip' as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant('commit' as const), pick: fc.nat() }),
  );

  it('pods moving between Terminating and NotTerminating scopes: charges match the fold, never over hard', () => {
    const podOf = (i: number, cpuMilli: number, terminating: boolean, resourceVersion: number): Pod => ({
      kind: 'Pod',
      metadata: { name: `p${i}`, uid: `u${i}`, resourceVersion: `${resourceVersion}` },
      spec: {
        ...(terminating ? { activeDeadlineSeconds: 30 } : {}),
        containers: [{ name: 'c', resources: { requests: { cpu: `${cpuMilli}m` }, limits: { cpu: `${cpuMilli}m` } } }],
      },
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.array(stepArb, { maxLength: 30 }),
        (shortHard, longHard, steps) => {
          let state = fold(
            recordAll([
              {
                type: 'QuotaDefined',
                data: { name: 'short', spec: { hard: { 'requests.cpu': `${shortHard}m` }, scopes: ['Terminating'] } },
              },
              {
                type: 'QuotaDefined',
                data: { name: 'long', spec: { hard: { 'requests.cpu': `${longHard}m` }, scopes: ['NotTerminating'] } },
              },
              { type: 'QuotaDefined', data: { name: 'all', spec: { hard: { pods: '100' } } } },
            ]),
          );
          const pods: { pod: Pod; cpuMilli: number; terminating: boolean; version: number }[] = [];
          let next = 0;
          const admit = (command: AdmitObject) => {
            const decision = decideOn(command, state);
            if (!decision.allowed || !decision.reservation) return false;
            state = append(state, decision.reservation);
            for (const charge of decision.charges) {
              expect(Resources.equals(charge.used, Resources.mask(state.used.get(charge.quota) ?? {}, Object.keys(charge.used)))).toBe(
                true,
              );
            }
            return true;
          };
          for (const step of steps) {
            if (step.kind === 'create') {
              const i = pods.length;
              const pod = podOf(i, step.cpuMilli, step.terminating, 1);
              if (admit(create(pod, `r${next++}`))) pods.push({ pod, cpuMilli: step.cpuMilli, terminating: step.terminating, version: 1 });
            } else if (step.kind === 'flip' && pods.length > 0) {
              const entry = pods[step.pick % pods.length]!;
              const i = Number(entry.pod.metadata?.name?.slice(1));
              const updated = podOf(i, entry.cpuMilli, !entry.terminating, entry.version + 1);
              const command: AdmitObject = {
                request: {
                  operation: 'UPDATE',
                  groupResource: PODS,
                  namespace: 'team-a',
                  name: `p${i}`,
                  object: updated,
                  oldObject: entry.pod,
                },
                reservationId: `r${next++}`,
                type: 'AdmitObject',
                dryRun: false,
              };
              if (admit(command)) Object.assign(entry, { pod: updated, terminating: !entry.terminating, version: entry.version + 1 });
            } else if (step.kind === 'commit') {
              const pending = [...state.reservations.values()].filter((r) => r.status === 'reserved');
              const chosen = pending[step.pick % Math.max(pending.length, 1)];
              if (!chosen) continue;
              const outcome = decideCommit(state, chosen.id, T0);
              // A flip committed under a later one waiting would charge that one less than it asks.
              if (outcome.kind === 'Blocked') continue;
              if (outcome.kind !== 'Commit') throw new Error(`a pending reservation must commit, got ${outcome.kind}`);
              for (const event of outcome.events) state = append(state, event);
            }
            for (const quota of state.quotas.values()) {
              expect(Resources.lessThanOrEqual(state.used.get(quota.name) ?? {}, quota.hard).ok).toBe(true);
            }
          }
        },
      ),
    );
  });
});

describe('what the ledger holds for an object, not what the request claims (an UPDATE is charged over what the ledger charged)', () => {
  const PVCS = { group: '', resource: 'persistentvolumeclaims' };
  const pvc = (uid: string, size: string, resourceVersion?: string) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `claim-${uid}`, namespace: 'team-a', uid, ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
  });
  const storage = (hard: string) => withQuota({ 'requests.storage': hard });
  const admitPvc = (
    state: NamespaceState,
    operation: 'CREATE' | 'UPDATE',
    object: ReturnType<typeof pvc>,
    id: string,
    oldObject?: ReturnType<typeof pvc>,
  ) =>
    decideOn(
      {
        request: { operation, groupResource: PVCS, namespace: 'team-a', object, ...(oldObject ? { oldObject } : {}) },
        reservationId: id,
        type: 'AdmitObject',
        dryRun: false,
      },
      state,
    );
  const used = (state: NamespaceState): string | undefined =>
    Resources.canonicalResourceList(state.used.get('compute') ?? {})['requests.storage'];
  const created = (hard: string, size: string, uid = 'X'): NamespaceState => {
    const state = storage(hard);
    const decision = admitPvc(state, 'CREATE', pvc(uid, size), `c-${uid}`);
    if (!decision.allowed || !decision.reservation) throw new Error('the first claim fits');
    return append(state, decision.reservation);
  };

  it('denies the reported UPDATE: 5Gi reserved, then 100Gi with an oldObject that claims 100Gi was stored already', () => {
    const state = created('10Gi', '5Gi');
    const update = admitPvc(state, 'UPDATE', pvc('X', '100Gi', '3'), 'u1', pvc('X', '100Gi', '2'));
    expect(update).toMatchObject({
      allowed: false,
      code: 403,
      message:
        'persistentvolumeclaims "claim-X" is forbidden: exceeded quota: compute, requested: requests.storage=95Gi, used: requests.storage=5Gi, limited: requests.storage=10Gi',
    });
  });

  it('charges an UPDATE the increase over what the ledger holds, whatever oldObject says, and commits it at its new size within hard', () => {
    const state = created('10Gi', '5Gi');
    for (const claimed of [pvc('X', '1Gi', '2'), pvc('X', '8Gi', '2'), pvc('X', '500Gi', '2'), pvc('X', '5Gi')]) {
      const update = admitPvc(state, 'UPDATE', pvc('X', '8Gi', '3'), 'u1', claimed);
      if (!update.allowed || !update.reservation) throw new Error('a 3Gi increase fits');
      expect(update.reservation.data).toMatchObject({
        operation: 'UPDATE',
        charged: { 'requests.storage': '3Gi' },
        objectUsage: { 'requests.storage': '8Gi' },
        supersedes: 'c-X',
      });
      const pending = append(state, update.reservation);
      expect(used(pending)).toBe('8Gi');
      const commit = decideCommit(pending, 'u1', T0);
      if (commit.kind !== 'Commit') throw new Error(commit.kind);
      expect(used(commit.events.reduce(append, pending))).toBe('8Gi');
    }
  });

  it('charges an UPDATE of an object the ledger does not hold in full (it will count in full once committed)', () => {
    const update = admitPvc(storage('10Gi'), 'UPDATE', pvc('Y', '8Gi', '3'), 'u1', pvc('Y', '8Gi', '2'));
    if (!update.allowed || !update.reservation) throw new Error('8Gi fits');
    expect(update.reservation.data.charged).toMatchObject({ persistentvolumeclaims: '1', 'requests.storage': '8Gi' });
    expect(update.reservation.data).not.toHaveProperty('supersedes');
    expect(admitPvc(storage('10Gi'), 'UPDATE', pvc('Y', '11Gi', '3'), 'u1', pvc('Y', '11Gi', '2')).allowed).toBe(false);
  });

  it('charges a second pending change against the settled state, not the first change, which may never happen', () => {
    let state = created('13Gi', '5Gi');
    const first = admitPvc(state, 'UPDATE', pvc('X', '8Gi', '3'), 'u1', pvc('X', '5Gi', '2'));
    if (!first.allowed || !first.reservation) throw new Error('fits');
    state = append(state, first.reservation);
    const second = admitPvc(state, 'UPDATE', pvc('X', '10Gi', '4'), 'u2', pvc('X', '8Gi', '3'));
    if (!second.allowed || !second.reservation) throw new Error('fits');
    expect(second.reservation.data).toMatchObject({ charged: { 'requests.storage': '5Gi' }, supersedes: 'u1' });
    state = append(state, second.reservation);
    // If the first change never happened the object went from 5Gi to 10Gi: still counted.
    const stale = decideRelease(state, 'u1', 'stale');
    if (stale.kind !== 'Release') throw new Error(stale.kind);
    expect(used(stale.events.reduce(append, state))).toBe('10Gi');
  });

  it('reserves nothing for an UPDATE that changes nothing the ledger counts', () => {
    const state = created('10Gi', '5Gi');
    const relabel = admitPvc(state, 'UPDATE', pvc('X', '5Gi', '3'), 'u1', pvc('X', '5Gi', '2'));
    expect(relabel).toMatchObject({ allowed: true, charges: [] });
    if (relabel.allowed) expect(relabel.reservation).toBeUndefined();
  });

  it('charges nothing, but records, an UPDATE to the settled state from an old object the ledger does not know (changed behind its back)', () => {
    // The old object is 1Gi: a change the webhook never saw (failing open) shrank it. The ledger
    // still charges over its own record (nothing here), but records the change, so that a listing
    // showing 1Gi while this one is being written does not measure the claim down to 1Gi.
    const state = created('10Gi', '5Gi');
    const relabel = admitPvc(state, 'UPDATE', pvc('X', '5Gi', '3'), 'u1', pvc('X', '1Gi', '2'));
    expect(relabel).toMatchObject({
      allowed: true,
      charges: [],
      reservation: { data: { operation: 'UPDATE', charged: { 'requests.storage': '0' }, objectUsage: { 'requests.storage': '5Gi' } } },
    });
  });

  it('charges the same CREATE of a known uid once, and refuses a different one with 409 instead of charging the old size', () => {
    const state = created('10Gi', '5Gi');
    const again = admitPvc(state, 'CREATE', pvc('X', '5Gi'), 'c2');
    expect(again).toMatchObject({ allowed: true, existing: { id: 'c-X' } });
    if (again.allowed) expect(again.reservation).toBeUndefined();
    const bigger = admitPvc(state, 'CREATE', pvc('X', '9Gi'), 'c3');
    expect(bigger).toMatchObject({ allowed: false, code: 409, stage: 'ResourceQuota' });
    if (!bigger.allowed)
      expect(bigger.message).toBe(
        'Operation cannot be fulfilled on persistentvolumeclaims "claim-X": the object (uid X) is already admitted (reservation c-X) with other usage; send an UPDATE to change it',
      );
  });

  it('refuses a request whose uid the ledger holds for an object of another resource', () => {
    const state = created('10Gi', '5Gi');
    const decision = decideOn(create({ ...pod('web', { cpu: '1' }), metadata: { name: 'web', uid: 'X' } }), state);
    expect(decision).toMatchObject({ allowed: false, code: 409 });
    if (!decision.allowed) expect(decision.message).toContain('the uid X belongs to persistentvolumeclaims "claim-X"');
  });

  it(`refuses more than ${LIVE_PER_OBJECT_MAX} live reservations of one object`, () => {
    let state = created('1000Gi', '1Gi');
    for (let i = 2; i <= LIVE_PER_OBJECT_MAX; i++) {
      const update = admitPvc(state, 'UPDATE', pvc('X', `${i}Gi`, `${i}`), `u${i}`, pvc('X', `${i - 1}Gi`, `${i - 1}`));
      if (!update.allowed || !update.reservation) throw new Error(`update ${i} fits`);
      state = append(state, update.reservation);
    }
    expect(admitPvc(state, 'UPDATE', pvc('X', '99Gi', '99'), 'u99', pvc('X', '1Gi', '1'))).toMatchObject({ allowed: false, code: 409 });
    // While changes wait, even one back to the settled size, or a repeat of the newest, is a state
    // the object may be in (it may be written when the others are not): recorded, so refused too.
    const newest = `${LIVE_PER_OBJECT_MAX}Gi`;
    expect(admitPvc(state, 'UPDATE', pvc('X', '1Gi', '99'), 'u100', pvc('X', newest, '98'))).toMatchObject({ allowed: false, code: 409 });
    expect(admitPvc(state, 'UPDATE', pvc('X', newest, '99'), 'u101', pvc('X', newest, '98'))).toMatchObject({ allowed: false, code: 409 });
  });

  it('never lets usage pass hard, whatever the old objects claim, in any order of creates, updates, commits and releases', () => {
    type Step =
      | { kind: 'create'; object: number; gi: number }
      | { kind: 'update'; object: number; gi: number; claimedGi: number; claimStored: boolean }
      | { kind: 'commit'; pick: number }
      | { kind: 'release'; pick: number; reason: 'cancelled' | 'stale' | 'deleted' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), object: fc.nat(2), gi: fc.integer({ min: 1, max: 12 }) }),
      fc.record({
        kind: fc.constant('update' as const),
        object: fc.nat(2),
        gi: fc.integer({ min: 1, max: 40 }),
        claimedGi: fc.integer({ min: 1, max: 40 }),
        claimStored: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('commit' as const), pick: fc.nat() }),
      fc.record({
        kind: fc.constant('release' as const),
        pick: fc.nat(),
        reason: fc.constantFrom('cancelled' as const, 'stale' as const, 'deleted' as const),
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.array(step, { maxLength: 40 }), (hardGi, steps) => {
        let state = storage(`${hardGi}Gi`);
        let next = 0;
        for (const s of steps) {
          if (s.kind === 'create' || s.kind === 'update') {
            const object = pvc(`o${s.object}`, `${s.gi}Gi`, s.kind === 'update' ? '9' : undefined);
            const old = s.kind === 'update' ? pvc(`o${s.object}`, `${s.claimedGi}Gi`, s.claimStored ? '8' : undefined) : undefined;
            const decision = admitPvc(state, s.kind === 'create' ? 'CREATE' : 'UPDATE', object, `r${next++}`, old);
            if (decision.allowed && decision.reservation) state = append(state, decision.reservation);
          } else {
            const live = [...state.reservations.values()].filter((r) => s.kind === 'release' || r.status === 'reserved');
            const chosen = live[s.pick % Math.max(live.length, 1)];
            if (!chosen) continue;
            const outcome = s.kind === 'commit' ? decideCommit(state, chosen.id, T0) : decideRelease(state, chosen.id, s.reason);
            if (outcome.kind === 'Commit' || outcome.kind === 'Release') state = outcome.events.reduce(append, state);
          }
          const quota = state.quotas.get('compute');
          expect(quota && Resources.lessThanOrEqual(state.used.get('compute') ?? {}, quota.hard).ok).toBe(true);
        }
      }),
      {
        numRuns: 1000,
        examples: [
          // Give the settled state up, fill the room it left, then confirm the change made on top of it.
          [
            10,
            [
              { kind: 'create', object: 0, gi: 5 },
              { kind: 'update', object: 0, gi: 8, claimedGi: 5, claimStored: true },
              { kind: 'release', pick: 0, reason: 'cancelled' },
              { kind: 'create', object: 1, gi: 7 },
              { kind: 'commit', pick: 0 },
            ],
          ],
        ],
      },
    );
  });
});
