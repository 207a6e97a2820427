import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { evolve, fold, type NamespaceState } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import { admitObject } from './admit.js';
import type { AdmitObject } from './commands.js';
import { emptyFacts } from './facts.js';

const T0 = Date.UTC(2026, 0, 1);
const PODS = { group: '', resource: 'pods' };

/** An object's admission as the namespace decider makes it, on this state (every live reservation of the object loaded). */
const decideOn = (command: AdmitObject, state: NamespaceState) => admitObject(command, emptyFacts('team-a', T0, state));

const append = (state: NamespaceState, event: LedgerEvent): NamespaceState =>
  evolve(state, { ...event, version: state.version + 1, at: T0 + state.version + 1 });

const pod = (name: string, cpu: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'team-a', uid: `uid-${name}`, resourceVersion: '5' },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
});

const create = (object: Pod): AdmitObject => ({
  request: { operation: 'CREATE', groupResource: PODS, namespace: 'team-a', name: object.metadata?.name ?? '', object },
  reservationId: `res-${object.metadata?.name}`,
  type: 'AdmitObject',
  dryRun: false,
});

const withQuota = (hard: Record<string, string>): NamespaceState =>
  fold([{ type: 'QuotaDefined', data: { name: 'compute', spec: { hard } }, version: 1, at: T0 }]);

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
  const resize = (object: Pod): AdmitObject => ({
    request: {
      operation: 'UPDATE',
      groupResource: PODS,
      subresource: 'resize',
      namespace: 'team-a',
      name: 'done',
      object,
      oldObject: finished,
    },
    reservationId: 'resize',
    type: 'AdmitObject',
    dryRun: false,
  });
  const terminated = (): NamespaceState => {
    const state = withQuota({ 'requests.cpu': '3', 'limits.cpu': '2', pods: '3' });
    const created = decideOn(create(running), state);
    if (!created.allowed || !created.reservation) throw new Error('the pod should be admitted');
    const events: LedgerEvent[] = [
      created.reservation,
      { type: 'Committed', data: { reservationId: 'res-done' } },
      { type: 'Terminated', data: { reservationId: 'res-done', reason: 'Succeeded', usage: { 'count/pods': '1' } } },
    ];
    return events.reduce(append, state);
  };

  it('is allowed and charges nothing when the request shows it terminal too, as Kubernetes', () => {
    const decision = decideOn(resize(resized('Succeeded')), terminated());
    expect(decision).toMatchObject({ allowed: true });
    if (decision.allowed) expect(decision.reservation).toBeUndefined();
  });

  it('is charged as a running pod when the request shows it alive again', () => {
    expect(decideOn(resize(resized('Running')), terminated())).toMatchObject({ allowed: false, code: 403, stage: 'ResourceQuota' });
  });
});
