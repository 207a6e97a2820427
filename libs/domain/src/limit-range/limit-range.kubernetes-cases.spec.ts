import { describe, expect, it } from 'vitest';
import type { GroupResource, LimitRange, LimitRangeItem, Pod, RawQuantities } from '../kube/types.js';
import { admitLimitRanger, type LimitRangerRequest } from './limit-ranger-plugin.js';
import { applyJsonPatch, type JsonPatchOperation } from './json-patch.js';
import { selectObject } from '../kube/fields-read.js';

const PODS = { group: '', resource: 'pods' };
import { LIMIT_RANGER_ANNOTATION, withLimitRangeApiDefaults } from './limit-range.js';
import { validatePodLimits, validatePvcLimits } from './validate.js';
import { cpuMem, deepFreeze, requirements, storage, validPvc } from './spec-fixtures.js';

/**
 * Cases beyond Kubernetes' own tables, each answered from plugin/pkg/admission/limitranger
 * admission.go (master: exact comparisons, pod-level resources, resize skipping unchanged
 * values) and SetDefaults_LimitRangeItem (pkg/apis/core/v1/defaults.go).
 */

const pods: GroupResource = { group: '', resource: 'pods' };
const pvcs: GroupResource = { group: '', resource: 'persistentvolumeclaims' };

interface Ctr {
  readonly name: string;
  readonly resources?: unknown;
  readonly restartPolicy?: string;
}

const ctr = (name: string, requests?: RawQuantities, limits?: RawQuantities): Ctr => ({ name, resources: requirements(requests, limits) });
const cpu = (value: string): RawQuantities => ({ cpu: value });
const mem = (value: string): RawQuantities => ({ memory: value });

function podOf(
  containers: readonly Ctr[],
  initContainers?: readonly Ctr[],
  spec: Record<string, unknown> = {},
  metadata: unknown = { name: 'p', namespace: 'ns' },
): Pod {
  return { metadata, spec: { containers, ...(initContainers ? { initContainers } : {}), ...spec } } as Pod;
}

const lr = (name: string, ...items: LimitRangeItem[]): LimitRange => ({ metadata: { name, namespace: 'ns' }, spec: { limits: items } });
const container = (item: Omit<LimitRangeItem, 'type'>): LimitRange => lr('lr', { type: 'Container', ...item });
const podItem = (item: Omit<LimitRangeItem, 'type'>): LimitRange => lr('lr', { type: 'Pod', ...item });

const create = (object: Pod, limitRanges: readonly LimitRange[], over: Partial<LimitRangerRequest> = {}) =>
  admitLimitRanger({ operation: 'CREATE', resource: pods, object: deepFreeze(object), limitRanges: deepFreeze([...limitRanges]), ...over });

const set = (...parts: string[]) => `LimitRanger plugin set: ${parts.join('; ')}`;

