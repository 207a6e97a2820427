import { describe, expect, it } from 'vitest';
import { InvariantViolation } from '../assert.js';
import { DomainError } from '../errors.js';
import type { LimitRange, Pod } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import { resourceList } from '../resources/resource-list.js';
import { formatRatio, limitRequestRatioConstraint, maxConstraint, maxRequestConstraint, minConstraint } from './constraints.js';
import { applyDefaults } from './defaults.js';
import { aggregateMessage, podLimitViolations, validatePodLimits, validatePvcLimits } from './validate.js';
import {
  cpuMem,
  deepFreeze,
  ephemeral,
  limitRange,
  requirements,
  storage,
  validPod,
  validPvc,
  withInit,
  withSidecar,
} from './spec-fixtures.js';

const ctr = (spec: Parameters<typeof limitRange>[1]) => limitRange('Container', spec);
const podLR = (spec: Parameters<typeof limitRange>[1]) => limitRange('Pod', spec);

/** Mutate, then validate: what the plugin's two phases do to a created pod. */
const admitPod = (pod: Pod, lr: LimitRange) => validatePodLimits(applyDefaults(deepFreeze(pod), [lr]), [lr]);

// TestPodLimitFunc, success table.
describe('pods that satisfy the LimitRange', () => {
  const r = requirements;
  it.each<[string, Pod, LimitRange]>([
    ['ctr-min-cpu-request', validPod('a', 1, r(cpuMem('100m'))), ctr({ min: cpuMem('50m') })],
    ['ctr-min-cpu-request-limit', validPod('a', 1, r(cpuMem('100m'), cpuMem('200m'))), ctr({ min: cpuMem('50m') })],
    ['ctr-min-memory-request', validPod('a', 1, r(cpuMem('', '60Mi'))), ctr({ min: cpuMem('', '50Mi') })],
    ['ctr-min-memory-request-limit', validPod('a', 1, r(cpuMem('', '60Mi'), cpuMem('', '100Mi'))), ctr({ min: cpuMem('', '50Mi') })],
    ['ctr-max-cpu-request-limit', validPod('a', 1, r(cpuMem('500m'), cpuMem('1'))), ctr({ max: cpuMem('2') })],
    ['ctr-max-cpu-limit', validPod('a', 1, r({}, cpuMem('1'))), ctr({ max: cpuMem('2') })],
    ['ctr-max-mem-request-limit', validPod('a', 1, r(cpuMem('', '250Mi'), cpuMem('', '500Mi'))), ctr({ max: cpuMem('', '1Gi') })],
    ['ctr-max-cpu-ratio', validPod('a', 1, r(cpuMem('500m'), cpuMem('750m'))), ctr({ maxLimitRequestRatio: cpuMem('1.5') })],
    ['ctr-max-mem-limit', validPod('a', 1, r({}, cpuMem('', '500Mi'))), ctr({ max: cpuMem('', '1Gi') })],
    ['pod-min-cpu-request', validPod('a', 2, r(cpuMem('75m'))), podLR({ min: cpuMem('100m') })],
    ['pod-min-cpu-request-limit', validPod('a', 2, r(cpuMem('75m'), cpuMem('200m'))), podLR({ min: cpuMem('100m') })],
    ['pod-min-memory-request', validPod('a', 2, r(cpuMem('', '60Mi'))), podLR({ min: cpuMem('', '100Mi') })],
    ['pod-min-memory-request-limit', validPod('a', 2, r(cpuMem('', '60Mi'), cpuMem('', '100Mi'))), podLR({ min: cpuMem('', '100Mi') })],
    [
      'pod-init-min-memory-request',
      withInit(validPod('a', 2, r(cpuMem('', '60Mi'))), r(cpuMem('', '100Mi'))),
      podLR({ min: cpuMem('', '100Mi') }),
    ],
    [
      'pod-init-min-memory-request-limit',
      withInit(validPod('a', 2, r(cpuMem('', '60Mi'), cpuMem('', '100Mi'))), r(cpuMem('', '80Mi'), cpuMem('', '100Mi'))),
      podLR({ min: cpuMem('', '100Mi') }),
    ],
    ['pod-max-cpu-request-limit', validPod('a', 2, r(cpuMem('500m'), cpuMem('1'))), podLR({ max: cpuMem('2') })],
    ['pod-max-cpu-limit', validPod('a', 2, r({}, cpuMem('1'))), podLR({ max: cpuMem('2') })],
    [
      'pod-init-max-cpu-request-limit',
      withInit(validPod('a', 2, r(cpuMem('500m'), cpuMem('1'))), r(cpuMem('1'), cpuMem('2')), r(cpuMem('1'), cpuMem('1'))),
      podLR({ max: cpuMem('2') }),
    ],
    [
      'pod-init-max-cpu-limit',
      withInit(validPod('a', 2, r({}, cpuMem('1'))), r({}, cpuMem('2')), r({}, cpuMem('2'))),
      podLR({ max: cpuMem('2') }),
    ],
    ['pod-max-mem-request-limit', validPod('a', 2, r(cpuMem('', '250Mi'), cpuMem('', '500Mi'))), podLR({ max: cpuMem('', '1Gi') })],
    ['pod-max-mem-limit', validPod('a', 2, r({}, cpuMem('', '500Mi'))), podLR({ max: cpuMem('', '1Gi') })],
    [
      'pod-max-mem-ratio',
      validPod('a', 3, r(cpuMem('', '300Mi'), cpuMem('', '450Mi'))),
      podLR({ max: cpuMem('', '2Gi'), maxLimitRequestRatio: cpuMem('', '1.5') }),
    ],
    ['ctr-1-min-local-ephemeral-storage-request', validPod('a', 1, r(ephemeral('60Mi'))), ctr({ min: ephemeral('50Mi') })],
    [
      'ctr-1-min-local-ephemeral-storage-request-limit',
      validPod('a', 1, r(ephemeral('60Mi'), ephemeral('100Mi'))),
      ctr({ min: ephemeral('50Mi') }),
    ],
    [
      'ctr-1-max-local-ephemeral-storage-request-limit',
      validPod('a', 1, r(ephemeral('250Mi'), ephemeral('500Mi'))),
      ctr({ max: ephemeral('1Gi') }),
    ],
    ['ctr-1-max-local-ephemeral-storage-limit', validPod('a', 1, r({}, ephemeral('500Mi'))), ctr({ max: ephemeral('1Gi') })],
    ['ctr-2-min-local-ephemeral-storage-request', validPod('a', 2, r(ephemeral('60Mi'))), ctr({ min: ephemeral('50Mi') })],
    [
      'ctr-2-min-local-ephemeral-storage-request-limit',
      validPod('a', 2, r(ephemeral('60Mi'), ephemeral('100Mi'))),
      ctr({ min: ephemeral('50Mi') }),
    ],
    [
      'ctr-2-max-local-ephemeral-storage-request-limit',
      validPod('a', 2, r(ephemeral('250Mi'), ephemeral('500Mi'))),
      ctr({ max: ephemeral('600Mi') }),
    ],
    ['ctr-2-max-local-ephemeral-storage-limit', validPod('a', 2, r({}, ephemeral('500Mi'))), ctr({ max: ephemeral('600Mi') })],
    ['pod-min-local-ephemeral-storage-request', validPod('a', 2, r(ephemeral('60Mi'))), podLR({ min: ephemeral('100Mi') })],
    [
      'pod-min-local-ephemeral-storage-request-limit',
      validPod('a', 2, r(ephemeral('60Mi'), ephemeral('100Mi'))),
      podLR({ min: ephemeral('100Mi') }),
    ],
    [
      'pod-init-min-local-ephemeral-storage-request',
      withInit(validPod('a', 2, r(ephemeral('60Mi'))), r(ephemeral('100Mi'))),
      podLR({ min: ephemeral('100Mi') }),
    ],
    [
      'pod-init-min-local-ephemeral-storage-request-limit',
      withInit(validPod('a', 2, r(ephemeral('60Mi'), ephemeral('100Mi'))), r(ephemeral('80Mi'), ephemeral('100Mi'))),
      podLR({ min: ephemeral('100Mi') }),
    ],
    [
      'pod-max-local-ephemeral-storage-request-limit',
      validPod('a', 2, r(ephemeral('250Mi'), ephemeral('500Mi'))),
      podLR({ max: ephemeral('1Gi') }),
    ],
    ['pod-max-local-ephemeral-storage-limit', validPod('a', 2, r({}, ephemeral('500Mi'))), podLR({ max: ephemeral('1Gi') })],
    [
      'pod-max-local-ephemeral-storage-ratio',
      validPod('a', 3, r(ephemeral('300Mi'), ephemeral('450Mi'))),
      podLR({ max: ephemeral('2Gi'), maxLimitRequestRatio: ephemeral('1.5') }),
    ],
  ])('admits %s', (_name, pod, lr) => {
    const result = admitPod(pod, lr);
    expect(result).toEqual({ ok: true, violations: [] });
  });
});

