import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import type { KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import { PersistentVolumeClaimEvaluator, resourceByStorageClass } from './pvc.js';
import { type Amounts, values } from './spec-support.js';

// Ported from pkg/quota/v1/evaluator/core/persistent_volume_claims_test.go, with cases of
// our own for the VolumeAttributesClass scope and the status subresource.

const evaluator = new PersistentVolumeClaimEvaluator();

interface ClaimData {
  readonly storage?: string;
  readonly allocated?: string;
  readonly storageClassName?: string | null;
  readonly annotations?: Record<string, string>;
  readonly spec?: Record<string, unknown>;
  readonly status?: Record<string, unknown>;
}

function claim(data: ClaimData): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'foo', namespace: 'ns', ...(data.annotations ? { annotations: data.annotations } : {}) },
    spec: {
      accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      selector: { matchExpressions: [{ key: 'key2', operator: 'Exists' }] },
      resources: { requests: data.storage === undefined ? {} : { storage: data.storage } },
      ...(data.storageClassName !== undefined ? { storageClassName: data.storageClassName } : {}),
      ...(data.spec ?? {}),
    },
    status: { ...(data.allocated ? { allocatedResources: { storage: data.allocated } } : {}), ...(data.status ?? {}) },
  };
}

const base = { persistentvolumeclaims: '1', 'count/persistentvolumeclaims': '1' };
const gold = (resource: string) => resourceByStorageClass('gold', resource);

describe('claim usage', () => {
  it.each<[string, ClaimData, Amounts]>([
    ['a claim charges its storage request', { storage: '10Gi' }, { ...base, 'requests.storage': '10Gi' }],
    [
      'a claim of a storage class charges the class too',
      { storage: '10Gi', storageClassName: 'gold' },
      { ...base, 'requests.storage': '10Gi', [gold('requests.storage')]: '10Gi', [gold('persistentvolumeclaims')]: '1' },
    ],
    ['a fractional request is charged in whole bytes', { storage: '1001m' }, { ...base, 'requests.storage': '2' }],
    [
      'a fractional request of a class is charged in whole bytes to both',
      { storage: '1001m', storageClassName: 'gold' },
      { ...base, 'requests.storage': '2', [gold('requests.storage')]: '2', [gold('persistentvolumeclaims')]: '1' },
    ],
    ['a larger allocated size is charged', { storage: '5G', allocated: '10G' }, { ...base, 'requests.storage': '10G' }],
    ['a smaller allocated size is not', { storage: '10G', allocated: '5G' }, { ...base, 'requests.storage': '10G' }],
    ['a claim without a storage request charges only the claim', { allocated: '10G' }, base],
    [
      'the beta storage class annotation wins over the field',
      { storage: '1Gi', storageClassName: 'silver', annotations: { 'volume.beta.kubernetes.io/storage-class': 'gold' } },
      { ...base, 'requests.storage': '1Gi', [gold('requests.storage')]: '1Gi', [gold('persistentvolumeclaims')]: '1' },
    ],
    [
      'an empty beta annotation means no class even with the field set',
      { storage: '1Gi', storageClassName: 'silver', annotations: { 'volume.beta.kubernetes.io/storage-class': '' } },
      { ...base, 'requests.storage': '1Gi' },
    ],
    ['an empty storage class name means no class', { storage: '1Gi', storageClassName: '' }, { ...base, 'requests.storage': '1Gi' }],
    ['a null storage class name means no class', { storage: '1Gi', storageClassName: null }, { ...base, 'requests.storage': '1Gi' }],
  ])('%s', (_name, data, expected) => {
    expect(values(evaluator.usage(claim(data)))).toEqual(values(expected));
  });

  it('rejects an invalid storage request naming the field', () => {
    expect(() => evaluator.usage(claim({ storage: 'big' }))).toThrow(
      expect.objectContaining({
        code: 'QuantityInvalid',
        causes: [expect.objectContaining({ field: 'spec.resources.requests[storage]' })],
      }),
    );
  });
});

