import { describe, expect, it } from 'vitest';
import type { LimitRange, Pod } from '../kube/types.js';
import { formatResourceList } from '../resources/resource-list.js';
import { applyDefaults, computePodDefaults, defaultContainerResourceRequirements } from './defaults.js';
import { applyJsonPatch, type JsonPatchOperation } from './json-patch.js';
import { LIMIT_RANGER_ANNOTATION, parseLimitRange, withLimitRangeApiDefaults } from './limit-range.js';
import { cpuMem, deepFreeze, limitRange, requirements, validLimitRange, validPod, withInit } from './spec-fixtures.js';

const annotationOf = (pod: Pod): string | undefined => pod.metadata?.annotations?.[LIMIT_RANGER_ANNOTATION];

describe('defaultContainerResourceRequirements', () => {
  it('takes requests from defaultRequest and limits from default of the Container item', () => {
    const defaults = defaultContainerResourceRequirements(parseLimitRange(validLimitRange()));
    expect(formatResourceList(defaults.requests)).toEqual({ cpu: '50m', memory: '5Mi' });
    expect(formatResourceList(defaults.limits)).toEqual({ cpu: '75m', memory: '10Mi' });
  });

  it('lets a later Container item override an earlier one for the same resource', () => {
    const lr: LimitRange = {
      metadata: { name: 'two' },
      spec: {
        limits: [
          { type: 'Container', default: cpuMem('1', '1Gi'), defaultRequest: cpuMem('500m') },
          { type: 'Pod', max: cpuMem('9') },
          { type: 'Container', default: cpuMem('2') },
        ],
      },
    };
    const defaults = defaultContainerResourceRequirements(parseLimitRange(lr));
    expect(formatResourceList(defaults.limits)).toEqual({ cpu: '2', memory: '1Gi' });
    expect(formatResourceList(defaults.requests)).toEqual({ cpu: '500m' });
  });

  it('ignores Pod and PersistentVolumeClaim items', () => {
    const lr = limitRange('Pod', { max: cpuMem('1') });
    const defaults = defaultContainerResourceRequirements(parseLimitRange(lr));
    expect(defaults).toEqual({ requests: {}, limits: {} });
  });
});

// TestMergePodResourceRequirements. In Go the container and the init container share one
// map, so the init container looks already defaulted; in JSON they never share, so here
// the init container is defaulted (and named in the annotation) too.
describe('merging defaults into a pod', () => {
  const lr = validLimitRange();

  it('fills every resource of a container that specifies none', () => {
    const pod = applyDefaults(deepFreeze(validPod('empty-resources', 1, {})), [lr]);
    expect(pod.spec?.containers?.[0]?.resources).toEqual({
      requests: { cpu: '50m', memory: '5Mi' },
      limits: { cpu: '75m', memory: '10Mi' },
    });
    expect(annotationOf(pod)).toBe(
      'LimitRanger plugin set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0',
    );
  });

  it('fills only the missing keys, in containers and init containers', () => {
    const input = requirements(cpuMem('', '512Mi'));
    const pod = applyDefaults(deepFreeze(withInit(validPod('limit-memory', 1, input), input)), [lr]);
    const expected = { requests: { cpu: '50m', memory: '512Mi' }, limits: { cpu: '75m', memory: '10Mi' } };
    expect(pod.spec?.containers?.[0]?.resources).toEqual(expected);
    expect(pod.spec?.initContainers?.[0]?.resources).toEqual(expected);
    expect(annotationOf(pod)).toBe(
      'LimitRanger plugin set: cpu request for container foo-0; cpu, memory limit for container foo-0; cpu request for init container foo-0; cpu, memory limit for init container foo-0',
    );
  });

  it('changes nothing, and writes no annotation, when every resource is set', () => {
    const input = requirements(cpuMem('100m', '512Mi'), cpuMem('200m', '1G'));
    const original = deepFreeze(withInit(validPod('limit-memory', 1, input), requirements(cpuMem('200m', '1G'), cpuMem('400m', '2G'))));
    const result = computePodDefaults(original, [lr]);
    expect(result.pod).toBe(original);
    expect(result.patch).toEqual([]);
    expect(result.annotation).toBeUndefined();
  });
});

// TestPodLimitFuncApplyDefault
it('gives a container and an init container with empty resources every default', () => {
  const pod = applyDefaults(deepFreeze(withInit(validPod('foo', 1, {}), {})), [validLimitRange()]);
  for (const container of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    expect(container.resources).toEqual({ limits: { memory: '10Mi', cpu: '75m' }, requests: { memory: '5Mi', cpu: '50m' } });
  }
});

