import { describe, expect, it } from 'vitest';
import { readPod } from './pod-model.js';
import { computePodQOS, podLimits, podRequests, QUOTA_OPTIONS } from './pod-resources.js';
import { type Amounts, type ContainerSpec, pod, type PodSpecData, values } from './spec-support.js';

// Cases beyond the ported tables, each answered from k8s.io/component-helpers/resource
// (PodRequests/PodLimits, master: spec, allocation and applied resources are summed each on
// its own and the largest sum wins) and pkg/apis/core/v1/helper/qos (ComputePodQOS, master:
// each container classed on its own). The quota evaluator reads the status (QUOTA_OPTIONS).

const cpu = (value: string): Amounts => ({ cpu: value });

describe('pod requests while a resize is in flight (Kubernetes cases)', () => {
  it.each<[string, PodSpecData, Amounts]>([
    [
      'takes the largest of the sums, not the sum of the largest: 1+2 asked, 2+1 allocated is 3',
      {
        containers: [
          { name: 'c1', requests: cpu('1') },
          { name: 'c2', requests: cpu('2') },
        ],
        containerStatuses: [
          { name: 'c1', applied: false, allocated: cpu('2') },
          { name: 'c2', applied: false, allocated: cpu('1') },
        ],
      },
      cpu('3'),
    ],
    [
      'applies the same rule to applied requests moving in opposite directions: 3, not 4',
      {
        containers: [
          { name: 'c1', requests: cpu('1') },
          { name: 'c2', requests: cpu('2') },
        ],
        containerStatuses: [
          { name: 'c1', requests: cpu('2') },
          { name: 'c2', requests: cpu('1') },
        ],
      },
      cpu('3'),
    ],
    [
      'takes each resource from whichever of spec, allocation and applied is largest',
      {
        containers: [{ name: 'c', requests: { cpu: '30m', memory: '20M', 'ephemeral-storage': '10G' } }],
        containerStatuses: [
          {
            name: 'c',
            allocated: { cpu: '20m', memory: '10M', 'ephemeral-storage': '30G' },
            requests: { cpu: '10m', memory: '30M', 'ephemeral-storage': '20G' },
          },
        ],
      },
      { cpu: '30m', memory: '30M', 'ephemeral-storage': '30G' },
    ],
    [
      'leaves the spec out of an infeasible resize: allocated 4 beats applied 2 and the asked 6 is ignored',
      {
        containers: [{ name: 'c', requests: cpu('6') }],
        containerStatuses: [{ name: 'c', allocated: cpu('4'), requests: cpu('2') }],
        resizeInfeasible: true,
      },
      cpu('4'),
    ],
    [
      'drops a container without a status from an infeasible resize altogether',
      {
        containers: [
          { name: 'c1', requests: cpu('4') },
          { name: 'c2', requests: cpu('3') },
        ],
        containerStatuses: [{ name: 'c1', requests: cpu('2') }],
        resizeInfeasible: true,
      },
      cpu('2'),
    ],
    [
      'reads an allocation even when the status has no applied resources',
      { containers: [{ name: 'c', requests: cpu('1') }], containerStatuses: [{ name: 'c', applied: false, allocated: cpu('3') }] },
      cpu('3'),
    ],
    [
      'falls back to the allocation when the applied resources carry no requests',
      { containers: [{ name: 'c', requests: cpu('1') }], containerStatuses: [{ name: 'c', limits: cpu('5'), allocated: cpu('2') }] },
      cpu('2'),
    ],
    [
      'counts an empty applied request list as applied (nothing), not as missing: 5, not 6',
      {
        containers: [
          { name: 'c1', requests: cpu('1') },
          { name: 'c2', requests: cpu('1') },
        ],
        containerStatuses: [
          { name: 'c1', requests: {} },
          { name: 'c2', requests: cpu('5') },
        ],
      },
      cpu('5'),
    ],
    [
      'reads the status of a plain init container too',
      {
        initContainers: [{ name: 'init', requests: cpu('4') }],
        containers: [{ name: 'c', requests: cpu('1') }],
        initContainerStatuses: [{ name: 'init', applied: false, allocated: cpu('6') }],
      },
      cpu('6'),
    ],
    [
      'adds a resized sidecar at its applied size beside the containers',
      {
        initContainers: [{ name: 'side', requests: cpu('1'), sidecar: true }],
        containers: [{ name: 'c', requests: cpu('1') }],
        initContainerStatuses: [{ name: 'side', requests: cpu('3') }],
      },
      cpu('4'),
    ],
    [
      'takes the first status of a name, regular container statuses first',
      {
        containers: [{ name: 'app', requests: cpu('1') }],
        containerStatuses: [{ name: 'app', applied: false, allocated: cpu('2') }],
        initContainerStatuses: [{ name: 'app', applied: false, allocated: cpu('5') }],
      },
      cpu('2'),
    ],
    [
      'adds the overhead after the resize maximum',
      { containers: [{ name: 'c', requests: cpu('1') }], containerStatuses: [{ name: 'c', requests: cpu('2') }], overhead: cpu('1') },
      cpu('3'),
    ],
    [
      'lets pod-level requests override whatever the containers were resized to',
      {
        podResources: { requests: cpu('1') },
        containers: [{ name: 'c', requests: cpu('1') }],
        containerStatuses: [{ name: 'c', requests: cpu('4') }],
      },
      cpu('1'),
    ],
  ])('%s', (_name, data, expected) => {
    expect(values(podRequests(readPod(pod(data)), QUOTA_OPTIONS))).toEqual(values(expected));
  });
});

