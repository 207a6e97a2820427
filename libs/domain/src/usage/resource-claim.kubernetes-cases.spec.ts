import { describe, expect, it } from 'vitest';
import type { KubeObject, Operation } from '../kube/types.js';
import { ResourceClaimEvaluator } from './resource-claim.js';
import { type Amounts, values } from './spec-support.js';

// Answered from pkg/quota/v1/evaluator/core/resource_claims.go (master, without the
// DRAExtendedResource additions, which need the cluster's device classes and pods).

const evaluator = new ResourceClaimEvaluator();
const claim = (requests: unknown[], apiVersion = 'resource.k8s.io/v1'): KubeObject => ({
  apiVersion,
  kind: 'ResourceClaim',
  metadata: { name: 'c', namespace: 'ns' },
  spec: { devices: { requests } },
});
const count = { 'count/resourceclaims.resource.k8s.io': '1' };
const devices = (deviceClass: string) => `${deviceClass}.deviceclass.resource.k8s.io/devices`;
const exactly = (deviceClassName: string, allocationMode: string, n?: number) => ({
  name: 'r',
  exactly: { deviceClassName, allocationMode, ...(n === undefined ? {} : { count: n }) },
});

describe('resource claim usage (Kubernetes cases)', () => {
  it.each<[string, KubeObject, Amounts]>([
    ['a claim without requests is only counted', claim([]), count],
    ['an exact count is charged to its device class', claim([exactly('gpu', 'ExactCount', 2)]), { ...count, [devices('gpu')]: '2' }],
    ['All is charged as the largest allocation, 32 devices', claim([exactly('gpu', 'All')]), { ...count, [devices('gpu')]: '32' }],
    ['an unknown allocation mode charges the class zero devices', claim([exactly('gpu', 'Some')]), { ...count, [devices('gpu')]: '0' }],
    [
      'requests of one class add up',
      claim([exactly('gpu', 'ExactCount', 2), exactly('gpu', 'ExactCount', 3)]),
      { ...count, [devices('gpu')]: '5' },
    ],
    [
      'alternatives charge each class its worst case',
      claim([
        {
          name: 'r',
          firstAvailable: [
            { name: 'a', deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 1 },
            { name: 'b', deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 2 },
            { name: 'c', deviceClassName: 'tpu', allocationMode: 'All' },
          ],
        },
      ]),
      { ...count, [devices('gpu')]: '2', [devices('tpu')]: '32' },
    ],
    [
      'alternatives that need no device charge no class at all',
      claim([{ name: 'r', firstAvailable: [{ name: 'a', deviceClassName: 'gpu', allocationMode: 'Some' }] }]),
      count,
    ],
    [
      'alternatives win over an exact request in the same entry',
      claim([
        {
          name: 'r',
          exactly: { deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 9 },
          firstAvailable: [{ name: 'a', deviceClassName: 'tpu', allocationMode: 'ExactCount', count: 1 }],
        },
      ]),
      { ...count, [devices('tpu')]: '1' },
    ],
    ['a request of neither shape charges nothing', claim([{ name: 'r' }]), count],
    [
      'a v1beta1 request is read as its exact request',
      claim([{ name: 'r', deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 4 }], 'resource.k8s.io/v1beta1'),
      { ...count, [devices('gpu')]: '4' },
    ],
    ['a v1beta1 request setting none of its own fields charges nothing', claim([{ name: 'r' }], 'resource.k8s.io/v1beta1'), count],
  ])('%s', (_name, object, expected) => {
    expect(values(evaluator.usage(object))).toEqual(values(expected));
  });
});

describe('resource claim operations and names (Kubernetes cases)', () => {
  it.each<[string, Operation, string, boolean]>([
    ['a create is charged', 'CREATE', '', true],
    ['an update is charged', 'UPDATE', '', true],
    ['an update of the status is not', 'UPDATE', 'status', false],
    ['a delete is not', 'DELETE', '', false],
  ])('%s', (_name, operation, subresource, expected) => {
    expect(evaluator.handles(operation, subresource)).toBe(expected);
  });

  it('matches the count and per-class names in input order, nothing else', () => {
    expect(
      evaluator.matchingResources([
        'gpu.deviceclass.resource.k8s.io/devices',
        'count/resourceclaims.resource.k8s.io',
        'resourceclaims',
        'requests.example.com/gpu',
      ]),
    ).toEqual(['gpu.deviceclass.resource.k8s.io/devices', 'count/resourceclaims.resource.k8s.io']);
  });

  it('has no scopes and no must-specify rule', () => {
    const scope = { scopeName: 'BestEffort', operator: 'Exists' };
    expect(evaluator.matchingScopes(claim([]), [scope])).toEqual([]);
    expect(evaluator.constraints([devices('gpu')], claim([]))).toEqual([]);
  });
});