describe('defaulting a created pod (LimitRanges read as the API server decodes them)', () => {
  interface Row {
    readonly name: string;
    readonly pod: Pod;
    readonly limitRanges: readonly LimitRange[];
    /** `resources` of each container, then of each init container, after defaulting. */
    readonly resources: readonly unknown[];
    readonly annotation?: string;
    /** The refusal, when validation of the defaulted pod fails. */
    readonly message?: string;
  }
  const one = (resources: unknown = {}) => podOf([{ name: 'app', resources }]);
  const both = (q: RawQuantities) => ({ limits: q, requests: q });

  it.each<Row>([
    {
      name: 'a Container max alone becomes the default limit and, through it, the default request',
      pod: one(),
      limitRanges: [container({ max: cpu('1') })],
      resources: [both(cpu('1'))],
      annotation: set('cpu request for container app', 'cpu limit for container app'),
    },
    {
      name: 'a Container min alone becomes the default request only, no limit is set',
      pod: one(),
      limitRanges: [container({ min: cpu('100m') })],
      resources: [{ requests: cpu('100m') }],
      annotation: set('cpu request for container app'),
    },
    {
      name: 'the default request comes from default before min',
      pod: one(),
      limitRanges: [container({ default: cpu('500m'), min: cpu('100m') })],
      resources: [both(cpu('500m'))],
      annotation: set('cpu request for container app', 'cpu limit for container app'),
    },
    {
      name: 'an explicit defaultRequest wins over default and min',
      pod: one(),
      limitRanges: [container({ default: cpu('1'), defaultRequest: cpu('200m'), min: cpu('100m') })],
      resources: [{ limits: cpu('1'), requests: cpu('200m') }],
      annotation: set('cpu request for container app', 'cpu limit for container app'),
    },
    {
      name: 'a Pod-type max defaults nothing, so a pod without limits is refused',
      pod: one(),
      limitRanges: [podItem({ max: cpu('2') })],
      resources: [{}],
      message: 'pods "p" is forbidden: maximum cpu usage per Pod is 2.  No limit is specified',
    },
    {
      name: 'with requests set and limits absent only the limit is added',
      pod: one({ requests: cpu('200m') }),
      limitRanges: [container({ default: cpu('1'), defaultRequest: cpu('500m') })],
      resources: [{ requests: cpu('200m'), limits: cpu('1') }],
      annotation: set('cpu limit for container app'),
    },
    {
      name: 'with limits set and requests absent the request comes from defaultRequest, not from the limit',
      pod: one({ limits: cpu('2') }),
      limitRanges: [container({ default: cpu('1'), defaultRequest: cpu('500m') })],
      resources: [{ limits: cpu('2'), requests: cpu('500m') }],
      annotation: set('cpu request for container app'),
    },
    {
      name: 'a key set to zero counts as set and is not defaulted',
      pod: one({ requests: cpu('0'), limits: cpu('0') }),
      limitRanges: [container({ default: cpu('1') })],
      resources: [{ requests: cpu('0'), limits: cpu('0') }],
    },
    {
      name: 'with two LimitRanges the first to set a key wins and the annotation is the last one that set anything',
      pod: one(),
      limitRanges: [
        lr('first', { type: 'Container', default: cpu('1') }),
        lr('second', { type: 'Container', default: cpuMem('2', '1Gi') }),
      ],
      resources: [both(cpuMem('1', '1Gi'))],
      annotation: set('memory request for container app', 'memory limit for container app'),
    },
    {
      name: 'a later LimitRange that sets nothing leaves the earlier annotation',
      pod: one(),
      limitRanges: [lr('first', { type: 'Container', default: cpu('1') }), lr('second', { type: 'Container', default: cpu('2') })],
      resources: [both(cpu('1'))],
      annotation: set('cpu request for container app', 'cpu limit for container app'),
    },
    {
      name: 'within one LimitRange a later Container item overrides an earlier one',
      pod: one(),
      limitRanges: [lr('lr', { type: 'Container', default: cpu('1') }, { type: 'Container', default: cpu('2') })],
      resources: [both(cpu('2'))],
      annotation: set('cpu request for container app', 'cpu limit for container app'),
    },
    {
      name: 'init containers and sidecars get the same defaults, named after the containers',
      pod: podOf([{ name: 'app' }], [{ name: 'setup' }, { name: 'proxy', restartPolicy: 'Always' }]),
      limitRanges: [container({ default: cpu('1') })],
      resources: [both(cpu('1')), both(cpu('1')), both(cpu('1'))],
      annotation: set(
        'cpu request for container app',
        'cpu limit for container app',
        'cpu request for init container setup',
        'cpu limit for init container setup',
        'cpu request for init container proxy',
        'cpu limit for init container proxy',
      ),
    },
    {
      name: 'resource names are sorted within each part of the annotation',
      pod: one(),
      limitRanges: [container({ default: { memory: '1Gi', cpu: '1', 'ephemeral-storage': '2Gi' } })],
      resources: [both({ cpu: '1', 'ephemeral-storage': '2Gi', memory: '1Gi' })],
      annotation: set('cpu, ephemeral-storage, memory request for container app', 'cpu, ephemeral-storage, memory limit for container app'),
    },
    {
      name: 'each container adds its own request and limit parts, in container order',
      pod: podOf([ctr('web', cpu('100m')), ctr('db', mem('1Gi'), mem('1Gi'))]),
      limitRanges: [container({ default: cpuMem('1', '512Mi') })],
      resources: [
        { requests: cpuMem('100m', '512Mi'), limits: cpuMem('1', '512Mi') },
        { requests: cpuMem('1', '1Gi'), limits: cpuMem('1', '1Gi') },
      ],
      annotation: set(
        'memory request for container web',
        'cpu, memory limit for container web',
        'cpu request for container db',
        'cpu limit for container db',
      ),
    },
    {
      name: 'defaults are written as Kubernetes prints the stored quantity',
      pod: one(),
      limitRanges: [container({ default: { cpu: '0.5', memory: '1.5Gi' } })],
      resources: [both(cpuMem('500m', '1536Mi'))],
      annotation: set('cpu, memory request for container app', 'cpu, memory limit for container app'),
    },
    {
      name: 'defaults from one LimitRange are validated against the next, which refuses them',
      pod: one(),
      limitRanges: [lr('first', { type: 'Container', default: cpu('2') }), lr('second', { type: 'Container', max: cpu('1') })],
      resources: [both(cpu('2'))],
      annotation: set('cpu request for container app', 'cpu limit for container app'),
      message: 'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
    },
  ])('$name', ({ pod, limitRanges, resources, annotation, message }) => {
    const decision = create(pod, limitRanges);
    const spec = decision.object['spec'] as { containers: Ctr[]; initContainers?: Ctr[] };
    expect([...spec.containers, ...(spec.initContainers ?? [])].map((c) => c.resources)).toEqual(resources);
    expect(decision.allowed).toBe(message === undefined);
    expect(decision.message).toBe(message);
    if (message === undefined) {
      expect(decision.annotation).toBe(annotation);
      // The defaulted object is what admission reads of the pod (kube/fields-read.ts), patched.
      expect(applyJsonPatch(selectObject(PODS, pod), decision.patch)).toEqual(decision.object);
      if (annotation === undefined) expect(decision.patch).toEqual([]);
    }
  });

  it('leaves ephemeral containers alone', () => {
    const pod = podOf([ctr('app', cpu('1'), cpu('1'))], undefined, { ephemeralContainers: [{ name: 'debug' }] });
    const decision = create(pod, [container({ default: cpuMem('1', '1Gi') })]);
    expect(decision.object['spec']).toMatchObject({ ephemeralContainers: [{ name: 'debug' }] });
    expect(decision.patch.map((op) => op.path)).toEqual([
      '/spec/containers/0/resources/limits/memory',
      '/spec/containers/0/resources/requests/memory',
      '/metadata/annotations',
    ]);
  });

  it('keeps a stale limit-ranger annotation when nothing is set', () => {
    const pod = podOf(
      [ctr('app', cpu('1'), cpu('1'))],
      undefined,
      {},
      { name: 'p', annotations: { [LIMIT_RANGER_ANNOTATION]: 'old', team: 'a' } },
    );
    const decision = create(pod, [container({ default: cpu('2') })]);
    expect(decision.patch).toEqual([]);
    // Of the annotations admission reads only LimitRanger's own (kube/fields-read.ts).
    expect(decision.object.metadata?.annotations).toEqual({ [LIMIT_RANGER_ANNOTATION]: 'old' });
  });
});