// TestPodLimitFunc, error table; Kubernetes only checks that each fails, we pin the message.
describe('pods that break the LimitRange', () => {
  const r = requirements;
  const noReq = (res: string, type: string, q: string) => `minimum ${res} usage per ${type} is ${q}.  No request is specified`;
  const noLim = (res: string, type: string, q: string) => `maximum ${res} usage per ${type} is ${q}.  No limit is specified`;
  it.each<[string, Pod, LimitRange, string]>([
    [
      'ctr-min-cpu-request',
      validPod('a', 1, r(cpuMem('40m'))),
      ctr({ min: cpuMem('50m') }),
      'minimum cpu usage per Container is 50m, but request is 40m',
    ],
    [
      'ctr-min-cpu-request-limit',
      validPod('a', 1, r(cpuMem('40m'), cpuMem('200m'))),
      ctr({ min: cpuMem('50m') }),
      'minimum cpu usage per Container is 50m, but request is 40m',
    ],
    ['ctr-min-cpu-no-request-limit', validPod('a', 1, {}), ctr({ min: cpuMem('50m') }), noReq('cpu', 'Container', '50m')],
    [
      'ctr-min-memory-request',
      validPod('a', 1, r(cpuMem('', '40Mi'))),
      ctr({ min: cpuMem('', '50Mi') }),
      'minimum memory usage per Container is 50Mi, but request is 40Mi',
    ],
    [
      'ctr-min-memory-request-limit',
      validPod('a', 1, r(cpuMem('', '40Mi'), cpuMem('', '100Mi'))),
      ctr({ min: cpuMem('', '50Mi') }),
      'minimum memory usage per Container is 50Mi, but request is 40Mi',
    ],
    ['ctr-min-memory-no-request-limit', validPod('a', 1, {}), ctr({ min: cpuMem('', '50Mi') }), noReq('memory', 'Container', '50Mi')],
    [
      'ctr-max-cpu-request-limit',
      validPod('a', 1, r(cpuMem('500m'), cpuMem('2500m'))),
      ctr({ max: cpuMem('2') }),
      'maximum cpu usage per Container is 2, but limit is 2500m',
    ],
    [
      'ctr-max-cpu-limit',
      validPod('a', 1, r({}, cpuMem('2500m'))),
      ctr({ max: cpuMem('2') }),
      'maximum cpu usage per Container is 2, but limit is 2500m',
    ],
    ['ctr-max-cpu-no-request-limit', validPod('a', 1, {}), ctr({ max: cpuMem('2') }), noLim('cpu', 'Container', '2')],
    [
      'ctr-max-cpu-ratio',
      validPod('a', 1, r(cpuMem('1250m'), cpuMem('2500m'))),
      ctr({ maxLimitRequestRatio: cpuMem('1') }),
      'cpu max limit to request ratio per Container is 1, but provided ratio is 2.000000',
    ],
    [
      'ctr-max-mem-request-limit',
      validPod('a', 1, r(cpuMem('', '250Mi'), cpuMem('', '2Gi'))),
      ctr({ max: cpuMem('', '1Gi') }),
      'maximum memory usage per Container is 1Gi, but limit is 2Gi',
    ],
    [
      'ctr-max-mem-limit',
      validPod('a', 1, r({}, cpuMem('', '2Gi'))),
      ctr({ max: cpuMem('', '1Gi') }),
      'maximum memory usage per Container is 1Gi, but limit is 2Gi',
    ],
    ['ctr-max-mem-no-request-limit', validPod('a', 1, {}), ctr({ max: cpuMem('', '1Gi') }), noLim('memory', 'Container', '1Gi')],
    [
      'pod-min-cpu-request',
      validPod('a', 1, r(cpuMem('75m'))),
      podLR({ min: cpuMem('100m') }),
      'minimum cpu usage per Pod is 100m, but request is 75m',
    ],
    [
      'pod-min-cpu-request-limit',
      validPod('a', 1, r(cpuMem('75m'), cpuMem('200m'))),
      podLR({ min: cpuMem('100m') }),
      'minimum cpu usage per Pod is 100m, but request is 75m',
    ],
    [
      'pod-min-memory-request',
      validPod('a', 1, r(cpuMem('', '60Mi'))),
      podLR({ min: cpuMem('', '100Mi') }),
      'minimum memory usage per Pod is 100Mi, but request is 60Mi',
    ],
    [
      'pod-min-memory-request-limit',
      validPod('a', 1, r(cpuMem('', '60Mi'), cpuMem('', '100Mi'))),
      podLR({ min: cpuMem('', '100Mi') }),
      'minimum memory usage per Pod is 100Mi, but request is 60Mi',
    ],
    [
      'pod-max-cpu-request-limit',
      validPod('a', 3, r(cpuMem('500m'), cpuMem('1'))),
      podLR({ max: cpuMem('2') }),
      'maximum cpu usage per Pod is 2, but limit is 3',
    ],
    [
      'pod-max-cpu-limit',
      validPod('a', 3, r({}, cpuMem('1'))),
      podLR({ max: cpuMem('2') }),
      'maximum cpu usage per Pod is 2, but limit is 3',
    ],
    [
      'pod-max-mem-request-limit',
      validPod('a', 3, r(cpuMem('', '250Mi'), cpuMem('', '500Mi'))),
      podLR({ max: cpuMem('', '1Gi') }),
      'maximum memory usage per Pod is 1Gi, but limit is 1500Mi',
    ],
    [
      'pod-max-mem-limit',
      validPod('a', 3, r({}, cpuMem('', '500Mi'))),
      podLR({ max: cpuMem('', '1Gi') }),
      'maximum memory usage per Pod is 1Gi, but limit is 1500Mi',
    ],
    [
      'pod-init-max-mem-limit',
      withInit(validPod('a', 1, r({}, cpuMem('', '500Mi'))), r({}, cpuMem('', '1.5Gi'))),
      podLR({ max: cpuMem('', '1Gi') }),
      'maximum memory usage per Pod is 1Gi, but limit is 1536Mi',
    ],
    [
      'pod-max-mem-ratio',
      validPod('a', 3, r(cpuMem('', '250Mi'), cpuMem('', '500Mi'))),
      podLR({ max: cpuMem('', '2Gi'), maxLimitRequestRatio: cpuMem('', '1.5') }),
      'memory max limit to request ratio per Pod is 1500m, but provided ratio is 2.000000',
    ],
    [
      'ctr-1-min-local-ephemeral-storage-request',
      validPod('a', 1, r(ephemeral('40Mi'))),
      ctr({ min: ephemeral('50Mi') }),
      'minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi',
    ],
    [
      'ctr-1-min-local-ephemeral-storage-request-limit',
      validPod('a', 1, r(ephemeral('40Mi'), ephemeral('100Mi'))),
      ctr({ min: ephemeral('50Mi') }),
      'minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi',
    ],
    [
      'ctr-1-min-local-ephemeral-storage-no-request-limit',
      validPod('a', 1, {}),
      ctr({ min: ephemeral('50Mi') }),
      noReq('ephemeral-storage', 'Container', '50Mi'),
    ],
    [
      'ctr-1-max-local-ephemeral-storage-request-limit',
      validPod('a', 1, r(ephemeral('250Mi'), ephemeral('2Gi'))),
      ctr({ max: ephemeral('1Gi') }),
      'maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi',
    ],
    [
      'ctr-1-max-local-ephemeral-storage-limit',
      validPod('a', 1, r({}, ephemeral('2Gi'))),
      ctr({ max: ephemeral('1Gi') }),
      'maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi',
    ],
    [
      'ctr-1-max-local-ephemeral-storage-no-request-limit',
      validPod('a', 1, {}),
      ctr({ max: ephemeral('1Gi') }),
      noLim('ephemeral-storage', 'Container', '1Gi'),
    ],
    // With two containers breaking it the same way, the aggregate shows the text once.
    [
      'ctr-2-min-local-ephemeral-storage-request',
      validPod('a', 2, r(ephemeral('40Mi'))),
      ctr({ min: ephemeral('50Mi') }),
      'minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi',
    ],
    [
      'ctr-2-min-local-ephemeral-storage-request-limit',
      validPod('a', 2, r(ephemeral('40Mi'), ephemeral('100Mi'))),
      ctr({ min: ephemeral('50Mi') }),
      'minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi',
    ],
    [
      'ctr-2-min-local-ephemeral-storage-no-request-limit',
      validPod('a', 2, {}),
      ctr({ min: ephemeral('50Mi') }),
      noReq('ephemeral-storage', 'Container', '50Mi'),
    ],
    [
      'ctr-2-max-local-ephemeral-storage-request-limit',
      validPod('a', 2, r(ephemeral('250Mi'), ephemeral('2Gi'))),
      ctr({ max: ephemeral('1Gi') }),
      'maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi',
    ],
    [
      'ctr-2-max-local-ephemeral-storage-limit',
      validPod('a', 2, r({}, ephemeral('2Gi'))),
      ctr({ max: ephemeral('1Gi') }),
      'maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi',
    ],
    [
      'ctr-2-max-local-ephemeral-storage-no-request-limit',
      validPod('a', 2, {}),
      ctr({ max: ephemeral('1Gi') }),
      noLim('ephemeral-storage', 'Container', '1Gi'),
    ],
    [
      'pod-min-local-ephemeral-storage-request',
      validPod('a', 1, r(ephemeral('60Mi'))),
      podLR({ min: ephemeral('100Mi') }),
      'minimum ephemeral-storage usage per Pod is 100Mi, but request is 60Mi',
    ],
    [
      'pod-min-local-ephemeral-storage-request-limit',
      validPod('a', 1, r(ephemeral('60Mi'), ephemeral('100Mi'))),
      podLR({ min: ephemeral('100Mi') }),
      'minimum ephemeral-storage usage per Pod is 100Mi, but request is 60Mi',
    ],
    [
      'pod-max-local-ephemeral-storage-request-limit',
      validPod('a', 3, r(ephemeral('250Mi'), ephemeral('500Mi'))),
      podLR({ max: ephemeral('1Gi') }),
      'maximum ephemeral-storage usage per Pod is 1Gi, but limit is 1500Mi',
    ],
    [
      'pod-max-local-ephemeral-storage-limit',
      validPod('a', 3, r({}, ephemeral('500Mi'))),
      podLR({ max: ephemeral('1Gi') }),
      'maximum ephemeral-storage usage per Pod is 1Gi, but limit is 1500Mi',
    ],
    [
      'pod-init-max-local-ephemeral-storage-limit',
      withInit(validPod('a', 1, r({}, ephemeral('500Mi'))), r({}, ephemeral('1.5Gi'))),
      podLR({ max: ephemeral('1Gi') }),
      'maximum ephemeral-storage usage per Pod is 1Gi, but limit is 1536Mi',
    ],
    [
      'pod-max-local-ephemeral-storage-ratio',
      validPod('a', 3, r(ephemeral('250Mi'), ephemeral('500Mi'))),
      podLR({ max: ephemeral('2Gi'), maxLimitRequestRatio: ephemeral('1.5') }),
      'ephemeral-storage max limit to request ratio per Pod is 1500m, but provided ratio is 2.000000',
    ],
    [
      'ctr-max-cpu-limit-restartable-init-container',
      withSidecar(validPod('a', 1, r(cpuMem('1000m'), cpuMem('1500m'))), r(cpuMem('1500m'))),
      podLR({ max: cpuMem('2') }),
      'maximum cpu usage per Pod is 2, but request is 2500m',
    ],
  ])('refuses %s', (_name, pod, lr, message) => {
    const result = admitPod(pod, lr);
    expect(result.ok).toBe(false);
    expect(result.limitRange).toBe('abc');
    expect(result.message).toBe(message);
  });
});

