import { describe, expect, it } from 'vitest';
import { readPod } from './pod-model.js';
import {
  aggregateContainerLimits,
  aggregateContainerRequests,
  computePodQOS,
  isPodLevelResourcesSet,
  podLimits,
  podQOS,
  podRequests,
  type PodResourcesOptions,
} from './pod-resources.js';
import { type Amounts, type ContainerSpec, pod, type PodSpecData, values } from './spec-support.js';

// Ported from k8s.io/component-helpers/resource/helpers_test.go (the successor of
// pkg/api/v1/resource/helpers_test.go) and pkg/apis/core/v1/helper/qos/qos_test.go.

const cpuMem = (cpu?: string, memory?: string): Amounts => ({
  ...(cpu !== undefined ? { cpu } : {}),
  ...(memory !== undefined ? { memory } : {}),
});

/** One container and one init container with the same resources, plus overhead. */
function sameInitAndContainer(requests: Amounts, limits: Amounts, overhead: Amounts): PodSpecData {
  return {
    containers: [{ name: 'foo', requests, limits }],
    initContainers: [{ name: 'init-foo', requests, limits }],
    overhead,
  };
}

describe('pod requests and limits with overhead', () => {
  it.each<[string, PodSpecData, Amounts, Amounts]>([
    ['a pod with only a cpu limit has that limit and no requests', sameInitAndContainer({}, { cpu: '9' }, {}), {}, { cpu: '9' }],
    ['overhead alone becomes the requests but never a limit', sameInitAndContainer({}, {}, cpuMem('5', '5')), cpuMem('5', '5'), {}],
    ['overhead is added to the requests', sameInitAndContainer(cpuMem('1', '10'), {}, cpuMem('5', '5')), cpuMem('6', '15'), {}],
    [
      'overhead is added to every limit that is set',
      sameInitAndContainer(cpuMem('1', '10'), cpuMem('2', '12'), cpuMem('5', '5')),
      cpuMem('6', '15'),
      cpuMem('7', '17'),
    ],
    [
      'overhead is not added to a resource without a limit',
      sameInitAndContainer(cpuMem('1', '10'), { cpu: '2' }, cpuMem('5', '5')),
      cpuMem('6', '15'),
      { cpu: '7' },
    ],
  ])('%s', (_name, data, requests, limits) => {
    const model = readPod(pod(data));
    expect(values(podRequests(model))).toEqual(values(requests));
    expect(values(podLimits(model))).toEqual(values(limits));
  });
});

describe('pod requests and limits without overhead', () => {
  const two: ContainerSpec[] = [
    { name: 'foobar', requests: cpuMem('1', '5'), limits: cpuMem('2', '10') },
    { name: 'foobar2', requests: cpuMem('4', '12'), limits: cpuMem('8', '24') },
  ];
  it.each<[string, PodSpecData, Amounts, Amounts]>([
    ['two containers are summed', { containers: two }, cpuMem('5', '17'), cpuMem('10', '34')],
    ['excluded overhead is not counted', { containers: two, overhead: cpuMem('3', '8') }, cpuMem('5', '17'), cpuMem('10', '34')],
    [
      'the largest init container wins over the containers',
      {
        containers: two,
        overhead: cpuMem('3', '8'),
        initContainers: [
          { name: 'small-init', requests: cpuMem('1', '5'), limits: cpuMem('1', '5') },
          { name: 'big-init', requests: cpuMem('40', '120'), limits: cpuMem('80', '240') },
        ],
      },
      cpuMem('40', '120'),
      cpuMem('80', '240'),
    ],
  ])('%s', (_name, data, requests, limits) => {
    const model = readPod(pod(data));
    expect(values(podRequests(model, { excludeOverhead: true }))).toEqual(values(requests));
    expect(values(podLimits(model, { excludeOverhead: true }))).toEqual(values(limits));
  });
});

/** Containers stating only requests (or only limits) of cpu, for the sidecar tables. */
const cpuOnly = (side: 'requests' | 'limits', cpu: string, name?: string, sidecar?: boolean): ContainerSpec => ({
  ...(name !== undefined ? { name } : {}),
  [side]: { cpu },
  ...(sidecar ? { sidecar } : {}),
});

