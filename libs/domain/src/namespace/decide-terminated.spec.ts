import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { evolve, fold, type NamespaceState } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import { admissionViewOf, decideAdmission, type Admit } from './admission.js';

const T0 = Date.UTC(2026, 0, 1);
const PODS = { group: '', resource: 'pods' };

const append = (state: NamespaceState, event: LedgerEvent): NamespaceState => evolve(state, { ...event, version: state.version + 1, at: T0 + state.version + 1 });

const pod = (name: string, cpu: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', uid: `uid-${name}`, resourceVersion: '5' },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
});

const create = (object: Pod): Admit => ({
  request: { operation: 'CREATE', groupResource: PODS, namespace: 'team-a', name: object.metadata?.name ?? '', object },
  reservationId: `res-${object.metadata?.name}`,
  now: T0,
});

const withQuota = (hard: Record<string, string>): NamespaceState => fold([{ type: 'QuotaDefined', data: { name: 'compute', spec: { hard } }, version: 1, at: T0 }]);

describe('a resize of a pod the listing found terminal (test/kubernetes differential, seed 7)', () => {
  // kubectl create a pod with limits.cpu=1500m; its phase becomes Succeeded and the reconciler's
  // listing terminates its reservation; kubectl patch --subresource=resize to 4500m. Kubernetes
  // allows it (a terminal pod is charged its object count only, so the resize adds nothing).
  const running = pod('done', '1500m');
  const finished: Pod = { ...running, status: { phase: 'Succeeded' } };
  const resized = (phase: 'Succeeded' | 'Running'): Pod => ({
    ...finished,
    spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '4500m' }, limits: { cpu: '4500m' } } }] },
    status: { phase },
  });
  const resize = (object: Pod): Admit => ({
    request: { operation: 'UPDATE', groupResource: PODS, subresource: 'resize', namespace: 'team-a', name: 'done', object, oldObject: finished },
    reservationId: 'resize',
    now: T0,
  });
  const terminated = (): NamespaceState => {
    const state = withQuota({ 'requests.cpu': '3', 'limits.cpu': '2', pods: '3' });
    const created = decideAdmission(create(running), admissionViewOf(state));
    if (!created.allowed || !created.reservation) throw new Error('the pod should be admitted');
    const events: LedgerEvent[] = [
      created.reservation,
      { type: 'Committed', data: { reservationId: 'res-done' } },
      { type: 'Terminated', data: { reservationId: 'res-done', reason: 'Succeeded', usage: { 'count/pods': '1' } } },
    ];
    return events.reduce(append, state);
  };

  it('is allowed and charges nothing when the request shows it terminal too, as Kubernetes', () => {
    const decision = decideAdmission(resize(resized('Succeeded')), admissionViewOf(terminated(), 'uid-done'));
    expect(decision).toMatchObject({ allowed: true });
    if (decision.allowed) expect(decision.reservation).toBeUndefined();
  });

  it('is charged as a running pod when the request shows it alive again', () => {
    expect(decideAdmission(resize(resized('Running')), admissionViewOf(terminated(), 'uid-done'))).toMatchObject({ allowed: false, code: 403, stage: 'ResourceQuota' });
  });
});