describe('how a pod is summed for Pod-type items', () => {
  const r = requirements;
  const messageFor = (pod: Pod, lr: LimitRange, podLevelResources?: boolean) =>
    validatePodLimits(deepFreeze(pod), [lr], podLevelResources === undefined ? {} : { podLevelResources }).message;

  it('runs a one-shot init container alongside the sidecars started before it', () => {
    // Sidecar 300m, then a one-shot init 800m: 1100m while it runs, above the 1 maximum.
    let pod = withSidecar(validPod('a', 1, r(cpuMem('100m'), cpuMem('100m'))), r(cpuMem('300m'), cpuMem('300m')));
    pod = withInit(pod, r(cpuMem('800m'), cpuMem('800m')));
    expect(messageFor(pod, podLR({ max: cpuMem('1') }))).toBe('maximum cpu usage per Pod is 1, but limit is 1100m');
  });

  it('does not add a one-shot init container that runs before the sidecars', () => {
    let pod = withInit(validPod('a', 1, r(cpuMem('100m'), cpuMem('100m'))), r(cpuMem('800m'), cpuMem('800m')));
    pod = withSidecar(pod, r(cpuMem('300m'), cpuMem('300m')));
    expect(messageFor(pod, podLR({ max: cpuMem('1') }))).toBeUndefined();
  });

  it('lets pod-level cpu and memory replace the container sum', () => {
    const base = validPod('a', 2, r(cpuMem('1', '1Gi'), cpuMem('1', '1Gi')));
    const pod: Pod = { ...base, spec: { ...base.spec, resources: { limits: cpuMem('3', '3Gi') } } };
    const lr = podLR({ max: cpuMem('2500m', '4Gi') });
    expect(messageFor(pod, lr)).toBe('maximum cpu usage per Pod is 2500m, but limit is 3');
    // With the feature gate off the pod-level values are ignored: 2 cpu fits.
    expect(messageFor(pod, lr, false)).toBeUndefined();
  });

  it('does not let pod-level resources override anything but cpu and memory', () => {
    const base = validPod('a', 1, r(ephemeral('1Gi'), ephemeral('1Gi')));
    const pod: Pod = { ...base, spec: { ...base.spec, resources: { limits: ephemeral('10Gi') } } };
    expect(messageFor(pod, podLR({ max: ephemeral('2Gi') }))).toBeUndefined();
  });

  it('leaves a resource out of the sum when no container sets it', () => {
    const pod = validPod('a', 2, r(cpuMem('100m')));
    expect(messageFor(pod, podLR({ max: cpuMem('', '1Gi') }))).toBe('maximum memory usage per Pod is 1Gi.  No limit is specified');
  });
});