describe('the JSONPatch of the defaults', () => {
  const ptr = '/metadata/annotations/kubernetes.io~1limit-ranger';
  const text = set('cpu request for container app', 'cpu limit for container app');
  const at = (...rest: string[]) => ['/spec/containers/0/resources', ...rest].join('/');
  const meta = { name: 'p', annotations: { team: 'a' } };
  const app = (resources?: unknown) => (resources === undefined ? { name: 'app' } : { name: 'app', resources });

  it.each<{ name: string; pod: Pod; patch: JsonPatchOperation[] }>([
    {
      name: 'no resources: one add of the whole resources object',
      pod: podOf([app()], undefined, {}, meta),
      patch: [
        { op: 'add', path: at(), value: { limits: cpu('1'), requests: cpu('1') } },
        { op: 'add', path: ptr, value: text },
      ],
    },
    {
      name: 'resources null: the same add, which replaces the null',
      pod: podOf([app(null)], undefined, {}, meta),
      patch: [
        { op: 'add', path: at(), value: { limits: cpu('1'), requests: cpu('1') } },
        { op: 'add', path: ptr, value: text },
      ],
    },
    {
      name: 'resources empty: whole limits and requests maps',
      pod: podOf([app({})], undefined, {}, meta),
      patch: [
        { op: 'add', path: at('limits'), value: cpu('1') },
        { op: 'add', path: at('requests'), value: cpu('1') },
        { op: 'add', path: ptr, value: text },
      ],
    },
    {
      name: 'limits null and requests empty: a whole limits map and a single request key',
      pod: podOf([app({ limits: null, requests: {} })], undefined, {}, meta),
      patch: [
        { op: 'add', path: at('limits'), value: cpu('1') },
        { op: 'add', path: at('requests', 'cpu'), value: '1' },
        { op: 'add', path: ptr, value: text },
      ],
    },
    {
      name: 'limits holding another resource and requests absent: one limit key and a whole requests map',
      pod: podOf([app({ limits: mem('1Gi') })], undefined, {}, meta),
      patch: [
        { op: 'add', path: at('limits', 'cpu'), value: '1' },
        { op: 'add', path: at('requests'), value: cpu('1') },
        { op: 'add', path: ptr, value: text },
      ],
    },
    {
      name: 'resources holding only claims: the claims are kept',
      pod: podOf([app({ claims: [{ name: 'gpu' }] })], undefined, {}, meta),
      patch: [
        { op: 'add', path: at('limits'), value: cpu('1') },
        { op: 'add', path: at('requests'), value: cpu('1') },
        { op: 'add', path: ptr, value: text },
      ],
    },
    {
      name: 'no metadata: metadata is added with the annotation',
      pod: { spec: { containers: [app({})] } } as Pod,
      patch: [
        { op: 'add', path: at('limits'), value: cpu('1') },
        { op: 'add', path: at('requests'), value: cpu('1') },
        { op: 'add', path: '/metadata', value: { annotations: { [LIMIT_RANGER_ANNOTATION]: text } } },
      ],
    },
    {
      name: 'annotations null: the annotations map is added',
      pod: podOf([app({})], undefined, {}, { name: 'p', annotations: null }),
      patch: [
        { op: 'add', path: at('limits'), value: cpu('1') },
        { op: 'add', path: at('requests'), value: cpu('1') },
        { op: 'add', path: '/metadata/annotations', value: { [LIMIT_RANGER_ANNOTATION]: text } },
      ],
    },
    {
      name: 'annotations empty: the one key is added',
      pod: podOf([app({})], undefined, {}, { name: 'p', annotations: {} }),
      patch: [
        { op: 'add', path: at('limits'), value: cpu('1') },
        { op: 'add', path: at('requests'), value: cpu('1') },
        { op: 'add', path: ptr, value: text },
      ],
    },
    {
      name: 'an earlier limit-ranger annotation is replaced',
      pod: podOf([app({})], undefined, {}, { name: 'p', annotations: { [LIMIT_RANGER_ANNOTATION]: 'old' } }),
      patch: [
        { op: 'add', path: at('limits'), value: cpu('1') },
        { op: 'add', path: at('requests'), value: cpu('1') },
        { op: 'replace', path: ptr, value: text },
      ],
    },
    {
      name: 'the second init container is addressed by its index among init containers',
      pod: podOf([ctr('app', cpu('1'), cpu('1'))], [ctr('a', cpu('1'), cpu('1')), { name: 'b', resources: {} }], {}, meta),
      patch: [
        { op: 'add', path: '/spec/initContainers/1/resources/limits', value: cpu('1') },
        { op: 'add', path: '/spec/initContainers/1/resources/requests', value: cpu('1') },
        { op: 'add', path: ptr, value: set('cpu request for init container b', 'cpu limit for init container b') },
      ],
    },
  ])('$name', ({ pod, patch }) => {
    const decision = create(pod, [container({ default: cpu('1') })]);
    expect(decision.patch).toEqual(patch);
    // The defaulted object is what admission reads of the pod (kube/fields-read.ts), patched.
    expect(applyJsonPatch(selectObject(PODS, pod), decision.patch)).toEqual(decision.object);
  });
});

