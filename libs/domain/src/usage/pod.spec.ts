import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import type { KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import { PodEvaluator } from './pod.js';
import { type Amounts, type ContainerSpec, pod, type PodSpecData, values } from './spec-support.js';

// Ported from pkg/quota/v1/evaluator/core/pods_test.go, with cases of our own where the
// Kubernetes tables leave a rule of pods.go untested.

const evaluator = new PodEvaluator();

const requestsAndLimits = (requests: Amounts, limits: Amounts, name?: string): ContainerSpec => ({
  ...(name !== undefined ? { name } : {}),
  requests,
  limits,
});

describe('the must-specify rule for pods', () => {
  const cpuOnly = (name: string) => requestsAndLimits({ cpu: '1m' }, { cpu: '2m' }, name);
  it.each<[string, PodSpecData, string[], string | undefined]>([
    ['an init container without memory is named', { initContainers: [cpuOnly('dummy')] }, ['memory'], 'must specify memory for: dummy'],
    [
      'init containers without memory are named in order',
      { initContainers: [cpuOnly('foo'), cpuOnly('bar')] },
      ['memory'],
      'must specify memory for: bar,foo',
    ],
    ['a container without memory is named', { containers: [cpuOnly('dummy')] }, ['memory'], 'must specify memory for: dummy'],
    [
      'containers without memory are named in order',
      { containers: [cpuOnly('foo'), cpuOnly('bar')] },
      ['memory'],
      'must specify memory for: bar,foo',
    ],
    [
      'every missing resource is listed with its containers',
      { containers: [{ name: 'foo' }, { name: 'bar' }] },
      ['memory', 'cpu'],
      'must specify cpu for: bar,foo; memory for: bar,foo',
    ],
    [
      'pod-level resources excuse the containers',
      { podResources: { requests: { cpu: '1m' } }, containers: [{ name: 'foo' }, { name: 'bar' }] },
      ['memory', 'cpu'],
      undefined,
    ],
    [
      'a stated request satisfies the rule even at zero',
      { containers: [requestsAndLimits({ cpu: '0' }, {}, 'app')] },
      ['requests.cpu'],
      undefined,
    ],
    [
      'a request does not satisfy a limit quota',
      { containers: [requestsAndLimits({ cpu: '1' }, {}, 'app')] },
      ['requests.cpu', 'limits.cpu'],
      'must specify limits.cpu for: app',
    ],
    [
      'quotas on other resources never require anything',
      { containers: [{ name: 'app' }] },
      ['ephemeral-storage', 'requests.ephemeral-storage', 'pods', 'requests.example.com/dongle', 'count/pods'],
      undefined,
    ],
  ])('%s', (_name, data, required, expected) => {
    const object = pod(data);
    expect(evaluator.constraintError(required, object)).toBe(expected);
    const missing = expected === undefined ? [] : [...expected.matchAll(/(?:must specify |; )(\S+) for:/g)].map((m) => m[1]);
    expect(evaluator.constraints(required, object)).toEqual(missing);
  });
});

describe('pod usage', () => {
  const NOW = Date.parse('2025-06-01T12:00:00Z');
  const at = (millis: number) => new Date(millis).toISOString();
  const count = { 'count/pods': '1' };
  const dongle = { 'example.com/dongle': '3' };

  it.each<[string, PodSpecData, Amounts]>([
    [
      'an init container charges its cpu',
      { initContainers: [requestsAndLimits({ cpu: '1m' }, { cpu: '2m' })] },
      { 'requests.cpu': '1m', 'limits.cpu': '2m', pods: '1', cpu: '1m', ...count },
    ],
    [
      'an init container charges its memory',
      { initContainers: [requestsAndLimits({ memory: '1m' }, { memory: '2m' })] },
      { 'requests.memory': '1m', 'limits.memory': '2m', pods: '1', memory: '1m', ...count },
    ],
    [
      'an init container charges its local ephemeral storage',
      { initContainers: [requestsAndLimits({ 'ephemeral-storage': '32Mi' }, { 'ephemeral-storage': '64Mi' })] },
      { 'ephemeral-storage': '32Mi', 'requests.ephemeral-storage': '32Mi', 'limits.ephemeral-storage': '64Mi', pods: '1', ...count },
    ],
    [
      'an init container charges its hugepages',
      { initContainers: [{ requests: { 'hugepages-2Mi': '100Mi' } }] },
      { 'hugepages-2Mi': '100Mi', 'requests.hugepages-2Mi': '100Mi', pods: '1', ...count },
    ],
    [
      'an init container charges the requests of an extended resource',
      { initContainers: [requestsAndLimits(dongle, dongle)] },
      { 'requests.example.com/dongle': '3', pods: '1', ...count },
    ],
    [
      'a container charges its cpu',
      { containers: [requestsAndLimits({ cpu: '1m' }, { cpu: '2m' })] },
      { 'requests.cpu': '1m', 'limits.cpu': '2m', pods: '1', cpu: '1m', ...count },
    ],
    [
      'a container charges its memory',
      { containers: [requestsAndLimits({ memory: '1m' }, { memory: '2m' })] },
      { 'requests.memory': '1m', 'limits.memory': '2m', pods: '1', memory: '1m', ...count },
    ],
    [
      'a container charges its local ephemeral storage',
      { containers: [requestsAndLimits({ 'ephemeral-storage': '32Mi' }, { 'ephemeral-storage': '64Mi' })] },
      { 'ephemeral-storage': '32Mi', 'requests.ephemeral-storage': '32Mi', 'limits.ephemeral-storage': '64Mi', pods: '1', ...count },
    ],
    [
      'a container charges its hugepages',
      { containers: [{ requests: { 'hugepages-2Mi': '100Mi' } }] },
      { 'hugepages-2Mi': '100Mi', 'requests.hugepages-2Mi': '100Mi', pods: '1', ...count },
    ],
    [
      'a container charges the requests of an extended resource',
      { containers: [requestsAndLimits(dongle, dongle)] },
      { 'requests.example.com/dongle': '3', pods: '1', ...count },
    ],
    [
      'a succeeded pod is still counted but charges nothing else',
      { containers: [requestsAndLimits(dongle, dongle)], phase: 'Succeeded' },
      count,
    ],
    [
      'a failed pod is still counted but charges nothing else',
      { containers: [requestsAndLimits({ cpu: '1' }, { cpu: '1' })], phase: 'Failed' },
      count,
    ],
    [
      'the largest init container overrides the sum of the containers',
      {
        initContainers: [
          requestsAndLimits(
            { cpu: '4', memory: '100M', 'example.com/dongle': '4' },
            { cpu: '8', memory: '200M', 'example.com/dongle': '4' },
          ),
          requestsAndLimits(
            { cpu: '1', memory: '50M', 'example.com/dongle': '2' },
            { cpu: '2', memory: '100M', 'example.com/dongle': '2' },
          ),
        ],
        containers: [
          requestsAndLimits(
            { cpu: '1', memory: '50M', 'example.com/dongle': '1' },
            { cpu: '2', memory: '100M', 'example.com/dongle': '1' },
          ),
          requestsAndLimits({ cpu: '2', memory: '25M', 'example.com/dongle': '2' }, { cpu: '5', memory: '50M', 'example.com/dongle': '2' }),
        ],
      },
      {
        'requests.cpu': '4',
        'requests.memory': '100M',
        'limits.cpu': '8',
        'limits.memory': '200M',
        pods: '1',
        cpu: '4',
        memory: '100M',
        'requests.example.com/dongle': '4',
        ...count,
      },
    ],
    [
      'a pod past its deletion grace period charges nothing but its count',
      {
        metadata: { deletionTimestamp: at(NOW - 60_000), deletionGracePeriodSeconds: 30 },
        spec: { terminationGracePeriodSeconds: 30 },
        containers: [requestsAndLimits({ cpu: '1', memory: '50M' }, { cpu: '2', memory: '100M' })],
      },
      count,
    ],
    [
      'a pod within its deletion grace period is charged',
      {
        metadata: { deletionTimestamp: at(NOW), deletionGracePeriodSeconds: 30 },
        containers: [requestsAndLimits({ cpu: '1' }, { cpu: '2' })],
      },
      { 'requests.cpu': '1', 'limits.cpu': '2', pods: '1', cpu: '1', ...count },
    ],
    [
      'pod overhead is charged',
      { overhead: { cpu: '1' }, containers: [requestsAndLimits({ cpu: '1' }, { cpu: '2' })] },
      { 'requests.cpu': '2', 'limits.cpu': '3', pods: '1', cpu: '2', ...count },
    ],
    [
      'pod-level cpu is charged',
      { podResources: { requests: { cpu: '1m' }, limits: { cpu: '2m' } } },
      { 'requests.cpu': '1m', 'limits.cpu': '2m', pods: '1', cpu: '1m', ...count },
    ],
    [
      'pod-level memory is charged',
      { podResources: { requests: { memory: '1Mi' }, limits: { memory: '2Mi' } } },
      { 'requests.memory': '1Mi', 'limits.memory': '2Mi', pods: '1', memory: '1Mi', ...count },
    ],
    [
      'pod-level memory is charged beside container ephemeral storage',
      {
        podResources: { requests: { memory: '1Mi' }, limits: { memory: '2Mi' } },
        containers: [requestsAndLimits({ 'ephemeral-storage': '32Mi' }, { 'ephemeral-storage': '64Mi' })],
      },
      {
        'ephemeral-storage': '32Mi',
        'requests.ephemeral-storage': '32Mi',
        'limits.ephemeral-storage': '64Mi',
        pods: '1',
        'requests.memory': '1Mi',
        'limits.memory': '2Mi',
        memory: '1Mi',
        ...count,
      },
    ],
    [
      'a sidecar is charged beside the containers',
      {
        initContainers: [{ requests: { cpu: '1' }, limits: { cpu: '1' }, sidecar: true }, requestsAndLimits({ cpu: '3' }, { cpu: '3' })],
        containers: [requestsAndLimits({ cpu: '1' }, { cpu: '2' })],
      },
      { 'requests.cpu': '4', 'limits.cpu': '4', pods: '1', cpu: '4', ...count },
    ],
    [
      'hugepage limits are not charged, only their requests',
      { containers: [requestsAndLimits({ 'hugepages-1Gi': '2Gi' }, { 'hugepages-1Gi': '2Gi' })] },
      { 'hugepages-1Gi': '2Gi', 'requests.hugepages-1Gi': '2Gi', pods: '1', ...count },
    ],
    [
      'a DRA device class resource is charged as an extended resource',
      { containers: [{ requests: { 'deviceclass.resource.kubernetes.io/gpu': '2' } }] },
      { 'requests.deviceclass.resource.kubernetes.io/gpu': '2', pods: '1', ...count },
    ],
    ['a pod without resources is charged one pod', { containers: [{ name: 'app' }] }, { pods: '1', ...count }],
  ])('%s', (_name, data, expected) => {
    expect(values(evaluator.usage(pod(data), { now: NOW }))).toEqual(values(expected));
  });

  it('a pod marked for deletion is charged when no clock is given', () => {
    const object = pod({
      metadata: { deletionTimestamp: at(NOW - 3_600_000), deletionGracePeriodSeconds: 30 },
      containers: [requestsAndLimits({ cpu: '1' }, { cpu: '1' })],
    });
    expect(values(evaluator.usage(object))).toEqual(values({ cpu: '1', 'requests.cpu': '1', 'limits.cpu': '1', pods: '1', ...count }));
  });
});

describe('pod usage during an in-place resize', () => {
  // Kubernetes charges the larger of what the spec asks for and what the kubelet applied.
  it.each<[string, PodSpecData, Amounts]>([
    [
      'memory applied below the new request charges the request',
      { containers: [requestsAndLimits({ memory: '200Mi' }, { memory: '400Mi' })], containerStatuses: [{ requests: { memory: '150Mi' } }] },
      { 'requests.memory': '200Mi', 'limits.memory': '400Mi', pods: '1', memory: '200Mi', 'count/pods': '1' },
    ],
    [
      'cpu applied above the new request charges what is applied',
      { containers: [requestsAndLimits({ cpu: '100m' }, { cpu: '200m' })], containerStatuses: [{ requests: { cpu: '150m' } }] },
      { 'requests.cpu': '150m', 'limits.cpu': '200m', pods: '1', cpu: '150m', 'count/pods': '1' },
    ],
    [
      'cpu and memory applied above the new requests charge what is applied',
      {
        containers: [requestsAndLimits({ cpu: '100m', memory: '200Mi' }, { cpu: '200m', memory: '400Mi' })],
        containerStatuses: [{ requests: { cpu: '150m', memory: '250Mi' } }],
      },
      {
        'requests.cpu': '150m',
        'limits.cpu': '200m',
        'requests.memory': '250Mi',
        'limits.memory': '400Mi',
        pods: '1',
        cpu: '150m',
        memory: '250Mi',
        'count/pods': '1',
      },
    ],
    [
      'a status without applied resources charges the spec',
      {
        containers: [requestsAndLimits({ cpu: '100m', memory: '200Mi' }, { cpu: '200m', memory: '400Mi' })],
        containerStatuses: [{ applied: false }],
      },
      {
        'requests.cpu': '100m',
        'limits.cpu': '200m',
        'requests.memory': '200Mi',
        'limits.memory': '400Mi',
        pods: '1',
        cpu: '100m',
        memory: '200Mi',
        'count/pods': '1',
      },
    ],
  ])('%s', (_name, data, expected) => {
    expect(values(evaluator.usage(pod(data)))).toEqual(values(expected));
  });
});

describe('pod usage summed over the pods a quota matches', () => {
  const cpu1 = { cpu: '1' };
  const make = (name: string, priorityClassName: string, resources: Amounts | undefined, phase: string): KubeObject =>
    pod({
      metadata: { name },
      spec: { priorityClassName },
      containers: [resources ? requestsAndLimits(resources, resources) : {}],
      phase,
    });
  const highPriority: ScopedResourceSelectorRequirement = { scopeName: 'PriorityClass', operator: 'In', values: ['high-priority'] };
  const exists = (scopeName: string): ScopedResourceSelectorRequirement => ({ scopeName, operator: 'Exists' });

  it.each<[string, KubeObject[], ScopedResourceSelectorRequirement[], Amounts]>([
    ['no pods charge nothing', [], [], {}],
    [
      'running pods are all charged',
      [make('p1', '', cpu1, 'Running'), make('p2', '', cpu1, 'Running')],
      [],
      { pods: '2', 'count/pods': '2', cpu: '2', 'requests.cpu': '2', 'limits.cpu': '2' },
    ],
    [
      'a terminal pod is counted but not charged',
      [make('p1', '', cpu1, 'Running'), make('p2', '', cpu1, 'Succeeded')],
      [],
      { pods: '1', 'count/pods': '2', cpu: '1', 'requests.cpu': '1', 'limits.cpu': '1' },
    ],
    [
      'only pods of the selected priority class are charged',
      [
        make('p1', 'high-priority', cpu1, 'Running'),
        make('p2', 'high-priority', cpu1, 'Succeeded'),
        make('p3', 'low-priority', cpu1, 'Running'),
      ],
      [highPriority],
      { pods: '1', 'count/pods': '2', cpu: '1', 'requests.cpu': '1', 'limits.cpu': '1' },
    ],
    [
      'a PriorityClass scope and selector together select the same pods',
      [
        make('p1', 'high-priority', cpu1, 'Running'),
        make('p2', 'high-priority', cpu1, 'Succeeded'),
        make('p3', 'low-priority', cpu1, 'Running'),
      ],
      [exists('PriorityClass'), highPriority],
      { pods: '1', 'count/pods': '2', cpu: '1', 'requests.cpu': '1', 'limits.cpu': '1' },
    ],
    [
      'every scope must match',
      [
        make('p1', 'high-priority', cpu1, 'Running'),
        make('p2', 'high-priority', cpu1, 'Succeeded'),
        make('p3', 'low-priority', cpu1, 'Running'),
        make('p4', 'high-priority', undefined, 'Failed'),
      ],
      [exists('PriorityClass'), exists('BestEffort'), highPriority],
      { 'count/pods': '1' },
    ],
  ])('%s', (_name, pods, requirements, expected) => {
    const matching = pods.filter((p) => requirements.every((requirement) => evaluator.matchingScopes(p, [requirement]).length > 0));
    const used = matching.reduce((sum, p) => Resources.add(sum, evaluator.usage(p)), Resources.EMPTY);
    expect(values(used)).toEqual(values(expected));
  });
});

describe('pod scopes', () => {
  const all: ScopedResourceSelectorRequirement[] = [
    { scopeName: 'Terminating', operator: 'Exists' },
    { scopeName: 'NotTerminating', operator: 'Exists' },
    { scopeName: 'BestEffort', operator: 'Exists' },
    { scopeName: 'NotBestEffort', operator: 'Exists' },
    { scopeName: 'PriorityClass', operator: 'In', values: ['class1'] },
    { scopeName: 'CrossNamespacePodAffinity', operator: 'Exists' },
  ];
  const named = (...names: string[]) => all.filter((scope) => names.includes(scope.scopeName));
  const deadline = { activeDeadlineSeconds: 30 };
  const term = (extra: Record<string, unknown>) => ({ labelSelector: {}, ...extra });

  it.each<[string, PodSpecData, ScopedResourceSelectorRequirement[] | undefined, ScopedResourceSelectorRequirement[]]>([
    ['an empty pod is NotTerminating and BestEffort', {}, undefined, named('NotTerminating', 'BestEffort')],
    [
      'a pod of the class matches the PriorityClass selector',
      { spec: { priorityClassName: 'class1' } },
      undefined,
      named('NotTerminating', 'BestEffort', 'PriorityClass'),
    ],
    [
      'a pod with requests is NotBestEffort',
      {
        containers: [
          requestsAndLimits(
            { cpu: '1', memory: '50M', 'example.com/dongle': '1' },
            { cpu: '2', memory: '100M', 'example.com/dongle': '1' },
          ),
        ],
      },
      undefined,
      named('NotTerminating', 'NotBestEffort'),
    ],
    ['a pod with an active deadline is Terminating', { spec: deadline }, undefined, named('Terminating', 'BestEffort')],
    ['only the asked scopes are returned', { spec: deadline }, named('Terminating'), named('Terminating')],
    [
      'required affinity naming and selecting namespaces is cross-namespace',
      {
        spec: {
          ...deadline,
          affinity: {
            podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ namespaces: ['ns1'], namespaceSelector: {} })] },
          },
        },
      },
      undefined,
      named('Terminating', 'BestEffort', 'CrossNamespacePodAffinity'),
    ],
    [
      'required affinity naming namespaces is cross-namespace',
      {
        spec: {
          ...deadline,
          affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ namespaces: ['ns1'] })] } },
        },
      },
      undefined,
      named('Terminating', 'BestEffort', 'CrossNamespacePodAffinity'),
    ],
    [
      'preferred affinity naming namespaces is cross-namespace',
      {
        spec: {
          ...deadline,
          affinity: {
            podAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 1, podAffinityTerm: term({ namespaces: ['ns2'], namespaceSelector: {} }) },
              ],
            },
          },
        },
      },
      undefined,
      named('Terminating', 'BestEffort', 'CrossNamespacePodAffinity'),
    ],
    [
      'preferred affinity selecting namespaces is cross-namespace',
      {
        spec: {
          ...deadline,
          affinity: {
            podAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: term({ namespaceSelector: {} }) }],
            },
          },
        },
      },
      undefined,
      named('Terminating', 'BestEffort', 'CrossNamespacePodAffinity'),
    ],
    [
      'preferred anti-affinity selecting namespaces is cross-namespace',
      {
        spec: {
          ...deadline,
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: term({ namespaceSelector: {} }) }],
            },
          },
        },
      },
      undefined,
      named('Terminating', 'BestEffort', 'CrossNamespacePodAffinity'),
    ],
    [
      'required anti-affinity naming namespaces is cross-namespace',
      {
        spec: {
          ...deadline,
          affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ namespaces: ['ns3'] })] } },
        },
      },
      undefined,
      named('Terminating', 'BestEffort', 'CrossNamespacePodAffinity'),
    ],
    [
      'affinity within the own namespace is not cross-namespace',
      { spec: { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ namespaces: [] })] } } } },
      undefined,
      named('NotTerminating', 'BestEffort'),
    ],
    [
      'a negative active deadline is NotTerminating',
      { spec: { activeDeadlineSeconds: -1 } },
      undefined,
      named('NotTerminating', 'BestEffort'),
    ],
    ['an unknown scope never matches', {}, [{ scopeName: 'VolumeAttributesClass', operator: 'Exists' }], []],
  ])('%s', (_name, data, scopes, expected) => {
    expect(evaluator.matchingScopes(pod(data), scopes ?? all)).toEqual(expected);
  });

  const withClass = pod({ spec: { priorityClassName: 'high' } });
  const withoutClass = pod({});
  it.each<[string, ScopedResourceSelectorRequirement, boolean, boolean]>([
    ['In', { scopeName: 'PriorityClass', operator: 'In', values: ['high', 'low'] }, true, false],
    ['In another class', { scopeName: 'PriorityClass', operator: 'In', values: ['low'] }, false, false],
    ['NotIn', { scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }, false, true],
    ['NotIn another class', { scopeName: 'PriorityClass', operator: 'NotIn', values: ['low'] }, true, true],
    ['Exists', { scopeName: 'PriorityClass', operator: 'Exists' }, true, false],
    ['DoesNotExist', { scopeName: 'PriorityClass', operator: 'DoesNotExist' }, false, true],
  ])('PriorityClass %s matches a pod with a class: %s, without: %s', (_name, scope, matchesWith, matchesWithout) => {
    expect(evaluator.matchingScopes(withClass, [scope]).length === 1).toBe(matchesWith);
    expect(evaluator.matchingScopes(withoutClass, [scope]).length === 1).toBe(matchesWithout);
  });

  it.each<[string, ScopedResourceSelectorRequirement]>([
    ['In without values', { scopeName: 'PriorityClass', operator: 'In', values: [] }],
    ['DoesNotExist with values', { scopeName: 'PriorityClass', operator: 'DoesNotExist', values: ['high'] }],
    ['an unknown operator', { scopeName: 'PriorityClass', operator: 'Equals', values: ['high'] }],
    ['a value that is not a label value', { scopeName: 'PriorityClass', operator: 'In', values: ['not valid!'] }],
  ])('a PriorityClass selector with %s cannot be matched', (_name, scope) => {
    expect(() => evaluator.matchingScopes(withClass, [scope])).toThrow(DomainError);
  });

  it('an Exists PriorityClass selector is answered without checking its values', () => {
    const scope = { scopeName: 'PriorityClass', operator: 'Exists', values: ['ignored'] };
    expect(evaluator.matchingScopes(withClass, [scope])).toEqual([scope]);
  });

  it('limited scopes no matched quota covers are uncovered', () => {
    const limited = named('PriorityClass', 'BestEffort');
    const matched = [{ scopeName: 'PriorityClass', operator: 'In', values: ['other'] }];
    expect(evaluator.uncoveredQuotaScopes(limited, matched)).toEqual(named('BestEffort'));
  });
});