describe('the defaulting patch', () => {
  const lr = limitRange('Container', { default: cpuMem('1', '1Gi'), defaultRequest: cpuMem('500m', '512Mi') });
  const annotation = 'kubernetes.io~1limit-ranger';
  const base = (resources: unknown, metadata: unknown = { name: 'web', annotations: { team: 'a' } }): Pod =>
    ({ metadata, spec: { containers: [{ name: 'app', ...(resources === undefined ? {} : { resources }) }] } }) as Pod;
  const all = 'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app';

  const cases: { name: string; pod: Pod; limitRanges?: LimitRange[]; patch: JsonPatchOperation[] }[] = [
    {
      name: 'adds whole limits and requests maps under an empty resources object',
      pod: base({}),
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/limits', value: { cpu: '1', memory: '1Gi' } },
        { op: 'add', path: '/spec/containers/0/resources/requests', value: { cpu: '500m', memory: '512Mi' } },
        { op: 'add', path: `/metadata/annotations/${annotation}`, value: all },
      ],
    },
    {
      name: 'creates resources when the container has none',
      pod: base(undefined),
      patch: [
        {
          op: 'add',
          path: '/spec/containers/0/resources',
          value: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '512Mi' } },
        },
        { op: 'add', path: `/metadata/annotations/${annotation}`, value: all },
      ],
    },
    {
      name: 'adds single keys to maps that exist and creates the one that does not',
      pod: base({ limits: { cpu: '2' } }),
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/limits/memory', value: '1Gi' },
        { op: 'add', path: '/spec/containers/0/resources/requests', value: { cpu: '500m', memory: '512Mi' } },
        {
          op: 'add',
          path: `/metadata/annotations/${annotation}`,
          value: 'LimitRanger plugin set: cpu, memory request for container app; memory limit for container app',
        },
      ],
    },
    {
      name: 'treats a null map as missing',
      pod: base({ limits: null, requests: { cpu: '1', memory: '1Gi' } }),
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/limits', value: { cpu: '1', memory: '1Gi' } },
        { op: 'add', path: `/metadata/annotations/${annotation}`, value: 'LimitRanger plugin set: cpu, memory limit for container app' },
      ],
    },
    {
      name: 'creates the annotations map when the pod has none',
      pod: base({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1' } }, { name: 'web' }),
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/requests/memory', value: '512Mi' },
        {
          op: 'add',
          path: '/metadata/annotations',
          value: { 'kubernetes.io/limit-ranger': 'LimitRanger plugin set: memory request for container app' },
        },
      ],
    },
    {
      name: 'creates metadata when the pod has none',
      pod: { spec: { containers: [{ name: 'app', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { memory: '1' } } }] } },
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/requests/cpu', value: '500m' },
        {
          op: 'add',
          path: '/metadata',
          value: { annotations: { 'kubernetes.io/limit-ranger': 'LimitRanger plugin set: cpu request for container app' } },
        },
      ],
    },
    {
      name: 'overwrites a stale limit-ranger annotation',
      pod: base(
        { limits: { cpu: '1', memory: '1Gi' }, requests: { memory: '1' } },
        { annotations: { 'kubernetes.io/limit-ranger': 'old' } },
      ),
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/requests/cpu', value: '500m' },
        { op: 'replace', path: `/metadata/annotations/${annotation}`, value: 'LimitRanger plugin set: cpu request for container app' },
      ],
    },
    {
      name: 'is empty when there is no LimitRange',
      pod: base({}),
      limitRanges: [],
      patch: [],
    },
    {
      name: 'is empty when the LimitRange has no Container item',
      pod: base({}),
      limitRanges: [limitRange('Pod', { max: cpuMem('4') })],
      patch: [],
    },
    {
      name: 'writes defaults as Kubernetes prints the LimitRange quantity',
      pod: base({}),
      limitRanges: [limitRange('Container', { default: cpuMem('1000m'), defaultRequest: cpuMem('0.5') })],
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/limits', value: { cpu: '1' } },
        { op: 'add', path: '/spec/containers/0/resources/requests', value: { cpu: '500m' } },
        {
          op: 'add',
          path: `/metadata/annotations/${annotation}`,
          value: 'LimitRanger plugin set: cpu request for container app; cpu limit for container app',
        },
      ],
    },
    {
      name: 'escapes resource names that contain a slash or a tilde',
      pod: base({ limits: {}, requests: {} }),
      limitRanges: [limitRange('Container', { default: { 'example.com/gpu': '1', 'a~b': '2' } })],
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/limits/a~0b', value: '2' },
        { op: 'add', path: '/spec/containers/0/resources/limits/example.com~1gpu', value: '1' },
        {
          op: 'add',
          path: `/metadata/annotations/${annotation}`,
          value: 'LimitRanger plugin set: a~b, example.com/gpu limit for container app',
        },
      ],
    },
    {
      name: 'lets the first LimitRange win a resource and the last one that set anything write the annotation',
      pod: base({}),
      limitRanges: [
        limitRange('Container', { default: cpuMem('1'), defaultRequest: cpuMem('100m') }, 'first'),
        limitRange('Container', { default: cpuMem('2', '1Gi'), defaultRequest: cpuMem('200m', '256Mi') }, 'second'),
      ],
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/limits', value: { cpu: '1', memory: '1Gi' } },
        { op: 'add', path: '/spec/containers/0/resources/requests', value: { cpu: '100m', memory: '256Mi' } },
        {
          op: 'add',
          path: `/metadata/annotations/${annotation}`,
          value: 'LimitRanger plugin set: memory request for container app; memory limit for container app',
        },
      ],
    },
    {
      name: 'keeps the earlier annotation when a later LimitRange sets nothing',
      pod: base({}),
      limitRanges: [
        limitRange('Container', { default: cpuMem('1') }, 'first'),
        limitRange('Container', { default: cpuMem('2') }, 'second'),
      ],
      patch: [
        { op: 'add', path: '/spec/containers/0/resources/limits', value: { cpu: '1' } },
        { op: 'add', path: `/metadata/annotations/${annotation}`, value: 'LimitRanger plugin set: cpu limit for container app' },
      ],
    },
    {
      name: 'addresses init containers under /spec/initContainers',
      pod: {
        metadata: { name: 'p' },
        spec: {
          containers: [{ name: 'app', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } } }],
          initContainers: [{ name: 'setup', resources: {} }],
        },
      },
      patch: [
        { op: 'add', path: '/spec/initContainers/0/resources/limits', value: { cpu: '1', memory: '1Gi' } },
        { op: 'add', path: '/spec/initContainers/0/resources/requests', value: { cpu: '500m', memory: '512Mi' } },
        {
          op: 'add',
          path: '/metadata/annotations',
          value: {
            'kubernetes.io/limit-ranger':
              'LimitRanger plugin set: cpu, memory request for init container setup; cpu, memory limit for init container setup',
          },
        },
      ],
    },
  ];

  it.each(cases)('$name', ({ pod, limitRanges = [lr], patch }) => {
    const input = deepFreeze(pod);
    const result = computePodDefaults(input, limitRanges);
    expect(result.patch).toEqual(patch);
    // The patch and the in-memory mutation must agree exactly.
    expect(applyJsonPatch(input, result.patch)).toEqual(result.pod);
    expect(applyDefaults(input, limitRanges)).toEqual(result.pod);
  });

  it('reports which containers received which defaults', () => {
    const pod = deepFreeze(withInit(validPod('p', 2, requirements(cpuMem('10m'), cpuMem('20m'))), {}));
    const result = computePodDefaults(pod, [lr]);
    expect(result.containers).toEqual([
      { init: false, index: 0, name: 'foo-0', requests: { memory: '512Mi' }, limits: { memory: '1Gi' } },
      { init: false, index: 1, name: 'foo-1', requests: { memory: '512Mi' }, limits: { memory: '1Gi' } },
      { init: true, index: 0, name: 'foo-0', requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    ]);
    expect(result.annotation).toBe(
      'LimitRanger plugin set: memory request for container foo-0; memory limit for container foo-0; memory request for container foo-1; memory limit for container foo-1; cpu, memory request for init container foo-0; cpu, memory limit for init container foo-0',
    );
  });
});

describe('API defaulting of a LimitRange as written (not done by LimitRanger)', () => {
  it('defaults default from max, then defaultRequest from default, then from min', () => {
    const lr = withLimitRangeApiDefaults({
      spec: {
        limits: [
          { type: 'Container', max: cpuMem('2', '2Gi'), min: { cpu: '100m', 'ephemeral-storage': '1Gi' }, default: cpuMem('', '1Gi') },
        ],
      },
    });
    expect(lr.spec?.limits?.[0]).toEqual({
      type: 'Container',
      max: cpuMem('2', '2Gi'),
      min: { cpu: '100m', 'ephemeral-storage': '1Gi' },
      default: { memory: '1Gi', cpu: '2' },
      defaultRequest: { memory: '1Gi', cpu: '2', 'ephemeral-storage': '1Gi' },
    });
  });

  it('leaves Pod items and already defaulted LimitRanges as they are', () => {
    const lr = deepFreeze(withLimitRangeApiDefaults(validLimitRange()));
    expect(withLimitRangeApiDefaults(lr)).toEqual(lr);
    expect(lr.spec?.limits?.[0]).toEqual(validLimitRange().spec?.limits?.[0]);
  });
});
