import { applyJsonPatch, type LimitRange } from '@quota/domain';
import { describe, expect, it } from 'vitest';
import type { AdmissionReviewRequest } from './admission-review.js';
import { limitRangeDefaultsPatch } from './limit-range-defaults.js';

const limitRanges: LimitRange[] = [
  {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'defaults' },
    spec: { limits: [{ type: 'Container', default: { cpu: '300m' }, defaultRequest: { cpu: '200m' }, max: { cpu: '800m' } }] },
  },
];

const bare = { name: 'app', image: 'nginx' };
const sized = (cpu: string) => ({ name: 'sidecar', image: 'envoy', resources: { requests: { cpu }, limits: { cpu } } });
const pod = (...containers: object[]) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'ns' },
  spec: { containers },
});
const pvc = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data' },
  spec: { resources: { requests: { storage: '1Gi' } } },
};

const podsResource = { group: '', version: 'v1', resource: 'pods' };
const review = (overrides: Partial<AdmissionReviewRequest>): AdmissionReviewRequest => ({
  uid: 'u-1',
  resource: podsResource,
  namespace: 'ns',
  operation: 'CREATE',
  object: pod(bare),
  dryRun: false,
  ...overrides,
});

const containerDefaults = {
  op: 'add',
  path: '/spec/containers/0/resources',
  value: { limits: { cpu: '300m' }, requests: { cpu: '200m' } },
};
const annotation = (text: string) => ({
  op: 'add',
  path: '/metadata/annotations',
  value: { 'kubernetes.io/limit-ranger': `LimitRanger plugin set: ${text}` },
});

describe('limitRangeDefaultsPatch', () => {
  it('defaults a CREATEd pod container that sets no resources and says so in the annotation', () => {
    expect(limitRangeDefaultsPatch(review({}), limitRanges)).toEqual([
      containerDefaults,
      annotation('cpu request for container app; cpu limit for container app'),
    ]);
  });

  it('still defaults a pod that breaks a LimitRange maximum: denying it is the validating webhook’s job', () => {
    const patch = limitRangeDefaultsPatch(review({ object: pod(bare, sized('2')) }), limitRanges);
    expect(patch).toEqual([containerDefaults, annotation('cpu request for container app; cpu limit for container app')]);
  });

  it('defaults a pod whose object carries no metadata.namespace (the review names it)', () => {
    const object = { ...pod(bare), metadata: { name: 'web' } };
    expect(limitRangeDefaultsPatch(review({ object }), limitRanges)).toHaveLength(2);
  });

  // reinvocationPolicy: IfNeeded calls mutate again after a later mutator changed the pod.
  it('called again (reinvocation), patches nothing it already patched, and defaults only a container added since', () => {
    const first = limitRangeDefaultsPatch(review({}), limitRanges);
    const defaulted = applyJsonPatch(pod(bare), first);
    expect(limitRangeDefaultsPatch(review({ object: defaulted }), limitRanges)).toEqual([]);
    // A sidecar injector ran after us: only its container is defaulted, and the annotation says so.
    const injected = { ...defaulted, spec: { containers: [...defaulted.spec.containers, { ...bare, name: 'proxy' }] } };
    const again = limitRangeDefaultsPatch(review({ object: injected }), limitRanges);
    expect(again.filter((op) => op.path.startsWith('/spec/'))).toEqual([{ ...containerDefaults, path: '/spec/containers/1/resources' }]);
    const annotated = applyJsonPatch(injected, again) as { metadata: { annotations?: Record<string, string> } };
    expect(annotated.metadata.annotations?.['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu request for container proxy; cpu limit for container proxy',
    );
  });

  it.each<[string, Partial<AdmissionReviewRequest>, readonly LimitRange[]]>([
    ['a pod whose containers set every defaulted resource', { object: pod(sized('300m')) }, limitRanges],
    ['a namespace without LimitRanges', {}, []],
    ['a cluster-scoped request', { namespace: undefined }, limitRanges],
    ['a DELETE (object null)', { operation: 'DELETE', object: undefined, oldObject: pod(bare) }, limitRanges],
    ['a pod UPDATE (containers are immutable)', { operation: 'UPDATE', oldObject: pod(bare) }, limitRanges],
    [
      'a PersistentVolumeClaim (never defaulted)',
      { resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' }, object: pvc },
      limitRanges,
    ],
    [
      'a Deployment',
      { resource: { group: 'apps', version: 'v1', resource: 'deployments' }, object: { kind: 'Deployment', metadata: { name: 'web' } } },
      limitRanges,
    ],
    [
      'a Scale subresource UPDATE',
      {
        operation: 'UPDATE',
        resource: { group: 'apps', version: 'v1', resource: 'deployments' },
        subResource: 'scale',
        object: { kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: 3 } },
      },
      limitRanges,
    ],
    [
      'a pod being deleted (finalizer update)',
      {
        operation: 'UPDATE',
        subResource: 'resize',
        oldObject: { ...pod(bare), metadata: { name: 'web', deletionTimestamp: '2026-01-01T00:00:00Z' } },
      },
      limitRanges,
    ],
  ])('answers no patch for %s', (_case, overrides, ranges) => {
    expect(limitRangeDefaultsPatch(review(overrides), ranges)).toEqual([]);
  });
});