describe('which pod operations are charged', () => {
  const withDeadline = (seconds: number | undefined) => pod(seconds === undefined ? {} : { spec: { activeDeadlineSeconds: seconds } });
  it.each<[string, Operation, string | undefined, KubeObject | undefined, KubeObject | undefined, boolean]>([
    ['create', 'CREATE', undefined, undefined, undefined, true],
    ['an update dropping the active deadline', 'UPDATE', undefined, withDeadline(undefined), withDeadline(1), true],
    ['an update adding an active deadline', 'UPDATE', undefined, withDeadline(1), withDeadline(undefined), true],
    ['an update changing the active deadline', 'UPDATE', undefined, withDeadline(1), withDeadline(2), false],
    ['an update without the objects', 'UPDATE', undefined, undefined, undefined, false],
    ['delete', 'DELETE', undefined, undefined, undefined, false],
    ['connect', 'CONNECT', undefined, undefined, undefined, false],
    ['create of a subresource', 'CREATE', 'subresource', undefined, undefined, false],
    ['update of a subresource', 'UPDATE', 'subresource', undefined, undefined, false],
    ['update of the resize subresource', 'UPDATE', 'resize', undefined, undefined, true],
    ['create of the resize subresource', 'CREATE', 'resize', undefined, undefined, false],
  ])('%s', (_name, operation, subresource, object, oldObject, expected) => {
    expect(evaluator.handles(operation, subresource, object, oldObject)).toBe(expected);
  });
});