describe('validating a pod (as the plugin gets it, already defaulted)', () => {
  const one = (requests?: RawQuantities, limits?: RawQuantities) => podOf([ctr('app', requests, limits)]);
  const ratio = (value: string, resource = 'cpu') => container({ maxLimitRequestRatio: { [resource]: value } });

  it.each<{ name: string; pod: Pod; limitRanges: LimitRange[]; message: string | undefined }>([
    {
      name: 'a request equal to the min and a limit equal to the max pass',
      pod: one(cpu('100m'), cpu('1')),
      limitRanges: [container({ min: cpu('100m'), max: cpu('1') })],
      message: undefined,
    },
    {
      name: 'a limit below the min is reported once the request passes',
      pod: one(cpu('100m'), cpu('50m')),
      limitRanges: [container({ min: cpu('100m') })],
      message: 'minimum cpu usage per Container is 100m, but limit is 50m',
    },
    {
      name: 'a request above the max is reported once the limit passes',
      pod: one(cpu('2'), cpu('1')),
      limitRanges: [container({ max: cpu('1') })],
      message: 'maximum cpu usage per Container is 1, but request is 2',
    },
    {
      name: 'the limit above the max is reported before the request',
      pod: one(cpu('2'), cpu('3')),
      limitRanges: [container({ max: cpu('1') })],
      message: 'maximum cpu usage per Container is 1, but limit is 3',
    },
    {
      name: 'a min with only a limit set says no request is specified',
      pod: one(undefined, cpu('1')),
      limitRanges: [container({ min: cpu('100m') })],
      message: 'minimum cpu usage per Container is 100m.  No request is specified',
    },
    {
      name: 'a max with only a request set says no limit is specified',
      pod: one(cpu('500m')),
      limitRanges: [container({ max: cpu('1') })],
      message: 'maximum cpu usage per Container is 1.  No limit is specified',
    },
    {
      name: 'a ratio with no request',
      pod: one(undefined, cpu('1')),
      limitRanges: [ratio('2')],
      message: 'cpu max limit to request ratio per Container is 2, but no request is specified or request is 0',
    },
    {
      name: 'a ratio with a zero request',
      pod: one(cpu('0'), cpu('1')),
      limitRanges: [ratio('2')],
      message: 'cpu max limit to request ratio per Container is 2, but no request is specified or request is 0',
    },
    {
      name: 'a ratio with no limit',
      pod: one(cpu('1')),
      limitRanges: [ratio('2')],
      message: 'cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0',
    },
    {
      name: 'a ratio with a zero limit',
      pod: one(cpu('1'), cpu('0')),
      limitRanges: [ratio('2')],
      message: 'cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0',
    },
    { name: 'a ratio exactly at the maximum passes', pod: one(cpu('500m'), cpu('1')), limitRanges: [ratio('2')], message: undefined },
    {
      name: 'a ratio prints six decimals and the maximum as a quantity',
      pod: one(cpu('300m'), cpu('1')),
      limitRanges: [ratio('1.5')],
      message: 'cpu max limit to request ratio per Container is 1500m, but provided ratio is 3.333333',
    },
    {
      name: 'a ratio just above the maximum can print as equal to it (half to even rounds down)',
      pod: one(cpu('2'), cpu('2000001u')),
      limitRanges: [ratio('1')],
      message: 'cpu max limit to request ratio per Container is 1, but provided ratio is 1.000000',
    },
    {
      name: 'a ratio halfway between two sixth decimals rounds to the even one (up)',
      pod: one(cpu('2'), cpu('2000003u')),
      limitRanges: [ratio('1')],
      message: 'cpu max limit to request ratio per Container is 1, but provided ratio is 1.000002',
    },
    {
      name: 'a memory ratio of binary quantities',
      pod: one(mem('1Gi'), mem('1536Mi')),
      limitRanges: [ratio('1.2', 'memory')],
      message: 'memory max limit to request ratio per Container is 1200m, but provided ratio is 1.500000',
    },
    {
      name: 'each container is checked: different messages are bracketed in container order',
      pod: podOf([ctr('a', undefined, cpu('2')), ctr('b', undefined, cpu('3'))]),
      limitRanges: [container({ max: cpu('1') })],
      message: '[maximum cpu usage per Container is 1, but limit is 2, maximum cpu usage per Container is 1, but limit is 3]',
    },
    {
      name: 'init containers are checked after the containers',
      pod: podOf([ctr('a', undefined, cpu('3'))], [ctr('i', undefined, cpu('2'))]),
      limitRanges: [container({ max: cpu('1') })],
      message: '[maximum cpu usage per Container is 1, but limit is 3, maximum cpu usage per Container is 1, but limit is 2]',
    },
    {
      name: 'the same message from a container and an init container is shown once, unbracketed',
      pod: podOf([ctr('a', undefined, cpu('2'))], [ctr('i', undefined, cpu('2'))]),
      limitRanges: [container({ max: cpu('1') })],
      message: 'maximum cpu usage per Container is 1, but limit is 2',
    },
    {
      name: 'per container: min, then max, then ratio',
      pod: one(cpu('50m'), cpu('2')),
      limitRanges: [container({ min: cpu('100m'), max: cpu('1'), maxLimitRequestRatio: cpu('4') })],
      message:
        '[minimum cpu usage per Container is 100m, but request is 50m, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 4, but provided ratio is 40.000000]',
    },
    {
      name: 'items are checked in LimitRange order: a Pod item listed first reports first',
      pod: one(undefined, cpu('2')),
      limitRanges: [lr('lr', { type: 'Pod', max: cpu('1') }, { type: 'Container', max: cpu('500m') })],
      message: '[maximum cpu usage per Pod is 1, but limit is 2, maximum cpu usage per Container is 500m, but limit is 2]',
    },
    {
      name: 'a PersistentVolumeClaim item does not apply to pods',
      pod: one(),
      limitRanges: [lr('lr', { type: 'PersistentVolumeClaim', max: storage('1Gi') })],
      message: undefined,
    },
    {
      name: 'an item of an unknown type is ignored',
      pod: one(),
      limitRanges: [lr('lr', { type: 'example.com/Image', max: storage('1Gi') })],
      message: undefined,
    },
    {
      name: 'ephemeral containers are not checked',
      pod: podOf([ctr('app', undefined, cpu('500m'))], undefined, { ephemeralContainers: [ctr('debug', undefined, cpu('5'))] }),
      limitRanges: [container({ max: cpu('1') })],
      message: undefined,
    },
    {
      name: 'pod-level resources do not count for Container items',
      pod: podOf([ctr('app', undefined, cpu('500m'))], undefined, { resources: { limits: cpu('10') } }),
      limitRanges: [container({ max: cpu('1') })],
      message: undefined,
    },
    {
      name: 'the Pod sum counts a resource only some containers set',
      pod: podOf([ctr('a', undefined, cpu('1')), ctr('b')]),
      limitRanges: [podItem({ max: cpu('2') })],
      message: undefined,
    },
    {
      name: 'the Pod sum of requests only some containers set is checked against the min',
      pod: podOf([ctr('a', cpu('100m')), ctr('b')]),
      limitRanges: [podItem({ min: cpu('200m') })],
      message: 'minimum cpu usage per Pod is 200m, but request is 100m',
    },
    {
      name: 'an init container larger than the containers together sets the Pod total',
      pod: podOf([ctr('a', cpu('100m'), cpu('100m')), ctr('b', cpu('100m'), cpu('100m'))], [ctr('i', cpu('500m'), cpu('500m'))]),
      limitRanges: [podItem({ max: cpu('400m') })],
      message: 'maximum cpu usage per Pod is 400m, but limit is 500m',
    },
    {
      name: 'an init container smaller than the containers together does not raise the Pod total',
      pod: podOf([ctr('a', cpu('300m'), cpu('300m')), ctr('b', cpu('300m'), cpu('300m'))], [ctr('i', cpu('500m'), cpu('500m'))]),
      limitRanges: [podItem({ min: cpu('700m'), max: cpu('600m') })],
      message: 'minimum cpu usage per Pod is 700m, but request is 600m',
    },
    {
      name: 'a sidecar started before a one-shot init container runs alongside it',
      pod: podOf(
        [ctr('a', cpu('100m'), cpu('100m'))],
        [{ ...ctr('proxy', cpu('200m'), cpu('200m')), restartPolicy: 'Always' }, ctr('i', cpu('500m'), cpu('500m'))],
      ),
      limitRanges: [podItem({ max: cpu('650m') })],
      message: 'maximum cpu usage per Pod is 650m, but limit is 700m',
    },
    {
      name: 'the Pod ratio is taken over the sums',
      pod: podOf([ctr('a', cpu('250m'), cpu('1')), ctr('b', cpu('250m'), cpu('1'))]),
      limitRanges: [podItem({ maxLimitRequestRatio: cpu('3') })],
      message: 'cpu max limit to request ratio per Pod is 3, but provided ratio is 4.000000',
    },
    {
      name: 'a Pod sum exactly at the min passes',
      pod: podOf([ctr('a', cpu('50m')), ctr('b', cpu('50m'))]),
      limitRanges: [podItem({ min: cpu('100m') })],
      message: undefined,
    },
    {
      name: 'pod-level requests replace the container sum for a Pod min',
      pod: podOf([ctr('a', cpu('50m')), ctr('b', cpu('50m'))], undefined, { resources: { requests: cpu('1') } }),
      limitRanges: [podItem({ min: cpu('500m') })],
      message: undefined,
    },
    {
      name: 'pod-level requests are what a Pod min reports',
      pod: podOf([ctr('a', cpu('50m')), ctr('b', cpu('50m'))], undefined, { resources: { requests: cpu('1') } }),
      limitRanges: [podItem({ min: cpu('2') })],
      message: 'minimum cpu usage per Pod is 2, but request is 1',
    },
    {
      name: 'a Pod sum of binary quantities prints in binary',
      pod: podOf([ctr('a', undefined, mem('1Gi')), ctr('b', undefined, mem('512Mi'))]),
      limitRanges: [podItem({ max: mem('1Gi') })],
      message: 'maximum memory usage per Pod is 1Gi, but limit is 1536Mi',
    },
    {
      name: 'a Pod sum takes the format of the first container',
      pod: podOf([ctr('a', undefined, mem('1G')), ctr('b', undefined, mem('1Gi'))]),
      limitRanges: [podItem({ max: mem('1Gi') })],
      message: 'maximum memory usage per Pod is 1Gi, but limit is 2073741824',
    },
    {
      name: 'an init container equal to the containers leaves the containers value (and its text) in place',
      pod: podOf([ctr('a', undefined, mem('1048576k'))], [ctr('i', undefined, mem('1000Mi'))]),
      limitRanges: [podItem({ max: mem('1G') })],
      message: 'maximum memory usage per Pod is 1G, but limit is 1048576k',
    },
  ])('$name', ({ pod, limitRanges, message }) => {
    expect(validatePodLimits(deepFreeze(pod), limitRanges).message).toBe(message);
  });
});