function sidecarCases(side: 'requests' | 'limits'): [string, PodSpecData, PodResourcesOptions, Amounts][] {
  const c = (cpu: string, name?: string, sidecar?: boolean) => cpuOnly(side, cpu, name, sidecar);
  return [
    ['a larger init container sets the total', { initContainers: [c('4')], containers: [c('1')] }, {}, { cpu: '4' }],
    ['larger containers set the total', { initContainers: [c('2')], containers: [c('2'), c('3')] }, {}, { cpu: '5' }],
    [
      'excluded overhead is left out',
      { overhead: { cpu: '1' }, initContainers: [c('2')], containers: [c('2'), c('3')] },
      { excludeOverhead: true },
      { cpu: '5' },
    ],
    [
      'a restartable init container runs beside the containers',
      { initContainers: [c('1', 'restartable-init-1', true)], containers: [c('1', 'container-1')] },
      {},
      { cpu: '2' },
    ],
    [
      'several restartable init containers add up beside the containers',
      {
        initContainers: [
          c('5', 'init-1'),
          c('1', 'restartable-init-1', true),
          c('2', 'restartable-init-2', true),
          c('3', 'restartable-init-3', true),
        ],
        containers: [c('1', 'container-1')],
      },
      {},
      { cpu: '7' },
    ],
    [
      'an init container needs the sidecars started before it, not those after',
      {
        initContainers: [
          c('5', 'init-1'),
          c('1', 'restartable-init-1', true),
          c('2', 'restartable-init-2', true),
          c('5', 'init-2'),
          c('3', 'restartable-init-3', true),
        ],
        containers: [c('1', 'container-1')],
      },
      {},
      { cpu: '8' },
    ],
    [
      'an init container after a sidecar needs both',
      { initContainers: [c('10', 'restartable-init-1', true), c('200', 'init-1')], containers: [c('100', 'container-1')] },
      {},
      { cpu: '210' },
    ],
  ];
}

describe('pod requests', () => {
  it.each<[string, PodSpecData, PodResourcesOptions, Amounts]>([
    ...sidecarCases('requests'),
    [
      'overhead is added to the requests',
      {
        overhead: { cpu: '1', memory: '1Gi' },
        initContainers: [{ requests: { cpu: '2' }, limits: { cpu: '2' } }],
        containers: [cpuOnly('requests', '2'), cpuOnly('requests', '3')],
      },
      {},
      { cpu: '6', memory: '1Gi' },
    ],
    [
      'an infeasible resize charges what the kubelet applied',
      {
        containers: [cpuOnly('requests', '4', 'container-1')],
        containerStatuses: [{ name: 'container-1', requests: { cpu: '2' } }],
        resizeInfeasible: true,
      },
      { useStatusResources: true },
      { cpu: '2' },
    ],
    [
      'a pending resize charges the larger of desired and applied',
      {
        containers: [cpuOnly('requests', '4', 'container-1')],
        containerStatuses: [{ name: 'container-1', requests: { cpu: '2' } }],
        initContainerStatuses: [{ name: 'restartable-init-1', applied: false, allocated: { cpu: '2' } }],
      },
      { useStatusResources: true },
      { cpu: '4' },
    ],
    [
      'the status is ignored when not asked for',
      {
        containers: [cpuOnly('requests', '4', 'container-1')],
        containerStatuses: [{ name: 'container-1', requests: { cpu: '2' } }],
        resizeInfeasible: true,
      },
      { useStatusResources: false },
      { cpu: '4' },
    ],
  ])('%s', (_name, data, options, expected) => {
    expect(values(podRequests(readPod(pod(data)), options))).toEqual(values(expected));
  });
});

