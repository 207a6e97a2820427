import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LedgerEvent, RecordedEvent } from '../events/events.js';
import { evolve, fold, initialState, type NamespaceState } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import { admissionViewOf, decideAdmission, type Admit } from './decide.js';
import { decideCommit } from './lifecycle.js';

const T0 = Date.UTC(2026, 0, 1);
const PODS = { group: '', resource: 'pods' };

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

const create = (object: Pod, id = `res-${object.metadata?.name}`): Admit => ({
  request: { operation: 'CREATE', groupResource: PODS, namespace: 'team-a', name: object.metadata?.name ?? '', object },
  reservationId: id,
  now: T0,
});

const withQuota = (hard: Record<string, string>, extra: LedgerEvent[] = []): NamespaceState =>
  fold(recordAll([{ type: 'QuotaDefined', data: { name: 'compute', spec: { hard } } }, ...extra]));

const stored = <T extends { metadata: object }>(o: T): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: '5' } });

describe('decideAdmission', () => {
  it('admits a pod within quota and reserves its whole usage, keyed by its uid', () => {
    const state = withQuota({ 'requests.cpu': '1', pods: '2' });
    const decision = decideAdmission(create(pod('web', { cpu: '500m', memory: '128Mi' })), admissionViewOf(state));
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
    const first = decideAdmission(create(pod('a', { cpu: '600m' })), admissionViewOf(state));
    if (!first.allowed || !first.reservation) throw new Error('first pod should be admitted');
    const after = append(state, first.reservation);
    const second = decideAdmission(create(pod('b', { cpu: '600m' })), admissionViewOf(after));
    expect(second).toMatchObject({
      allowed: false,
      code: 403,
      stage: 'ResourceQuota',
      message: 'pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1',
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
          data: { name: 'defaults', spec: { limits: [{ type: 'Container', default: { memory: '512Mi' }, defaultRequest: { memory: '256Mi' } }] } },
        },
      ]),
    );
    const bare: Pod = { kind: 'Pod', metadata: { name: 'bare', uid: 'u1' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } };
    const decision = decideAdmission(create(bare), admissionViewOf(state));
    expect(decision.allowed).toBe(true);
    if (!decision.allowed) return;
    expect(decision.patch.length).toBeGreaterThan(0);
    expect(decision.reservation?.data.charged).toMatchObject({ 'limits.memory': '512Mi', 'requests.memory': '256Mi' });
  });

  it('a LimitRange violation is refused before quota is looked at', () => {
    const state = fold(
      recordAll([{ type: 'LimitRangeDefined', data: { name: 'caps', spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } } }]),
    );
    const decision = decideAdmission(create(pod('big', { cpu: '2' })), admissionViewOf(state));
    expect(decision).toMatchObject({
      allowed: false,
      code: 403,
      stage: 'LimitRanger',
      message: 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
    });
  });

  it('reserves a pod in a namespace without quota, so a quota created later counts it', () => {
    const decision = decideAdmission(create(pod('early', { cpu: '1' })), admissionViewOf(initialState()));
    if (!decision.allowed || !decision.reservation) throw new Error('expected a reservation');
    const later = append(append(initialState(), decision.reservation), { type: 'QuotaDefined', data: { name: 'q', spec: { hard: { 'requests.cpu': '4' } } } });
    expect(Resources.canonicalResourceList(later.used.get('q') ?? {})).toEqual({ 'requests.cpu': '1' });
  });

  it('DELETE is always allowed and reserves nothing', () => {
    const decision = decideAdmission(
      { request: { operation: 'DELETE', groupResource: PODS, namespace: 'team-a', oldObject: pod('x', { cpu: '1' }) }, reservationId: 'r', now: T0 },
      admissionViewOf(withQuota({ 'requests.cpu': '0' })),
    );
    expect(decision).toEqual({ allowed: true, patch: [], charges: [] });
  });

  it('an update of a service charges only its increase and supersedes the object’s reservation', () => {
    const svc = (type: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', uid: 'uid-s' }, spec: { type, ports: [{ port: 80 }] } });
    const state = withQuota({ 'services.loadbalancers': '1' });
    const created = decideAdmission(
      { request: { operation: 'CREATE', groupResource: { group: '', resource: 'services' }, namespace: 'team-a', object: svc('ClusterIP') }, reservationId: 'r1', now: T0 },
      admissionViewOf(state),
    );
    if (!created.allowed || !created.reservation) throw new Error('expected a reservation');
    const after = append(state, created.reservation);
    const updated = decideAdmission(
      {
        request: { operation: 'UPDATE', groupResource: { group: '', resource: 'services' }, namespace: 'team-a', object: svc('LoadBalancer'), oldObject: stored(svc('ClusterIP')) },
        reservationId: 'r2',
        now: T0,
      },
      admissionViewOf(after, 'uid-s'),
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
    const svc = (type: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', uid: 'uid-s' }, spec: { type, ports: [{ port: 80 }] } });
    const updated = decideAdmission(
      {
        request: { operation: 'UPDATE', groupResource: { group: '', resource: 'services' }, namespace: 'team-a', object: svc('LoadBalancer'), oldObject: svc('ClusterIP') },
        reservationId: 'r2',
        now: T0,
      },
      admissionViewOf(withQuota({ 'services.loadbalancers': '1' })),
    );
    if (!updated.allowed) throw new Error(updated.message);
    expect(updated.reservation?.data.charged).toMatchObject({ services: '1', 'services.loadbalancers': '1' });
  });

  it('dates a REST reservation’s expiry in RFC 3339', () => {
    const decision = decideAdmission({ ...create(pod('t', { cpu: '1' })), expiresAt: T0 + 60_000 }, admissionViewOf(initialState()));
    if (!decision.allowed) throw new Error('expected admission');
    expect(decision.reservation?.data.expiresAt).toBe('2026-01-01T00:01:00.000Z');
  });
});

describe('decideAdmission laws', () => {
  const podArb = fc.record({ cpuMilli: fc.integer({ min: 1, max: 1500 }), memMi: fc.integer({ min: 1, max: 700 }), terminating: fc.boolean() });
  const quotaArb = fc.record({ cpuMilli: fc.integer({ min: 0, max: 4000 }), memMi: fc.integer({ min: 0, max: 2048 }), pods: fc.integer({ min: 0, max: 8 }) });

  it('never admits a request that takes any quota over hard, and its reported usage is the fold’s', () => {
    fc.assert(
      fc.property(quotaArb, quotaArb, fc.array(podArb, { maxLength: 25 }), (all, longRunning, pods) => {
        let state = fold(
          recordAll([
            { type: 'QuotaDefined', data: { name: 'all', spec: { hard: { 'requests.cpu': `${all.cpuMilli}m`, 'requests.memory': `${all.memMi}Mi`, pods: `${all.pods}` } } } },
            { type: 'QuotaDefined', data: { name: 'long', spec: { hard: { 'limits.cpu': `${longRunning.cpuMilli}m`, pods: `${longRunning.pods}` }, scopes: ['NotTerminating'] } } },
          ]),
        );
        pods.forEach((p, i) => {
          const object: Pod = {
            kind: 'Pod',
            metadata: { name: `p${i}`, uid: `u${i}` },
            spec: {
              ...(p.terminating ? { activeDeadlineSeconds: 60 } : {}),
              containers: [{ name: 'c', resources: { requests: { cpu: `${p.cpuMilli}m`, memory: `${p.memMi}Mi` }, limits: { cpu: `${p.cpuMilli}m`, memory: `${p.memMi}Mi` } } }],
            },
          };
          const decision = decideAdmission(create(object, `r${i}`), admissionViewOf(state));
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

  type Step = { kind: 'create'; cpuMilli: number; terminating: boolean } | { kind: 'flip'; pick: number } | { kind: 'commit'; pick: number };
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
      fc.property(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 3000 }), fc.array(stepArb, { maxLength: 30 }), (shortHard, longHard, steps) => {
        let state = fold(
          recordAll([
            { type: 'QuotaDefined', data: { name: 'short', spec: { hard: { 'requests.cpu': `${shortHard}m` }, scopes: ['Terminating'] } } },
            { type: 'QuotaDefined', data: { name: 'long', spec: { hard: { 'requests.cpu': `${longHard}m` }, scopes: ['NotTerminating'] } } },
            { type: 'QuotaDefined', data: { name: 'all', spec: { hard: { pods: '100' } } } },
          ]),
        );
        const pods: { pod: Pod; cpuMilli: number; terminating: boolean; version: number }[] = [];
        let next = 0;
        const admit = (command: Admit, uid?: string) => {
          const decision = decideAdmission(command, admissionViewOf(state, uid));
          if (!decision.allowed || !decision.reservation) return false;
          state = append(state, decision.reservation);
          for (const charge of decision.charges) {
            expect(Resources.equals(charge.used, Resources.mask(state.used.get(charge.quota) ?? {}, Object.keys(charge.used)))).toBe(true);
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
            const command: Admit = {
              request: { operation: 'UPDATE', groupResource: PODS, namespace: 'team-a', name: `p${i}`, object: updated, oldObject: entry.pod },
              reservationId: `r${next++}`,
              now: T0,
            };
            if (admit(command, `u${i}`)) Object.assign(entry, { pod: updated, terminating: !entry.terminating, version: entry.version + 1 });
          } else if (step.kind === 'commit') {
            const pending = [...state.reservations.values()].filter((r) => r.status === 'reserved');
            const chosen = pending[step.pick % Math.max(pending.length, 1)];
            if (!chosen) continue;
            const outcome = decideCommit(state, chosen.id, T0);
            if (outcome.kind !== 'Commit') throw new Error(`a pending reservation must commit, got ${outcome.kind}`);
            for (const event of outcome.events) state = append(state, event);
          }
          for (const quota of state.quotas.values()) {
            expect(Resources.lessThanOrEqual(state.used.get(quota.name) ?? {}, quota.hard).ok).toBe(true);
          }
        }
      }),
    );
  });
});