describe('the aggregated message', () => {
  it('lists violations in item order, min before max before ratio, resources by name', () => {
    const lr: LimitRange = {
      metadata: { name: 'lr' },
      spec: {
        limits: [
          { type: 'Container', min: cpuMem('100m', '64Mi'), max: cpuMem('1'), maxLimitRequestRatio: cpuMem('2') },
          { type: 'Pod', max: cpuMem('', '1Gi') },
        ],
      },
    };
    const pod = withInit(
      validPod('a', 1, requirements(cpuMem('50m', '32Mi'), cpuMem('2', '2Gi'))),
      requirements(cpuMem('200m', '64Mi'), cpuMem('200m', '64Mi')),
    );
    const result = validatePodLimits(deepFreeze(pod), [lr]);
    expect(result.violations.map((v) => [v.container?.name, v.container?.init, v.resource, v.problem])).toEqual([
      ['foo-0', false, 'cpu', 'RequestBelowMin'],
      ['foo-0', false, 'memory', 'RequestBelowMin'],
      ['foo-0', false, 'cpu', 'LimitAboveMax'],
      ['foo-0', false, 'cpu', 'RatioAboveMax'],
      [undefined, undefined, 'memory', 'LimitAboveMax'],
    ]);
    expect(result.message).toBe(
      '[minimum cpu usage per Container is 100m, but request is 50m, minimum memory usage per Container is 64Mi, but request is 32Mi, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 2, but provided ratio is 40.000000, maximum memory usage per Pod is 1Gi, but limit is 2Gi]',
    );
  });

  it('prints one message bare and de-duplicates repeats', () => {
    expect(aggregateMessage(['a'])).toBe('a');
    expect(aggregateMessage(['a', 'a'])).toBe('a');
    expect(aggregateMessage(['a', 'b', 'a'])).toBe('[a, b]');
  });

  it('stops at the first LimitRange that refuses', () => {
    const first = limitRange('Container', { max: cpuMem('1') }, 'first');
    const second = limitRange('Container', { max: cpuMem('500m') }, 'second');
    const third = limitRange('Container', { max: cpuMem('100m') }, 'third');
    const result = validatePodLimits(deepFreeze(validPod('a', 1, requirements({}, cpuMem('800m')))), [first, second, third]);
    expect(result.limitRange).toBe('second');
    expect(result.message).toBe('maximum cpu usage per Container is 500m, but limit is 800m');
  });

  it('describes each violation in structure as well as in text', () => {
    const [v] = podLimitViolations(
      limitRange('Container', { maxLimitRequestRatio: cpuMem('2') }),
      validPod('a', 1, requirements(cpuMem('250m'), cpuMem('1'))),
    );
    expect(v).toMatchObject({
      limitRange: 'abc',
      limitType: 'Container',
      resource: 'cpu',
      constraint: 'maxLimitRequestRatio',
      problem: 'RatioAboveMax',
      ratio: '4.000000',
      container: { name: 'foo-0', init: false, index: 0 },
      message: 'cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000',
    });
    expect(v?.enforced.toString()).toBe('2');
    expect(v?.observed?.toString()).toBe('1');
  });
});

