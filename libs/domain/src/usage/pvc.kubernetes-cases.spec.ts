import { describe, expect, it } from 'vitest';
import type { KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import { PersistentVolumeClaimEvaluator, resourceByStorageClass } from './pvc.js';
import { type Amounts, values } from './spec-support.js';

// Cases beyond the ported tables, each answered from
// pkg/quota/v1/evaluator/core/persistent_volume_claims.go (master) and
// component-helpers' GetPersistentVolumeClaimClass.

const evaluator = new PersistentVolumeClaimEvaluator();

function claim(spec: Record<string, unknown>, status: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'c', namespace: 'ns', ...(annotations ? { annotations } : {}) },
    spec,
    status,
  };
}
const storage = (value: string) => ({ resources: { requests: { storage: value } } });
const base = { persistentvolumeclaims: '1', 'count/persistentvolumeclaims': '1' };

describe('claim usage (Kubernetes cases)', () => {
  it.each<[string, KubeObject, Amounts]>([
    [
      'an allocation equal to the request charges the request',
      claim(storage('10Gi'), { allocatedResources: { storage: '10Gi' } }),
      { ...base, 'requests.storage': '10Gi' },
    ],
    [
      'a larger fractional allocation is charged rounded up to whole bytes',
      claim(storage('1'), { allocatedResources: { storage: '2500m' } }),
      { ...base, 'requests.storage': '3' },
    ],
    [
      'an allocation without storage leaves the request',
      claim(storage('1Gi'), { allocatedResources: { 'example.com/iops': '100' } }),
      { ...base, 'requests.storage': '1Gi' },
    ],
    ['a zero storage request is charged as zero', claim(storage('0')), { ...base, 'requests.storage': '0' }],
    ['a claim without a storage class names none', claim(storage('1Gi')), { ...base, 'requests.storage': '1Gi' }],
    [
      'a dotted class name is used as it is',
      claim({ ...storage('1Gi'), storageClassName: 'fast.ssd' }),
      {
        ...base,
        'requests.storage': '1Gi',
        [resourceByStorageClass('fast.ssd', 'requests.storage')]: '1Gi',
        [resourceByStorageClass('fast.ssd', 'persistentvolumeclaims')]: '1',
      },
    ],
    [
      'the beta annotation names a class even when the field is absent',
      claim(storage('1Gi'), {}, { 'volume.beta.kubernetes.io/storage-class': 'gold' }),
      {
        ...base,
        'requests.storage': '1Gi',
        [resourceByStorageClass('gold', 'requests.storage')]: '1Gi',
        [resourceByStorageClass('gold', 'persistentvolumeclaims')]: '1',
      },
    ],
    [
      'a class without a storage request is charged only the claim',
      claim({ storageClassName: 'gold' }),
      { ...base, [resourceByStorageClass('gold', 'persistentvolumeclaims')]: '1' },
    ],
  ])('%s', (_name, object, expected) => {
    expect(values(evaluator.usage(object))).toEqual(values(expected));
  });
});

describe('quota names a claim is charged for (Kubernetes cases)', () => {
  it.each<[string, string[], string[]]>([
    [
      'keeps the input order (no sorting)',
      ['requests.storage', 'persistentvolumeclaims', 'count/persistentvolumeclaims'],
      ['requests.storage', 'persistentvolumeclaims', 'count/persistentvolumeclaims'],
    ],
    [
      'matches a per-class name with an empty class',
      ['.storageclass.storage.k8s.io/requests.storage'],
      ['.storageclass.storage.k8s.io/requests.storage'],
    ],
    ['does not match a per-class limit', ['gold.storageclass.storage.k8s.io/limits.storage'], []],
    ['does not match the count of another group', ['count/persistentvolumeclaims.example.com'], []],
  ])('%s', (_name, input, expected) => {
    expect(evaluator.matchingResources(input)).toEqual(expected);
  });
});

describe('claim scopes and operations (Kubernetes cases)', () => {
  const moving = claim(storage('1Gi'), {
    currentVolumeAttributesClassName: 'b',
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'c' },
  });
  const withSpec = claim(
    { ...storage('1Gi'), volumeAttributesClassName: 'a' },
    { currentVolumeAttributesClassName: 'b', modifyVolumeStatus: { targetVolumeAttributesClassName: 'c' } },
  );
  it.each<[string, KubeObject, ScopedResourceSelectorRequirement, boolean]>([
    [
      'the target class of a modification is matched by In',
      withSpec,
      { scopeName: 'VolumeAttributesClass', operator: 'In', values: ['c'] },
      true,
    ],
    [
      'NotIn holds when any referenced class is outside the list',
      withSpec,
      { scopeName: 'VolumeAttributesClass', operator: 'NotIn', values: ['a', 'b'] },
      true,
    ],
    [
      'NotIn fails when every referenced class is in the list',
      withSpec,
      { scopeName: 'VolumeAttributesClass', operator: 'NotIn', values: ['a', 'b', 'c'] },
      false,
    ],
    ['a status class alone makes Exists hold', moving, { scopeName: 'VolumeAttributesClass', operator: 'Exists' }, true],
    ['a status class alone makes DoesNotExist fail', moving, { scopeName: 'VolumeAttributesClass', operator: 'DoesNotExist' }, false],
  ])('%s', (_name, object, scope, expected) => {
    expect(evaluator.matchingScopes(object, [scope])).toEqual(expected ? [scope] : []);
  });

  const object = claim(storage('1Gi'));
  it.each<[string, Operation, string, boolean]>([
    ['a status change is charged whatever the operation says', 'CREATE', 'status', true],
    ['a status update that changes nothing is still charged (Kubernetes compares pointers)', 'UPDATE', 'status', true],
    ['a delete of the claim is not charged', 'DELETE', '', false],
    ['a connect is not charged', 'CONNECT', '', false],
  ])('%s', (_name, operation, subresource, expected) => {
    expect(evaluator.handles(operation, subresource, object, object)).toBe(expected);
  });
});