describe('pod limits', () => {
  it.each<[string, PodSpecData, PodResourcesOptions, Amounts]>([
    ...sidecarCases('limits'),
    [
      'overhead raises only the limits that are set',
      {
        overhead: { cpu: '1', memory: '1Gi' },
        initContainers: [cpuOnly('limits', '2')],
        containers: [cpuOnly('limits', '2'), cpuOnly('limits', '3')],
      },
      {},
      { cpu: '6' },
    ],
    ['no limited container leaves the pod unlimited', { initContainers: [], containers: [{}] }, {}, {}],
    [
      'an unlimited container beside a limited one leaves the limited values',
      { initContainers: [], containers: [{ limits: { cpu: '2', memory: '2Gi' } }, {}] },
      {},
      { cpu: '2', memory: '2Gi' },
    ],
    [
      'an unlimited init container beside a limited one leaves the limited values',
      { initContainers: [{ limits: { cpu: '2', memory: '2Gi' } }, {}], containers: [{ limits: { cpu: '1', memory: '1Gi' } }] },
      {},
      { cpu: '2', memory: '2Gi' },
    ],
    [
      'a pod scaled up is limited by its new limit',
      {
        containers: [{ name: 'container-1', limits: { memory: '2Gi' } }],
        containerStatuses: [{ name: 'container-1', limits: { memory: '1Gi' } }],
      },
      { useStatusResources: true },
      { memory: '2Gi' },
    ],
    [
      'a pod scaled down keeps its applied limit until the kubelet lowers it',
      {
        containers: [{ name: 'container-1', limits: { memory: '1Gi' } }],
        containerStatuses: [{ name: 'container-1', limits: { memory: '2Gi' } }],
      },
      { useStatusResources: true },
      { memory: '2Gi' },
    ],
    [
      'a pod scaled down has its new limit when the status is ignored',
      {
        containers: [{ name: 'container-1', limits: { memory: '1Gi' } }],
        containerStatuses: [{ name: 'container-1', limits: { memory: '2Gi' } }],
      },
      { useStatusResources: false },
      { memory: '1Gi' },
    ],
  ])('%s', (_name, data, options, expected) => {
    expect(values(podLimits(readPod(pod(data)), options))).toEqual(values(expected));
  });
});

describe('pod-level resources', () => {
  it.each<[string, { requests?: Amounts; limits?: Amounts } | undefined, boolean]>([
    ['absent', undefined, false],
    ['empty', {}, false],
    ['only an unsupported request', { requests: { 'ephemeral-storage': '1Mi' } }, false],
    ['only an unsupported limit', { limits: { 'ephemeral-storage': '1Mi' } }, false],
    ['a supported request beside an unsupported one', { requests: { 'ephemeral-storage': '1Mi', cpu: '1m' } }, true],
    ['a supported limit beside an unsupported one', { limits: { 'ephemeral-storage': '1Mi', cpu: '1m' } }, true],
  ])('are set or not: %s', (_name, podResources, expected) => {
    expect(isPodLevelResourcesSet(readPod(pod(podResources ? { podResources } : {})))).toBe(expected);
  });

  const c = (requests: Amounts, sidecar?: boolean): ContainerSpec => ({ requests, ...(sidecar ? { sidecar } : {}) });
  it.each<[string, Amounts, ContainerSpec[], ContainerSpec[], boolean, Amounts]>([
    ['nothing set gives nothing', {}, [], [], false, {}],
    ['pod-level memory is ignored when pod-level resources are skipped', { memory: '2Mi' }, [], [], true, {}],
    ['pod-level memory is the request', { memory: '2Mi' }, [], [], false, { memory: '2Mi' }],
    ['pod-level memory joins container cpu', { memory: '2Mi' }, [c({ cpu: '2m' })], [], false, { memory: '2Mi', cpu: '2m' }],
    [
      'an unsupported pod-level resource leaves the container value',
      { storage: '2Mi' },
      [c({ storage: '3Mi' })],
      [],
      false,
      { storage: '3Mi' },
    ],
    ['an unsupported pod-level resource is dropped', { storage: '2Mi' }, [c({ memory: '3Mi' })], [], false, { memory: '3Mi' }],
    ['containers alone are summed', {}, [c({ memory: '3Mi', cpu: '2m' })], [], false, { memory: '3Mi', cpu: '2m' }],
    [
      'pod-level values replace the containers',
      { memory: '6Mi', cpu: '8m' },
      [c({ memory: '3Mi', cpu: '2m' })],
      [],
      false,
      { memory: '6Mi', cpu: '8m' },
    ],
    [
      'an init container can set the total',
      {},
      [c({ memory: '3Mi', cpu: '2m' })],
      [c({ memory: '5Mi', cpu: '4m' })],
      false,
      { memory: '5Mi', cpu: '4m' },
    ],
    [
      'an init container sets the total with pod-level resources skipped',
      {},
      [c({ memory: '3Mi', cpu: '2m' })],
      [c({ memory: '5Mi', cpu: '4m' })],
      true,
      { memory: '5Mi', cpu: '4m' },
    ],
    [
      'a sidecar adds to the containers',
      {},
      [c({ memory: '3Mi', cpu: '2m' })],
      [c({ memory: '5Mi', cpu: '4m' }, true)],
      false,
      { memory: '8Mi', cpu: '6m' },
    ],
    [
      'an init container after a sidecar needs both',
      {},
      [c({ memory: '3Mi', cpu: '2m' })],
      [c({ memory: '5Mi', cpu: '4m' }, true), c({ memory: '6Mi', cpu: '8m' })],
      false,
      { memory: '11Mi', cpu: '12m' },
    ],
    [
      'pod-level values replace containers, sidecars and init containers',
      { memory: '15Mi', cpu: '18m' },
      [c({ memory: '3Mi', cpu: '2m' })],
      [c({ memory: '5Mi', cpu: '4m' }, true), c({ memory: '6Mi', cpu: '8m' })],
      false,
      { memory: '15Mi', cpu: '18m' },
    ],
  ])('requests: %s', (_name, podRequestsSet, containers, initContainers, skip, expected) => {
    const model = readPod(pod({ podResources: { requests: podRequestsSet }, containers, initContainers }));
    expect(values(podRequests(model, { skipPodLevelResources: skip }))).toEqual(values(expected));
  });
});