describe('validating a persistent volume claim', () => {
  const pvcItem = (item: Omit<LimitRangeItem, 'type'>) => lr('lr', { type: 'PersistentVolumeClaim', ...item });

  it.each<{
    name: string;
    requests?: RawQuantities;
    old?: RawQuantities | null;
    item: Omit<LimitRangeItem, 'type'>;
    message: string | undefined;
  }>([
    {
      name: 'a claim with no request under a max says no request is specified',
      item: { max: storage('10Gi') },
      message: 'maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified',
    },
    {
      name: 'a request equal to both min and max passes, however written',
      requests: storage('1024Mi'),
      item: { min: storage('1Gi'), max: storage('1Gi') },
      message: undefined,
    },
    {
      name: 'a request below the min on create',
      requests: storage('500Mi'),
      item: { min: storage('1Gi') },
      message: 'minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
    },
    {
      name: 'an update keeping a request below a later min passes',
      requests: storage('500Mi'),
      old: storage('500Mi'),
      item: { min: storage('1Gi') },
      message: undefined,
    },
    {
      name: 'an update with no request before or after is still checked (unlike pods)',
      old: {},
      item: { min: storage('1Gi') },
      message: 'minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified',
    },
    {
      name: 'a min on a resource the claim does not request',
      requests: storage('1Gi'),
      item: { min: { 'example.com/iops': '100' } },
      message: 'minimum example.com/iops usage per PersistentVolumeClaim is 100.  No request is specified',
    },
    {
      name: 'maxLimitRequestRatio is never checked on claims',
      requests: storage('1Gi'),
      item: { maxLimitRequestRatio: storage('1') },
      message: undefined,
    },
  ])('$name', ({ requests, old, item, message }) => {
    const oldPvc = old === undefined || old === null ? undefined : validPvc('c', old);
    expect(validatePvcLimits(deepFreeze(validPvc('c', requests)), [pvcItem(item)], oldPvc).message).toBe(message);
  });
});