describe('pod limits while a resize is in flight (Kubernetes cases)', () => {
  const lim = (name: string, value: string, sidecar?: boolean): ContainerSpec => ({
    name,
    limits: cpu(value),
    ...(sidecar ? { sidecar } : {}),
  });
  it.each<[string, PodSpecData, Amounts]>([
    [
      'takes the larger of the summed spec and the summed applied limits: 3, not 4',
      {
        containers: [lim('c1', '1'), lim('c2', '2')],
        containerStatuses: [
          { name: 'c1', limits: cpu('2') },
          { name: 'c2', limits: cpu('1') },
        ],
      },
      cpu('3'),
    ],
    [
      'counts only applied limits in an infeasible resize, dropping containers without a status',
      { containers: [lim('c1', '4'), lim('c2', '3')], containerStatuses: [{ name: 'c1', limits: cpu('2') }], resizeInfeasible: true },
      cpu('2'),
    ],
    [
      'falls back to the spec when the applied resources carry no limits',
      { containers: [lim('c', '2')], containerStatuses: [{ name: 'c', requests: cpu('1') }] },
      cpu('2'),
    ],
    [
      'adds a sidecar limited higher than its spec at the applied value',
      {
        initContainers: [lim('side', '1', true)],
        containers: [lim('c', '1')],
        initContainerStatuses: [{ name: 'side', limits: cpu('3') }],
      },
      cpu('4'),
    ],
    [
      'never adds the overhead to a zero limit',
      { containers: [{ name: 'c', limits: { cpu: '0', memory: '1Gi' } }], overhead: { cpu: '1', memory: '1Mi' } },
      { cpu: '0', memory: '1025Mi' },
    ],
  ])('%s', (_name, data, expected) => {
    expect(values(podLimits(readPod(pod(data)), QUOTA_OPTIONS))).toEqual(values(expected));
  });
});

describe('pod QoS class (Kubernetes cases)', () => {
  const c = (requests: Amounts, limits: Amounts): ContainerSpec => ({ requests, limits });
  const both = (value: string, memory: string): Amounts => ({ cpu: value, memory });
  it.each<[string, PodSpecData, string]>([
    ['a pod without containers is BestEffort', {}, 'BestEffort'],
    ['explicit zero requests alone are BestEffort', { containers: [c(both('0', '0'), {})] }, 'BestEffort'],
    ['only extended resources are BestEffort', { containers: [c({ 'example.com/gpu': '1' }, { 'example.com/gpu': '1' })] }, 'BestEffort'],
    [
      'only ephemeral storage is BestEffort',
      { containers: [c({ 'ephemeral-storage': '1Gi' }, { 'ephemeral-storage': '2Gi' })] },
      'BestEffort',
    ],
    ['limits without requests (not yet defaulted) are Burstable', { containers: [c({}, both('1', '1Gi'))] }, 'Burstable'],
    ['equal values written differently are Guaranteed', { containers: [c(both('1', '1Gi'), both('1000m', '1024Mi'))] }, 'Guaranteed'],
    [
      'unequal ephemeral storage does not spoil Guaranteed',
      { containers: [c({ ...both('1', '1Gi'), 'ephemeral-storage': '1Gi' }, { ...both('1', '1Gi'), 'ephemeral-storage': '2Gi' })] },
      'Guaranteed',
    ],
    ['memory guaranteed with cpu at zero is Burstable', { containers: [c(both('0', '1Gi'), both('0', '1Gi'))] }, 'Burstable'],
    [
      'a Guaranteed container beside a hugepages-only one is Burstable',
      { containers: [c(both('1', '1Gi'), both('1', '1Gi')), c({ 'hugepages-2Mi': '2Mi' }, { 'hugepages-2Mi': '2Mi' })] },
      'Burstable',
    ],
    [
      'Guaranteed init and regular containers are Guaranteed',
      { initContainers: [c(both('2', '2Gi'), both('2', '2Gi'))], containers: [c(both('1', '1Gi'), both('1', '1Gi'))] },
      'Guaranteed',
    ],
    [
      'a BestEffort init container beside Guaranteed containers is Burstable',
      { initContainers: [c({}, {})], containers: [c(both('1', '1Gi'), both('1', '1Gi'))] },
      'Burstable',
    ],
    [
      'pod-level resources of hugepages only are BestEffort whatever the containers say',
      { podResources: { requests: { 'hugepages-2Mi': '2Mi' } }, containers: [c(both('1', '1Gi'), both('1', '1Gi'))] },
      'BestEffort',
    ],
    [
      'pod-level memory alone, equal, is Burstable',
      { podResources: { requests: { memory: '1Gi' }, limits: { memory: '1Gi' } }, containers: [c({}, {})] },
      'Burstable',
    ],
    [
      'pod-level limits without requests are Burstable',
      { podResources: { limits: both('1', '1Gi') }, containers: [c({}, {})] },
      'Burstable',
    ],
  ])('%s', (_name, data, expected) => {
    expect(computePodQOS(readPod(pod(data)))).toBe(expected);
  });
});