describe('container aggregates', () => {
  const r = (cpu: string, sidecar?: boolean): ContainerSpec => ({ requests: { cpu }, ...(sidecar ? { sidecar } : {}) });
  const l = (cpu: string, sidecar?: boolean): ContainerSpec => ({ limits: { cpu }, ...(sidecar ? { sidecar } : {}) });
  it.each<[string, ContainerSpec[], ContainerSpec[], Amounts, Amounts]>([
    ['one container with limits', [l('9')], [], {}, { cpu: '9' }],
    ['two containers with limits', [l('9'), l('9')], [], {}, { cpu: '18' }],
    ['one container with requests', [r('9')], [], { cpu: '9' }, {}],
    ['two containers with requests', [r('9'), r('9')], [], { cpu: '18' }, {}],
    ['regular and init containers with requests', [r('9')], [r('9')], { cpu: '9' }, {}],
    ['regular, sidecar and init containers with requests', [r('9')], [r('8', true), r('6')], { cpu: '17' }, {}],
    ['regular and init containers with limits', [l('9')], [l('9')], {}, { cpu: '9' }],
    ['regular, sidecar and init containers with limits', [l('9')], [l('8', true), l('6')], {}, { cpu: '17' }],
  ])('%s', (_name, containers, initContainers, requests, limits) => {
    const model = readPod(pod({ containers, initContainers }));
    expect(values(aggregateContainerRequests(model))).toEqual(values(requests));
    expect(values(aggregateContainerLimits(model))).toEqual(values(limits));
  });
});