describe('quota names a pod is charged for', () => {
  it('keeps the pod names, hugepages and extended requests and drops the rest', () => {
    const input = [
      'services',
      'requests.storage',
      'pods',
      'count/pods',
      'cpu',
      'memory',
      'ephemeral-storage',
      'requests.cpu',
      'requests.memory',
      'requests.ephemeral-storage',
      'limits.cpu',
      'limits.memory',
      'limits.ephemeral-storage',
      'hugepages-2Mi',
      'requests.hugepages-1Gi',
      'limits.hugepages-2Mi',
      'requests.example.com/dongle',
      'example.com/dongle',
      'limits.example.com/dongle',
      'requests.deviceclass.resource.kubernetes.io/gpu',
      'requests.kubernetes.io/unknown',
      'count/services',
    ];
    expect(evaluator.matchingResources(input)).toEqual([
      'count/pods',
      'cpu',
      'ephemeral-storage',
      'limits.cpu',
      'limits.ephemeral-storage',
      'limits.memory',
      'memory',
      'pods',
      'requests.cpu',
      'requests.ephemeral-storage',
      'requests.memory',
      'hugepages-2Mi',
      'requests.hugepages-1Gi',
      'requests.example.com/dongle',
      'requests.deviceclass.resource.kubernetes.io/gpu',
    ]);
  });

  it('matches nothing for a quota on other kinds', () => {
    expect(evaluator.matchingResources(['services', 'configmaps', 'count/secrets'])).toEqual([]);
  });
});