describe('an in-place resize (pods/resize), checked against the stored pod', () => {
  const stored = podOf([ctr('app', cpuMem('500m', '128Mi'), cpuMem('1', '128Mi'))]);
  const resize = (object: Pod, limitRanges: LimitRange[], oldObject: Pod | undefined = stored) =>
    admitLimitRanger({
      operation: 'UPDATE',
      subresource: 'resize',
      resource: pods,
      object: deepFreeze(object),
      limitRanges,
      ...(oldObject ? { oldObject } : {}),
    });

  it.each<{ name: string; pod: Pod; old?: Pod; limitRanges: LimitRange[]; message: string | undefined }>([
    {
      name: 'a resource whose request and limit are unchanged is skipped, even if it breaks the min',
      pod: podOf([ctr('app', cpuMem('500m', '256Mi'), cpuMem('1', '256Mi'))]),
      limitRanges: [container({ min: cpu('1') })],
      message: undefined,
    },
    {
      name: 'a changed request is checked',
      pod: podOf([ctr('app', cpuMem('600m', '128Mi'), cpuMem('1', '128Mi'))]),
      limitRanges: [container({ min: cpu('1') })],
      message: 'pods "p" is forbidden: minimum cpu usage per Container is 1, but request is 600m',
    },
    {
      name: 'a changed limit makes the resource checked in full, the unchanged request too',
      pod: podOf([ctr('app', cpuMem('500m', '128Mi'), cpuMem('2', '128Mi'))]),
      limitRanges: [container({ min: cpu('1'), max: cpu('1500m') })],
      message:
        'pods "p" is forbidden: [minimum cpu usage per Container is 1, but request is 500m, maximum cpu usage per Container is 1500m, but limit is 2]',
    },
    {
      name: 'a resource absent before and after is skipped',
      pod: podOf([ctr('app', cpu('600m'), cpu('1'))]),
      old: podOf([ctr('app', cpu('500m'), cpu('1'))]),
      limitRanges: [container({ maxLimitRequestRatio: mem('2') })],
      message: undefined,
    },
    {
      name: 'equal values written differently count as unchanged',
      pod: podOf([ctr('app', cpuMem('500m', '256Mi'), cpuMem('1000m', '256Mi'))]),
      limitRanges: [container({ max: cpu('500m') })],
      message: undefined,
    },
    {
      name: 'containers are matched to the stored pod by name',
      pod: podOf([ctr('web', cpuMem('500m', '128Mi'), cpuMem('1', '128Mi'))]),
      limitRanges: [container({ max: cpu('500m') })],
      message: 'pods "p" is forbidden: maximum cpu usage per Container is 500m, but limit is 1',
    },
    {
      name: 'init containers are matched among the stored init containers only',
      pod: podOf([ctr('app', cpuMem('500m', '128Mi'), cpuMem('1', '128Mi'))], [ctr('app', cpuMem('500m', '128Mi'), cpuMem('1', '128Mi'))]),
      limitRanges: [container({ max: cpu('500m') })],
      message: 'pods "p" is forbidden: maximum cpu usage per Container is 500m, but limit is 1',
    },
    {
      name: 'a Pod total the resize leaves unchanged is skipped',
      pod: podOf([ctr('a', undefined, cpu('1500m')), ctr('b', undefined, cpu('500m'))]),
      old: podOf([ctr('a', undefined, cpu('1')), ctr('b', undefined, cpu('1'))]),
      limitRanges: [podItem({ max: cpu('1') })],
      message: undefined,
    },
    {
      name: 'a Pod total the resize changes is checked',
      pod: podOf([ctr('a', undefined, cpu('1500m')), ctr('b', undefined, cpu('1'))]),
      old: podOf([ctr('a', undefined, cpu('1')), ctr('b', undefined, cpu('1'))]),
      limitRanges: [podItem({ max: cpu('1') })],
      message: 'pods "p" is forbidden: maximum cpu usage per Pod is 1, but limit is 2500m',
    },
    {
      name: 'a Pod total whose requests changed is checked on its unchanged limit too',
      pod: podOf([ctr('a', cpu('600m'), cpu('1')), ctr('b', cpu('500m'), cpu('1'))]),
      old: podOf([ctr('a', cpu('500m'), cpu('1')), ctr('b', cpu('500m'), cpu('1'))]),
      limitRanges: [podItem({ max: cpu('1') })],
      message: 'pods "p" is forbidden: maximum cpu usage per Pod is 1, but limit is 2',
    },
  ])('$name', ({ pod, old, limitRanges, message }) => {
    const decision = resize(pod, limitRanges, old);
    expect(decision.applies).toBe(true);
    expect(decision.message).toBe(message);
  });

  it('refuses on CREATE what a resize would skip', () => {
    const decision = create(podOf([ctr('app', cpu('600m'), cpu('1'))]), [container({ maxLimitRequestRatio: mem('2') })]);
    expect(decision.message).toBe(
      'pods "p" is forbidden: memory max limit to request ratio per Container is 2, but no request is specified or request is 0',
    );
  });
});

