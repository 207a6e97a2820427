import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../events/events.js';
import { fold } from '../events/fold.js';
import * as Resources from '../resources/resource-list.js';
import type { AdmissionView } from './decide.js';
import { decideResources, defaultPodForAdmission, groupResourceForKind } from './rest.js';

const view = (quotas: AdmissionView['quotas']): AdmissionView => ({ quotas, limitRanges: [] });
const list = (raw: Record<string, string>) => Resources.resourceList(raw);
const command = (resources: Record<string, string>) => ({
  namespace: 'ns',
  groupResource: { group: 'example.com', resource: 'widgets' },
  name: 'w1',
  resources: list(resources),
  reservationId: 'r1',
  now: 0,
});

describe('decideResources (a REST reservation of a plain resource list)', () => {
  it('charges unscoped quotas on the resources they limit, any resource name', () => {
    const decision = decideResources(command({ 'example.com/gpu': '2', 'requests.cpu': '1' }), view([{ name: 'gpus', spec: { hard: { 'example.com/gpu': '4' } }, used: list({ 'example.com/gpu': '1' }) }]));
    expect(decision.allowed).toBe(true);
    if (!decision.allowed) return;
    expect(decision.charges.map((c) => [c.quota, Resources.canonicalResourceList(c.used)])).toEqual([['gpus', { 'example.com/gpu': '3' }]]);
    expect(decision.reservation?.data).toMatchObject({ charged: { 'example.com/gpu': '2', 'requests.cpu': '1' }, scopeFacts: {}, operation: 'CREATE' });
  });

  it('denies with Kubernetes wording when a quota would be exceeded, naming the first quota by name', () => {
    const decision = decideResources(
      command({ 'example.com/gpu': '2' }),
      view([
        { name: 'b', spec: { hard: { 'example.com/gpu': '2' } }, used: list({ 'example.com/gpu': '1' }) },
        { name: 'a', spec: { hard: { 'example.com/gpu': '10' } }, used: list({ 'example.com/gpu': '9' }) },
      ]),
    );
    expect(decision).toMatchObject({
      allowed: false,
      code: 403,
      message: 'widgets.example.com "w1" is forbidden: exceeded quota: a, requested: example.com/gpu=2, used: example.com/gpu=9, limited: example.com/gpu=10',
    });
  });

  it('ignores scoped quotas, and the reservation it appends counts toward unscoped quotas only', () => {
    const scoped = { name: 'scoped', spec: { hard: { pods: '0' }, scopes: ['BestEffort'] } };
    const decision = decideResources(command({ pods: '1' }), view([{ ...scoped, used: list({ pods: '0' }) }]));
    expect(decision.allowed).toBe(true);
    if (!decision.allowed || !decision.reservation) throw new Error('expected a reservation');
    const events: RecordedEvent[] = [
      { type: 'QuotaDefined', data: scoped, version: 1, at: 0 },
      { type: 'QuotaDefined', data: { name: 'plain', spec: { hard: { pods: '5' } } }, version: 2, at: 0 },
      { ...decision.reservation, version: 3, at: 0 },
    ];
    const state = fold(events);
    expect(Resources.canonicalResourceList(state.used.get('plain') ?? {})).toEqual({ pods: '1' });
    expect(Resources.canonicalResourceList(state.used.get('scoped') ?? {})).toEqual({ pods: '0' });
  });
});

describe('defaultPodForAdmission (SetDefaults_Pod: requests from limits)', () => {
  it.each([
    ['limits only', { limits: { cpu: '1' } }, { limits: { cpu: '1' }, requests: { cpu: '1' } }],
    ['a request already set is kept', { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } }, { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } }],
    ['no resources', undefined, undefined],
  ])('%s', (_case, resources, expected) => {
    const pod = { apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: 'c', ...(resources ? { resources } : {}) }], initContainers: [{ name: 'i', ...(resources ? { resources } : {}) }] } };
    const defaulted = defaultPodForAdmission(pod);
    expect(defaulted.spec?.containers?.[0]?.resources).toEqual(expected);
    expect(defaulted.spec?.initContainers?.[0]?.resources).toEqual(expected);
    expect(pod.spec.containers[0]).toEqual({ name: 'c', ...(resources ? { resources } : {}) });
  });
});

describe('groupResourceForKind', () => {
  it.each([
    ['Pod', { group: '', resource: 'pods' }],
    ['Deployment', { group: 'apps', resource: 'deployments' }],
    ['ResourceClaim', { group: 'resource.k8s.io', resource: 'resourceclaims' }],
    ['Widget', undefined],
    ['toString', undefined],
  ])('%s', (kind, expected) => expect(groupResourceForKind(kind)).toEqual(expected));
});
