import { describe, expect, it } from 'vitest';
import type { KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import { PodEvaluator } from './pod.js';
import { type Amounts, pod, type PodSpecData, values } from './spec-support.js';

// Cases beyond the ported tables, each answered from pkg/quota/v1/evaluator/core/pods.go
// (master): PodUsageFunc, QuotaV1Pod, podComputeUsageHelper, Constraints, Handles,
// MatchingResources and podMatchesScopeFunc.

const evaluator = new PodEvaluator();
const count = { 'count/pods': '1' };
const charged = (extra: Amounts): Amounts => ({ ...count, pods: '1', ...extra });

describe('pod usage (Kubernetes cases)', () => {
  it.each<[string, PodSpecData, Amounts]>([
    ['charges only the object count for a Succeeded pod', { phase: 'Succeeded', containers: [{ requests: { cpu: '1' } }] }, count],
    ['charges only the object count for a Failed pod', { phase: 'Failed', containers: [{ requests: { cpu: '1' } }] }, count],
    [
      'charges an Unknown-phase pod in full',
      { phase: 'Unknown', containers: [{ requests: { cpu: '1' } }] },
      charged({ cpu: '1', 'requests.cpu': '1' }),
    ],
    [
      'charges the overhead of a pod whose containers ask nothing, but no limit',
      { overhead: { cpu: '250m' }, containers: [{}] },
      charged({ cpu: '250m', 'requests.cpu': '250m' }),
    ],
    ['charges a stated zero request as zero', { containers: [{ requests: { cpu: '0' } }] }, charged({ cpu: '0', 'requests.cpu': '0' })],
    ['never charges the limits of an extended resource', { containers: [{ limits: { 'example.com/gpu': '2' } }] }, charged({})],
    [
      'charges a DRA device-class request as requests.<name>',
      { containers: [{ requests: { 'deviceclass.resource.kubernetes.io/gpu': '1' } }] },
      charged({ 'requests.deviceclass.resource.kubernetes.io/gpu': '1' }),
    ],
    [
      'does not charge another kubernetes.io-prefixed resource',
      { containers: [{ requests: { 'kubernetes.io/widget': '1' } }] },
      charged({}),
    ],
    [
      'does not charge a resource whose domain is not a DNS name (upper case)',
      { containers: [{ requests: { 'Example.com/gpu': '1' } }] },
      charged({}),
    ],
    [
      'does not charge an extended resource whose name part is over 63 characters',
      { containers: [{ requests: { [`example.com/${'g'.repeat(64)}`]: '1' } }] },
      charged({}),
    ],
    [
      'charges hugepages limits nowhere, only their requests',
      { containers: [{ requests: { 'hugepages-2Mi': '4Mi' }, limits: { 'hugepages-2Mi': '4Mi' } }] },
      charged({ 'hugepages-2Mi': '4Mi', 'requests.hugepages-2Mi': '4Mi' }),
    ],
    [
      'charges a sidecar, then the init container that needs it: max(1+1+3, 5+1) = 6',
      {
        initContainers: [
          { name: 's1', requests: { cpu: '1' }, sidecar: true },
          { name: 'i1', requests: { cpu: '5' } },
          { name: 's2', requests: { cpu: '3' }, sidecar: true },
        ],
        containers: [{ name: 'c', requests: { cpu: '1' } }],
      },
      charged({ cpu: '6', 'requests.cpu': '6' }),
    ],
    [
      'charges an init container that runs before any sidecar on its own: max(2+1, 5) = 5',
      {
        initContainers: [
          { name: 'i1', requests: { cpu: '5' } },
          { name: 's1', requests: { cpu: '2' }, sidecar: true },
        ],
        containers: [{ name: 'c', requests: { cpu: '1' } }],
      },
      charged({ cpu: '5', 'requests.cpu': '5' }),
    ],
    [
      'charges pod-level hugepages in place of the containers',
      { podResources: { requests: { 'hugepages-2Mi': '8Mi' } }, containers: [{ requests: { 'hugepages-2Mi': '2Mi' } }] },
      charged({ 'hugepages-2Mi': '8Mi', 'requests.hugepages-2Mi': '8Mi' }),
    ],
    [
      'charges pod-level limits, keeping the containers requests when no pod-level request is set',
      { podResources: { limits: { memory: '1Gi' } }, containers: [{ requests: { memory: '256Mi' } }] },
      charged({ memory: '256Mi', 'requests.memory': '256Mi', 'limits.memory': '1Gi' }),
    ],
    [
      'never charges ephemeral containers',
      {
        containers: [{ requests: { cpu: '1' } }],
        spec: { ephemeralContainers: [{ name: 'debug', resources: { requests: { cpu: '5' } } }] },
      },
      charged({ cpu: '1', 'requests.cpu': '1' }),
    ],
    [
      'treats restartPolicy Always on a regular container as nothing special: max(2, 3) = 3',
      { containers: [{ name: 'c', requests: { cpu: '2' }, sidecar: true }], initContainers: [{ name: 'i', requests: { cpu: '3' } }] },
      charged({ cpu: '3', 'requests.cpu': '3' }),
    ],
  ])('%s', (_name, data, expected) => {
    expect(values(evaluator.usage(pod(data)))).toEqual(values(expected));
  });

  const deleted = Date.parse('2025-06-01T12:00:00Z');
  const deleting = (grace: number | undefined): KubeObject =>
    pod({
      containers: [{ requests: { cpu: '1' } }],
      metadata: { deletionTimestamp: '2025-06-01T12:00:00Z', ...(grace === undefined ? {} : { deletionGracePeriodSeconds: grace }) },
    });
  it.each<[string, KubeObject, number, Amounts]>([
    [
      'still charges a deleting pod at the very end of its grace period',
      deleting(30),
      deleted + 30_000,
      charged({ cpu: '1', 'requests.cpu': '1' }),
    ],
    ['stops charging compute a moment after the grace period', deleting(30), deleted + 30_001, count],
    ['stops charging at once after a zero grace period', deleting(0), deleted + 1, count],
    [
      'keeps charging a deleting pod without a grace period, however late',
      deleting(undefined),
      deleted + 86_400_000,
      charged({ cpu: '1', 'requests.cpu': '1' }),
    ],
  ])('%s', (_name, object, now, expected) => {
    expect(values(evaluator.usage(object, { now }))).toEqual(values(expected));
  });

  it('refuses a deletion timestamp that is not RFC 3339, as decoding the pod would', () => {
    const object = pod({ containers: [{}], metadata: { deletionTimestamp: '2025-06-01', deletionGracePeriodSeconds: 0 } });
    expect(() => evaluator.usage(object, { now: deleted })).toThrow(
      expect.objectContaining({ code: 'ObjectInvalid', causes: [expect.objectContaining({ field: 'metadata.deletionTimestamp' })] }),
    );
  });
});

describe('the must-specify rule for pods (Kubernetes cases)', () => {
  it.each<[string, PodSpecData, string[], string | undefined]>([
    [
      'a limit does not satisfy a requests.cpu quota',
      { containers: [{ name: 'app', limits: { cpu: '1' } }] },
      ['requests.cpu'],
      'must specify requests.cpu for: app',
    ],
    [
      'a limit does not satisfy a bare cpu quota either',
      { containers: [{ name: 'app', limits: { cpu: '1' } }] },
      ['cpu'],
      'must specify cpu for: app',
    ],
    [
      'a request does not satisfy a limits.memory quota',
      { containers: [{ name: 'app', requests: { memory: '1Gi' } }] },
      ['limits.memory'],
      'must specify limits.memory for: app',
    ],
    [
      'a sidecar is held to the rule like any init container',
      { initContainers: [{ name: 'side', sidecar: true }], containers: [{ name: 'app', requests: { cpu: '1' } }] },
      ['cpu'],
      'must specify cpu for: side',
    ],
    [
      'pod-level resources of an unsupported kind do not excuse the containers',
      { podResources: { requests: { 'ephemeral-storage': '1Gi' } }, containers: [{ name: 'app' }] },
      ['cpu'],
      'must specify cpu for: app',
    ],
    [
      'pod-level limits alone excuse the containers',
      { podResources: { limits: { memory: '1Gi' } }, containers: [{ name: 'app' }] },
      ['cpu', 'memory'],
      undefined,
    ],
    [
      'resources and container names are listed in byte order',
      { containers: [{ name: 'b' }, { name: 'B' }, { name: 'a', requests: { cpu: '1' } }] },
      ['requests.memory', 'cpu'],
      'must specify cpu for: B,b; requests.memory for: B,a,b',
    ],
    ['a resource asked twice is listed once', { containers: [{ name: 'app' }] }, ['memory', 'memory'], 'must specify memory for: app'],
    ['hugepages quotas never require anything', { containers: [{ name: 'app' }] }, ['requests.hugepages-2Mi', 'hugepages-2Mi'], undefined],
  ])('%s', (_name, data, required, expected) => {
    expect(evaluator.constraintError(required, pod(data))).toBe(expected);
  });
});

describe('pod scopes (Kubernetes cases)', () => {
  const exists = (scopeName: string): ScopedResourceSelectorRequirement => ({ scopeName, operator: 'Exists' });
  it.each<[string, KubeObject, ScopedResourceSelectorRequirement, boolean]>([
    ['an active deadline of zero is Terminating', pod({ spec: { activeDeadlineSeconds: 0 } }), exists('Terminating'), true],
    ['an active deadline of zero is not NotTerminating', pod({ spec: { activeDeadlineSeconds: 0 } }), exists('NotTerminating'), false],
    [
      'Terminating ignores the operator it is written with',
      pod({ spec: { activeDeadlineSeconds: 5 } }),
      { scopeName: 'Terminating', operator: 'In', values: ['x'] },
      true,
    ],
    ['zero requests leave a pod BestEffort', pod({ containers: [{ requests: { cpu: '0', memory: '0' } }] }), exists('BestEffort'), true],
    [
      'only extended resources leave a pod BestEffort',
      pod({ containers: [{ requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } }] }),
      exists('BestEffort'),
      true,
    ],
    ['limits only make a pod NotBestEffort', pod({ containers: [{ limits: { memory: '1Gi' } }] }), exists('NotBestEffort'), true],
    [
      'a recorded QoS class is believed over the containers',
      { ...pod({ containers: [{}] }), status: { qosClass: 'Guaranteed' } },
      exists('BestEffort'),
      false,
    ],
    ['NotIn matches a pod without a priority class', pod({}), { scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }, true],
    ['an empty priority class name is no class for Exists', pod({ spec: { priorityClassName: '' } }), exists('PriorityClass'), false],
    [
      'an empty namespace selector in required anti-affinity is cross-namespace',
      pod({
        spec: {
          affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {}, namespaceSelector: {} }] } },
        },
      }),
      exists('CrossNamespacePodAffinity'),
      true,
    ],
    [
      'an empty namespace list and a null selector are not cross-namespace',
      pod({
        spec: {
          affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaces: [], namespaceSelector: null }] } },
        },
      }),
      exists('CrossNamespacePodAffinity'),
      false,
    ],
  ])('%s', (_name, object, scope, expected) => {
    expect(evaluator.matchingScopes(object, [scope])).toEqual(expected ? [scope] : []);
  });
});