describe('admission of the whole request', () => {
  it('brackets several claim violations after the Forbidden prefix', () => {
    const decision = admitLimitRanger({
      operation: 'CREATE',
      resource: pvcs,
      object: validPvc('data'),
      limitRanges: [lr('lr', { type: 'PersistentVolumeClaim', min: storage('1Gi'), max: storage('10Gi') })],
    });
    expect(decision.message).toBe(
      'persistentvolumeclaims "data" is forbidden: [minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]',
    );
  });

  it.each<{ name: string; limitRanges: LimitRange[]; refusedBy: string; message: string }>([
    {
      name: 'reports only the first LimitRange that refuses, though a later one would too',
      limitRanges: [lr('first', { type: 'Container', max: cpu('500m') }), lr('second', { type: 'Container', max: cpuMem('250m', '1Gi') })],
      refusedBy: 'first',
      message: 'pods "p" is forbidden: maximum cpu usage per Container is 500m, but limit is 1',
    },
    {
      name: 'reports a later LimitRange when the earlier ones pass',
      limitRanges: [lr('first', { type: 'Container', max: cpu('2') }), lr('second', { type: 'Container', max: mem('1Gi') })],
      refusedBy: 'second',
      message: 'pods "p" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi',
    },
  ])('$name', ({ limitRanges, refusedBy, message }) => {
    const decision = create(podOf([ctr('app', cpuMem('1', '2Gi'), cpuMem('1', '2Gi'))]), limitRanges);
    expect(decision.validation.limitRange).toBe(refusedBy);
    expect(decision.message).toBe(message);
  });

  it('still checks a CREATE whose object carries a deletionTimestamp (only the stored object counts)', () => {
    const pod = podOf([ctr('app', cpu('2'), cpu('2'))], undefined, {}, { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z' });
    expect(create(pod, [container({ max: cpu('1') })]).message).toBe(
      'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
    );
  });
});

describe('SetDefaults_LimitRangeItem, applied on read', () => {
  it.each<{ name: string; item: LimitRangeItem; defaulted: LimitRangeItem }>([
    {
      name: 'a Pod item is left as is',
      item: { type: 'Pod', max: cpu('2'), min: cpu('1') },
      defaulted: { type: 'Pod', max: cpu('2'), min: cpu('1') },
    },
    {
      name: 'a claim item is left as is',
      item: { type: 'PersistentVolumeClaim', max: storage('1Gi') },
      defaulted: { type: 'PersistentVolumeClaim', max: storage('1Gi') },
    },
    {
      name: 'max and min only: default and defaultRequest both come from max',
      item: { type: 'Container', max: cpu('2'), min: cpu('1') },
      defaulted: { type: 'Container', max: cpu('2'), min: cpu('1'), default: cpu('2'), defaultRequest: cpu('2') },
    },
    {
      name: 'default for one resource, max for another: both end in default and defaultRequest',
      item: { type: 'Container', default: mem('1Gi'), max: cpu('2') },
      defaulted: { type: 'Container', default: cpuMem('2', '1Gi'), max: cpu('2'), defaultRequest: cpuMem('2', '1Gi') },
    },
    {
      name: 'a defaultRequest given is kept, min fills what it lacks',
      item: { type: 'Container', defaultRequest: cpu('300m'), min: cpuMem('100m', '64Mi') },
      defaulted: { type: 'Container', defaultRequest: cpuMem('300m', '64Mi'), min: cpuMem('100m', '64Mi'), default: {} },
    },
  ])('$name', ({ item, defaulted }) => {
    const once = withLimitRangeApiDefaults(deepFreeze(lr('lr', item)));
    expect(once.spec?.limits).toEqual([defaulted]);
    // Idempotent: a LimitRange stored already defaulted reads back the same.
    expect(withLimitRangeApiDefaults(deepFreeze(once))).toEqual(once);
  });
});