describe('bad input', () => {
  it('refuses a pod with an unparsable quantity as an unreadable one', () => {
    const pod = validPod('a', 1, requirements({}, { cpu: 'lots' }));
    expect(() => validatePodLimits(pod, [])).toThrow(DomainError);
    try {
      validatePodLimits(pod, []);
    } catch (error) {
      expect((error as DomainError).code).toBe('QuantityInvalid');
      expect((error as DomainError).causes[0]?.field).toBe('spec.containers[0].resources.limits[cpu]');
    }
  });

  it('treats an unparsable quantity in a stored LimitRange as a bug', () => {
    expect(() => validatePodLimits(validPod('a', 1, {}), [limitRange('Container', { max: { cpu: 'x' } })])).toThrow(InvariantViolation);
  });
});

// TestPersistentVolumeClaimLimitFunc, plus the update rule of PR #142170.
describe('persistent volume claims', () => {
  const pvcLR = (spec: Parameters<typeof limitRange>[1]) => limitRange('PersistentVolumeClaim', spec);

  it.each([
    ['pvc-is-min-storage-request', '1Gi', pvcLR({ min: storage('1Gi') })],
    ['pvc-is-max-storage-request', '1Gi', pvcLR({ max: storage('1Gi') })],
    ['pvc-no-minmax-storage-request', '100Gi', pvcLR({})],
    ['pvc-within-minmax-storage-request', '5Gi', pvcLR({ min: storage('1Gi'), max: storage('10Gi') })],
    ['a claim under a Container-type item', '100Gi', limitRange('Container', { max: storage('1Gi') })],
  ])('admits %s', (_name, request, lr) => {
    expect(validatePvcLimits(validPvc('c', storage(request)), [lr]).ok).toBe(true);
  });

  it.each([
    [
      'pvc-below-min-storage-request',
      storage('500Mi'),
      pvcLR({ min: storage('1Gi') }),
      'minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
    ],
    [
      'pvc-exceeds-max-storage-request',
      storage('100Gi'),
      pvcLR({ min: storage('1Gi'), max: storage('1Gi') }),
      'maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Gi',
    ],
    [
      'a claim with no storage request',
      undefined,
      pvcLR({ min: storage('1Gi'), max: storage('10Gi') }),
      '[minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]',
    ],
  ])('refuses %s', (_name, requests, lr, message) => {
    const result = validatePvcLimits(validPvc('c', requests), [lr]);
    expect(result.ok).toBe(false);
    expect(result.message).toBe(message);
  });

  it('never checks maxLimitRequestRatio or the claim limits', () => {
    const pvc = { ...validPvc('c', storage('5Gi')), spec: { resources: { requests: storage('5Gi'), limits: storage('500Gi') } } };
    expect(validatePvcLimits(pvc, [pvcLR({ max: storage('10Gi'), maxLimitRequestRatio: storage('1') })]).ok).toBe(true);
  });

  it.each([
    ['admits an update that keeps a stored request above the max', '20Gi', '20Gi', true],
    ['counts 20Gi and 20480Mi as the same request', '20Gi', '20480Mi', true],
    ['refuses an update that changes the request to another value above the max', '20Gi', '30Gi', false],
    ['refuses an update that adds a request above the max', undefined, '20Gi', false],
  ])('%s', (_name, before, after, ok) => {
    const lr = pvcLR({ max: storage('10Gi') });
    const oldPvc = validPvc('c', before === undefined ? undefined : storage(before));
    expect(validatePvcLimits(validPvc('c', storage(after)), [lr], oldPvc).ok).toBe(ok);
  });

  it('still checks a request the update removes', () => {
    const result = validatePvcLimits(validPvc('c'), [pvcLR({ min: storage('1Gi') })], validPvc('c', storage('5Gi')));
    expect(result.message).toBe('minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified');
  });
});