describe('quota names a claim is charged for', () => {
  it.each<[string, string[], string[]]>([
    [
      'the claim names and per-class names',
      [
        'count/persistentvolumeclaims',
        'requests.storage',
        'persistentvolumeclaims',
        'gold.storageclass.storage.k8s.io/requests.storage',
        'gold.storageclass.storage.k8s.io/persistentvolumeclaims',
      ],
      [
        'count/persistentvolumeclaims',
        'requests.storage',
        'persistentvolumeclaims',
        'gold.storageclass.storage.k8s.io/requests.storage',
        'gold.storageclass.storage.k8s.io/persistentvolumeclaims',
      ],
    ],
    [
      'nothing else',
      ['storage', 'ephemeral-storage', 'bronze.storageclass.storage.k8s.io/storage', 'gold.storage.k8s.io/requests.storage'],
      [],
    ],
  ])('%s', (_name, input, expected) => {
    expect(evaluator.matchingResources(input)).toEqual(expected);
  });
});

describe('the VolumeAttributesClass scope', () => {
  const scope = (operator: string, values?: string[]): ScopedResourceSelectorRequirement => ({
    scopeName: 'VolumeAttributesClass',
    operator,
    ...(values ? { values } : {}),
  });
  const plain = claim({ storage: '1Gi' });
  const fast = claim({ storage: '1Gi', spec: { volumeAttributesClassName: 'fast' } });
  const moving = claim({
    storage: '1Gi',
    spec: { volumeAttributesClassName: 'fast' },
    status: {
      currentVolumeAttributesClassName: 'slow',
      modifyVolumeStatus: { targetVolumeAttributesClassName: 'fast', status: 'InProgress' },
    },
  });

  it.each<[string, KubeObject, ScopedResourceSelectorRequirement, boolean]>([
    ['Exists does not match a claim without a class', plain, scope('Exists'), false],
    ['Exists matches a claim with a class', fast, scope('Exists'), true],
    ['DoesNotExist matches a claim without a class', plain, scope('DoesNotExist'), true],
    ['DoesNotExist does not match a claim with a class', fast, scope('DoesNotExist'), false],
    ['In matches the class', fast, scope('In', ['fast']), true],
    ['In does not match another class', fast, scope('In', ['slow']), false],
    ['In does not match a claim without a class', plain, scope('In', ['fast']), false],
    ['NotIn matches a claim without a class', plain, scope('NotIn', ['fast']), true],
    ['NotIn does not match the class', fast, scope('NotIn', ['fast']), false],
    ['In matches the current class of a claim being modified', moving, scope('In', ['slow']), true],
    ['NotIn matches a claim being modified if any of its classes is outside', moving, scope('NotIn', ['fast']), true],
  ])('%s', (_name, object, requirement, expected) => {
    expect(evaluator.matchingScopes(object, [requirement]).length === 1).toBe(expected);
  });

  it('ignores pod scopes', () => {
    expect(evaluator.matchingScopes(fast, [{ scopeName: 'BestEffort', operator: 'Exists' }])).toEqual([]);
  });

  it('refuses a selector Kubernetes cannot build', () => {
    expect(() => evaluator.matchingScopes(fast, [scope('In', [])])).toThrow(DomainError);
  });

  it('reports the limited scopes no matched quota covers', () => {
    expect(evaluator.uncoveredQuotaScopes([scope('Exists')], [])).toEqual([scope('Exists')]);
    expect(evaluator.uncoveredQuotaScopes([scope('Exists')], [scope('In', ['fast'])])).toEqual([]);
  });
});

describe('claims and the must-specify rule', () => {
  it('never requires a storage request, as Kubernetes does not', () => {
    expect(evaluator.constraints(['requests.storage', 'persistentvolumeclaims'], claim({}))).toEqual([]);
  });
});

describe('which claim operations are charged', () => {
  const object = claim({ storage: '1Gi' });
  it.each<[string, Operation, string | undefined, KubeObject | undefined, KubeObject | undefined, boolean]>([
    ['create', 'CREATE', undefined, undefined, undefined, true],
    ['update', 'UPDATE', undefined, object, object, true],
    ['delete', 'DELETE', undefined, undefined, undefined, false],
    ['a status update with both objects', 'UPDATE', 'status', object, object, true],
    ['a status update without the old object', 'UPDATE', 'status', object, undefined, false],
    ['another subresource', 'UPDATE', 'binding', object, object, false],
  ])('%s', (_name, operation, subresource, newObject, oldObject, expected) => {
    expect(evaluator.handles(operation, subresource, newObject, oldObject)).toBe(expected);
  });
});