describe('which pod operations are charged (Kubernetes cases)', () => {
  const deadline = (seconds: number | undefined) => pod(seconds === undefined ? {} : { spec: { activeDeadlineSeconds: seconds } });
  it.each<[string, Operation, string | undefined, KubeObject | undefined, KubeObject | undefined, boolean]>([
    ['an update setting the deadline to zero moves the pod into Terminating', 'UPDATE', undefined, deadline(0), deadline(undefined), true],
    ['an update to a negative deadline changes no scope', 'UPDATE', undefined, deadline(-1), deadline(undefined), false],
    ['an update of the status is not charged', 'UPDATE', 'status', deadline(1), deadline(undefined), false],
    ['deleting through the resize subresource is not charged', 'DELETE', 'resize', undefined, undefined, false],
    ['an update of ephemeral containers is not charged', 'UPDATE', 'ephemeralcontainers', undefined, undefined, false],
  ])('%s', (_name, operation, subresource, object, oldObject, expected) => {
    expect(evaluator.handles(operation, subresource, object, oldObject)).toBe(expected);
  });
});

describe('quota names a pod is charged for (Kubernetes cases)', () => {
  it.each<[string, string, boolean]>([
    ['matches a requests.-prefixed name outside kubernetes.io without checking it is qualified', 'requests.Example.com/gpu', true],
    ['does not match an extended resource without the requests. prefix', 'example.com/gpu', false],
    ['does not match a DRA device class without the requests. prefix', 'deviceclass.resource.kubernetes.io/gpu', false],
    ['does not match limits of hugepages', 'limits.hugepages-2Mi', false],
    ['matches any hugepages size', 'hugepages-1Gi', true],
    ['does not match the count of pods of another group', 'count/pods.metrics.k8s.io', false],
    ['does not match storage', 'requests.storage', false],
  ])('%s', (_name, name, expected) => {
    expect(evaluator.matchingResources([name])).toEqual(expected ? [name] : []);
  });
});