// admission_overflow_test.go (PR #141348): exact comparisons, within the 10^30 this
// project's quantities reach. Rows at exponents like 1e2147483647 or 1e400 cannot be
// parsed here and are not ported.
describe('exact constraint comparisons', () => {
  const q = (s: string) => Quantity.parse(s);
  const mem = (s: string) => resourceList({ memory: s });
  const none = resourceList({});

  it('holds past the int64 range', () => {
    const huge = q('18446744073709551616');
    expect(maxConstraint('Container', 'memory', q('1000'), none, resourceList({ memory: '18446744073709551616' }))).toBeDefined();
    expect(maxRequestConstraint('Container', 'memory', q('1000'), mem('18446744073709551616'))).toBeDefined();
    expect(minConstraint('Container', 'memory', huge, mem('1'), none)).toBeDefined();
    expect(limitRequestRatioConstraint('Container', 'memory', q('1000'), mem('1'), mem('18446744073709551616'))).toBeDefined();
    expect(maxConstraint('Container', 'memory', q('1000'), none, mem('1'))).toBeUndefined();
  });

  it.each([
    ['ratio at the maximum', '100', '200', '2', false],
    ['ratio above the maximum', '100', '300', '2', true],
    ['limit past 2^63', '1', '9223372036854775809', '2', true],
    ['equal request and limit at 2^63', '9223372036854775808', '9223372036854775808', '1', false],
    ['equal request and limit at 2^64', '18446744073709551616', '18446744073709551616', '1', false],
    ['ratio at the maximum past 2^63', '9223372036854775808', '18446744073709551616', '2', false],
    ['ratio above the maximum past 2^63', '9223372036854775808', '27670116110564327424', '2', true],
    ['ratio one unit below the maximum', '9007199254740992', '18014398509481983', '2', false],
    ['ratio exactly at the maximum', '9007199254740992', '18014398509481984', '2', false],
    ['ratio one unit above the maximum', '9007199254740992', '18014398509481985', '2', true],
    ['ratio above the maximum with both operands negative', '-1', '-3', '2', true],
  ])('ratio: %s', (_name, request, limit, ratio, refused) => {
    expect(limitRequestRatioConstraint('Container', 'memory', q(ratio), mem(request), mem(limit)) !== undefined).toBe(refused);
  });

  it.each([
    ['under the maximum', '1', '1', '2', undefined],
    ['at the maximum', '1', '2', '2', undefined],
    ['above the maximum', '1', '3', '2', 'memory max limit to request ratio per Container is 2, but provided ratio is 3.000000'],
    ['under the maximum with both operands negative', '-1', '-1', '2', undefined],
    [
      'above the maximum with both operands negative',
      '-1',
      '-3',
      '2',
      'memory max limit to request ratio per Container is 2, but provided ratio is 3.000000',
    ],
    [
      'above the maximum with only the request negative',
      '-1',
      '3',
      '2',
      'memory max limit to request ratio per Container is 2, but provided ratio is 3.000000',
    ],
    [
      'above the maximum with only the limit negative',
      '1',
      '-3',
      '2',
      'memory max limit to request ratio per Container is 2, but provided ratio is 3.000000',
    ],
    [
      'with operands at different scales',
      '1',
      '1500m',
      '1',
      'memory max limit to request ratio per Container is 1, but provided ratio is 1.500000',
    ],
    [
      'with a zero request',
      '0',
      '1',
      '2',
      'memory max limit to request ratio per Container is 2, but no request is specified or request is 0',
    ],
    ['with a zero limit', '1', '0', '2', 'memory max limit to request ratio per Container is 2, but no limit is specified or limit is 0'],
    [
      'with a tiny nonzero request',
      '1n',
      '1',
      '2',
      'memory max limit to request ratio per Container is 2, but provided ratio is 1000000000.000000',
    ],
  ])('ratio message %s', (_name, request, limit, ratio, message) => {
    expect(limitRequestRatioConstraint('Container', 'memory', q(ratio), mem(request), mem(limit))?.message).toBe(message);
  });

  it('names a missing request or limit for the ratio', () => {
    expect(limitRequestRatioConstraint('Pod', 'cpu', q('3'), none, resourceList({ cpu: '1' }))?.message).toBe(
      'cpu max limit to request ratio per Pod is 3, but no request is specified or request is 0',
    );
    expect(limitRequestRatioConstraint('Pod', 'cpu', q('3'), resourceList({ cpu: '1' }), none)?.message).toBe(
      'cpu max limit to request ratio per Pod is 3, but no limit is specified or limit is 0',
    );
  });

  it.each([
    ['a request a fraction below the minimum', () => minConstraint('Container', 'memory', q('1'), mem('0.9999'), none)],
    ['a limit a fraction above the maximum', () => maxConstraint('Container', 'memory', q('1.0001'), none, mem('1.0009'))],
    ['a request a fraction above the maximum', () => maxRequestConstraint('Container', 'memory', q('1.0001'), mem('1.0009'))],
    ['a ratio a fraction above the maximum', () => limitRequestRatioConstraint('Container', 'memory', q('2'), mem('1.0001'), mem('2.001'))],
  ])('refuses %s, which rounding to milli-units once let through', (_name, check) => {
    expect(check()).toBeDefined();
  });

  it.each([
    ['3', '2', '1.500000'],
    ['2', '3', '0.666667'],
    ['1', '2000000', '0.000000'],
    ['3', '2000000', '0.000002'],
    ['5', '2000000', '0.000002'],
    ['7', '2000000', '0.000004'],
    ['1Gi', '1Mi', '1024.000000'],
  ])('formats %s / %s as %s, rounding half to even', (limit, request, text) => {
    expect(formatRatio(q(limit), q(request))).toBe(text);
  });
});