describe('pod QoS class', () => {
  const c = (requests: Amounts, limits: Amounts): ContainerSpec => ({ requests, limits });
  it.each<[string, PodSpecData, string]>([
    [
      'one container with equal requests and limits is Guaranteed',
      { containers: [c(cpuMem('100m', '100Mi'), cpuMem('100m', '100Mi'))] },
      'Guaranteed',
    ],
    [
      'two such containers are Guaranteed',
      { containers: [c(cpuMem('100m', '100Mi'), cpuMem('100m', '100Mi')), c(cpuMem('100m', '100Mi'), cpuMem('100m', '100Mi'))] },
      'Guaranteed',
    ],
    ['two containers without resources are BestEffort', { containers: [c({}, {}), c({}, {})] }, 'BestEffort'],
    ['one container without resources is BestEffort', { containers: [c({}, {})] }, 'BestEffort'],
    ['BestEffort beside Burstable is Burstable', { containers: [c({}, {}), c(cpuMem('1'), cpuMem('2'))] }, 'Burstable'],
    [
      'BestEffort beside Guaranteed is Burstable',
      { containers: [c({}, {}), c(cpuMem('10m', '100Mi'), cpuMem('10m', '100Mi'))] },
      'Burstable',
    ],
    ['memory alone, even equal, is Burstable', { containers: [c(cpuMem(undefined, '100Mi'), cpuMem(undefined, '100Mi'))] }, 'Burstable'],
    ['requests without limits are Burstable', { containers: [c(cpuMem('100m', '100Mi'), {})] }, 'Burstable'],
    [
      'Burstable beside Guaranteed is Burstable',
      { containers: [c(cpuMem('1', '100Mi'), cpuMem('2', '100Mi')), c(cpuMem('100m', '100Mi'), cpuMem('100m', '100Mi'))] },
      'Burstable',
    ],
    [
      'a container without limits makes matching totals Burstable',
      { containers: [c(cpuMem('100m', '100Mi'), cpuMem('200m', '200Mi')), c(cpuMem('100m', '100Mi'), {})] },
      'Burstable',
    ],
    ['requests below limits are Burstable', { containers: [c(cpuMem('10m', '100Mi'), cpuMem('100m', '200Mi'))] }, 'Burstable'],
    ['zero requests with limits are Burstable', { containers: [c(cpuMem('0', '0'), cpuMem('100m', '200Mi'))] }, 'Burstable'],
    [
      'hugepages do not count toward the class',
      { containers: [c({ ...cpuMem('0', '0'), 'hugepages-2Mi': '1Gi' }, { ...cpuMem('0', '0'), 'hugepages-2Mi': '1Gi' })] },
      'BestEffort',
    ],
    [
      'init containers count toward the class',
      { containers: [c({}, {})], initContainers: [c(cpuMem('10m', '100Mi'), cpuMem('100m', '200Mi'))] },
      'Burstable',
    ],
    [
      'pod-level resources decide over BestEffort containers',
      { containers: [c({}, {})], podResources: { requests: cpuMem('10m', '100Mi'), limits: cpuMem('10m', '100Mi') } },
      'Guaranteed',
    ],
    [
      'pod-level resources decide over Burstable containers',
      {
        containers: [c(cpuMem('3m', '10Mi'), cpuMem('5m', '20Mi'))],
        podResources: { requests: cpuMem('10m', '100Mi'), limits: cpuMem('10m', '100Mi') },
      },
      'Guaranteed',
    ],
    [
      'pod-level requests below limits are Burstable',
      { containers: [c({}, {})], podResources: { requests: cpuMem('10m', '10Mi'), limits: cpuMem('20m', '50Mi') } },
      'Burstable',
    ],
    [
      'pod-level Burstable decides over Guaranteed containers',
      {
        containers: [c(cpuMem('5m', '10Mi'), cpuMem('5m', '10Mi'))],
        podResources: { requests: cpuMem('10m', '10Mi'), limits: cpuMem('20m', '50Mi') },
      },
      'Burstable',
    ],
    [
      'pod-level requests without limits are Burstable',
      { containers: [c(cpuMem('5m', '10Mi'), {})], podResources: { requests: cpuMem('10m', '10Mi'), limits: {} } },
      'Burstable',
    ],
    [
      'a pod-level cpu limit without a memory limit is Burstable',
      {
        containers: [c(cpuMem('5m', '10Mi'), {}), c(cpuMem('5m', '10Mi'), cpuMem('5m', '10Mi'))],
        podResources: { requests: cpuMem('10m', '10Mi'), limits: cpuMem('5m') },
      },
      'Burstable',
    ],
  ])('%s', (_name, data, expected) => {
    expect(computePodQOS(readPod(pod(data)))).toBe(expected);
  });

  it('an empty pod-level resources field makes the pod BestEffort whatever its containers say', () => {
    const data: PodSpecData = { containers: [c(cpuMem('1', '1Gi'), cpuMem('1', '1Gi'))], podResources: {} };
    expect(computePodQOS(readPod(pod(data)))).toBe('BestEffort');
  });

  it('a QoS class recorded in the status is taken as is', () => {
    const object = pod({ containers: [c(cpuMem('1', '1Gi'), cpuMem('1', '1Gi'))] });
    const recorded = { ...object, status: { qosClass: 'BestEffort' } };
    expect(podQOS(readPod(recorded))).toBe('BestEffort');
  });
});