describe('invalid pods', () => {
  it('rejects an invalid request quantity naming the field', () => {
    const object = pod({ containers: [{ requests: { cpu: 'lots' } }] });
    let error: unknown;
    try {
      evaluator.usage(object);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    // Unreadable, as the API server's decoder finds it (400), not invalid (422).
    expect((error as DomainError).code).toBe('QuantityInvalid');
    expect((error as DomainError).causes.map((cause) => cause.field)).toEqual(['spec.containers[0].resources.requests[cpu]']);
  });

  it('reports every invalid quantity at once', () => {
    const object = pod({
      initContainers: [{ limits: { memory: '1Qi' } }],
      containers: [{ requests: { cpu: '1' } }, { requests: { cpu: 'x' } }],
      overhead: { cpu: '--1' },
    });
    expect(() => evaluator.usage(object)).toThrow(
      expect.objectContaining({
        code: 'QuantityInvalid',
        causes: [
          expect.objectContaining({ field: 'spec.containers[1].resources.requests[cpu]', reason: 'FieldValueInvalid' }),
          expect.objectContaining({ field: 'spec.initContainers[0].resources.limits[memory]' }),
          expect.objectContaining({ field: 'spec.overhead[cpu]' }),
        ],
      }),
    );
  });

  it('rejects containers that are not a list', () => {
    const object: KubeObject = { kind: 'Pod', spec: { containers: { name: 'app' } } };
    expect(() => evaluator.usage(object)).toThrow(
      expect.objectContaining({
        code: 'ObjectInvalid',
        causes: [expect.objectContaining({ field: 'spec.containers', reason: 'FieldValueTypeInvalid' })],
      }),
    );
  });

  it('checks quantities in the scope and must-specify questions too', () => {
    const object = pod({ containers: [{ name: 'app', limits: { memory: 'a lot' } }] });
    expect(() => evaluator.matchingScopes(object, [{ scopeName: 'BestEffort', operator: 'Exists' }])).toThrow(DomainError);
    expect(() => evaluator.constraints(['memory'], object)).toThrow(DomainError);
  });
});
