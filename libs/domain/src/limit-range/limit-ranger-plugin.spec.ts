import { describe, expect, it } from 'vitest';
import type { GroupResource, KubeObject, LimitRange, Operation, Pod } from '../kube/types.js';
import { admitLimitRanger, limitRangerHandles, type LimitRangerRequest } from './limit-ranger-plugin.js';
import { applyJsonPatch } from './json-patch.js';
import { selectObject } from '../kube/fields-read.js';

const PODS = { group: '', resource: 'pods' };
import { validatePodLimits } from './validate.js';
import {
  cpuMem,
  deepFreeze,
  limitRange,
  requirements,
  storage,
  validLimitRange,
  validLimitRangeNoDefaults,
  validPod,
  validPvc,
} from './spec-fixtures.js';

const pods: GroupResource = { group: '', resource: 'pods' };
const pvcs: GroupResource = { group: '', resource: 'persistentvolumeclaims' };

const request = (over: Partial<LimitRangerRequest> & Pick<LimitRangerRequest, 'object'>): LimitRangerRequest => ({
  operation: 'CREATE',
  resource: pods,
  limitRanges: [validLimitRangeNoDefaults()],
  ...over,
});

describe('which requests LimitRanger looks at', () => {
  it.each<[Operation, GroupResource, string, boolean]>([
    ['CREATE', pods, '', true],
    ['UPDATE', pods, '', false],
    ['UPDATE', pods, 'resize', true],
    ['CREATE', pods, 'resize', false],
    ['UPDATE', pods, 'status', false],
    ['CREATE', pods, 'binding', false],
    ['CREATE', pods, 'eviction', false],
    ['UPDATE', pods, 'ephemeralcontainers', false],
    ['DELETE', pods, '', false],
    ['CONNECT', pods, 'exec', false],
    ['CREATE', pvcs, '', true],
    ['UPDATE', pvcs, '', true],
    ['UPDATE', pvcs, 'status', false],
    ['UPDATE', pvcs, 'resize', false],
    ['DELETE', pvcs, '', false],
    ['CREATE', { group: '', resource: 'services' }, '', false],
    ['CREATE', { group: 'example.com', resource: 'pods' }, '', false],
  ])('%s %o subresource "%s": %s', (operation, resource, subresource, handled) => {
    expect(limitRangerHandles({ operation, resource, subresource })).toBe(handled);
  });
});

// TestLimitRangerAdmitPod and TestLimitRangerIgnoresSubresource.
describe('admitting a pod', () => {
  const allPodMessages = [
    'minimum cpu usage per Pod is 50m.  No request is specified',
    'minimum memory usage per Pod is 2Mi.  No request is specified',
    'maximum cpu usage per Pod is 200m.  No limit is specified',
    'maximum memory usage per Pod is 4Gi.  No limit is specified',
    'minimum cpu usage per Container is 25m.  No request is specified',
    'minimum memory usage per Container is 1Mi.  No request is specified',
    'maximum cpu usage per Container is 100m.  No limit is specified',
    'maximum memory usage per Container is 2Gi.  No limit is specified',
  ];

  // Kubernetes' test reads the LimitRange through a fake client, which skips the API
  // defaulting, so its plugin sees no defaults at all: validatePodLimits shows that case.
  it('refuses a pod that specifies no resources under a LimitRange read without defaults', () => {
    const result = validatePodLimits(deepFreeze(validPod('testPod', 1, {})), [validLimitRangeNoDefaults()]);
    expect(result.limitRange).toBe('abc');
    expect(result.message).toBe(`[${allPodMessages.join(', ')}]`);
  });

  it('refuses a created pod that specifies no resources under a Pod-only LimitRange', () => {
    const podOnly: LimitRange = {
      metadata: { name: 'abc' },
      spec: { limits: validLimitRangeNoDefaults().spec?.limits?.slice(0, 1) ?? [] },
    };
    const decision = admitLimitRanger(request({ name: 'testPod', object: deepFreeze(validPod('testPod', 1, {})), limitRanges: [podOnly] }));
    expect(decision.applies).toBe(true);
    expect(decision.allowed).toBe(false);
    expect(decision.patch).toEqual([]);
    expect(decision.validation.limitRange).toBe('abc');
    expect(decision.message).toBe(`pods "testPod" is forbidden: [${allPodMessages.slice(0, 4).join(', ')}]`);
  });

  it('admits that pod through admission: read as the API server decodes it, the Container max is the default', () => {
    const decision = admitLimitRanger(request({ name: 'testPod', object: deepFreeze(validPod('testPod', 1, {})) }));
    expect(decision.allowed).toBe(true);
    // The image is not read by admission (kube/fields-read.ts): the defaulted object is without it.
    expect(decision.object.spec).toEqual({
      containers: [{ name: 'foo-0', resources: { limits: { cpu: '100m', memory: '2Gi' }, requests: { cpu: '100m', memory: '2Gi' } } }],
    });
  });

  it('ignores a pod update', () => {
    const pod = deepFreeze(validPod('testPod', 1, {}));
    const decision = admitLimitRanger(request({ operation: 'UPDATE', name: 'testPod', object: pod, oldObject: pod }));
    expect(decision).toMatchObject({ applies: false, allowed: true, patch: [] });
  });

  it('ignores any pod subresource but resize', () => {
    const pod = deepFreeze(validPod('testPod', 1, {}));
    expect(admitLimitRanger(request({ operation: 'UPDATE', subresource: 'status', object: pod, oldObject: pod })).applies).toBe(false);
  });

  it('never blocks a pod being deleted', () => {
    const terminating = deepFreeze({
      ...validPod('terminatingPod', 1, {}),
      metadata: { name: 'terminatingPod', deletionTimestamp: '2026-01-01T00:00:00Z' },
    });
    const decision = admitLimitRanger(request({ operation: 'UPDATE', subresource: 'resize', object: terminating, oldObject: terminating }));
    expect(decision).toMatchObject({ applies: false, allowed: true });
  });

  it('defaults a created pod, validates the defaulted pod, and returns the patch', () => {
    const pod = deepFreeze(validPod('web', 1, {}));
    const decision = admitLimitRanger(request({ object: pod, limitRanges: [validLimitRange()] }));
    expect(decision.allowed).toBe(true);
    expect(decision.annotation).toBe(
      'LimitRanger plugin set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0',
    );
    expect(decision.patch).toEqual([
      { op: 'add', path: '/spec/containers/0/resources/limits', value: { cpu: '75m', memory: '10Mi' } },
      { op: 'add', path: '/spec/containers/0/resources/requests', value: { cpu: '50m', memory: '5Mi' } },
      { op: 'add', path: '/metadata/annotations', value: { 'kubernetes.io/limit-ranger': decision.annotation } },
    ]);
    // The defaulted object is what admission reads of the pod (kube/fields-read.ts), patched.
    expect(applyJsonPatch(selectObject(PODS, pod), decision.patch)).toEqual(decision.object);
  });

  it('refuses a pod whose defaults alone break the Pod-type maximum', () => {
    // Three containers defaulted to a 75m limit make 225m, above the pod's 200m.
    const decision = admitLimitRanger(request({ name: '', object: deepFreeze(validPod('web', 3, {})), limitRanges: [validLimitRange()] }));
    expect(decision.allowed).toBe(false);
    expect(decision.message).toBe('pods "web" is forbidden: maximum cpu usage per Pod is 200m, but limit is 225m');
  });

  it.each<[string, string | undefined, KubeObject['metadata'], string]>([
    ['the request name', 'from-request', { name: 'from-object' }, 'from-request'],
    ['the object name', '', { name: 'from-object', generateName: 'gen-' }, 'from-object'],
    ['the generateName', undefined, { generateName: 'web-' }, 'web-'],
    ['Unknown', undefined, {}, 'Unknown'],
  ])('names the pod in the message after %s', (_what, name, metadata, shown) => {
    const pod = { ...validPod('x', 1, requirements({}, cpuMem('1'))), metadata };
    const decision = admitLimitRanger(request({ name, object: pod, limitRanges: [limitRange('Container', { max: cpuMem('500m') })] }));
    expect(decision.message).toBe(`pods "${shown}" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`);
  });
});

describe('resizing a pod in place', () => {
  const lr = limitRange('Container', { max: cpuMem('1'), default: cpuMem('', '256Mi') });
  const running: Pod = deepFreeze(validPod('web', 1, requirements(cpuMem('500m', '256Mi'), cpuMem('1', '256Mi'))));

  it('refuses a resize above the Container maximum', () => {
    const resized = validPod('web', 1, requirements(cpuMem('500m', '256Mi'), cpuMem('2', '256Mi')));
    const decision = admitLimitRanger(
      request({ operation: 'UPDATE', subresource: 'resize', name: 'web', object: resized, oldObject: running, limitRanges: [lr] }),
    );
    expect(decision.message).toBe('pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  });

  it('admits a resize within the LimitRange', () => {
    const resized = validPod('web', 1, requirements(cpuMem('800m', '256Mi'), cpuMem('1', '256Mi')));
    const decision = admitLimitRanger(
      request({ operation: 'UPDATE', subresource: 'resize', object: resized, oldObject: running, limitRanges: [lr] }),
    );
    expect(decision).toMatchObject({ applies: true, allowed: true, patch: [] });
  });

  it('does not check again what the resize leaves as stored', () => {
    // The stored memory limit breaks a LimitRange created later; the resize only touches cpu.
    const strict = limitRange('Container', { max: cpuMem('1', '128Mi') });
    const resized = validPod('web', 1, requirements(cpuMem('800m', '256Mi'), cpuMem('1', '256Mi')));
    const decision = admitLimitRanger(
      request({ operation: 'UPDATE', subresource: 'resize', object: resized, oldObject: running, limitRanges: [strict] }),
    );
    expect(decision.allowed).toBe(true);
    // Without the stored pod (as on CREATE) the same pod is refused.
    expect(validatePodLimits(resized, [strict]).message).toBe('maximum memory usage per Container is 128Mi, but limit is 256Mi');
  });
});

describe('admitting a persistent volume claim', () => {
  const lr = limitRange('PersistentVolumeClaim', { min: storage('1Gi'), max: storage('10Gi') });

  it('refuses a claim above the maximum, without defaulting anything', () => {
    const decision = admitLimitRanger(
      request({ resource: pvcs, name: 'data', object: deepFreeze(validPvc('data', storage('20Gi'))), limitRanges: [lr] }),
    );
    expect(decision).toMatchObject({ applies: true, allowed: false, patch: [] });
    expect(decision.message).toBe(
      'persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi',
    );
  });

  it('admits a claim within the range with no patch', () => {
    const decision = admitLimitRanger(request({ resource: pvcs, object: deepFreeze(validPvc('data', storage('5Gi'))), limitRanges: [lr] }));
    expect(decision).toMatchObject({ applies: true, allowed: true, patch: [] });
  });

  it('admits an update that leaves a stored request alone', () => {
    const stored = deepFreeze(validPvc('data', storage('20Gi')));
    const labelled = { ...stored, metadata: { ...stored.metadata, labels: { tier: 'gold' } } };
    const decision = admitLimitRanger(
      request({ operation: 'UPDATE', resource: pvcs, object: labelled, oldObject: stored, limitRanges: [lr] }),
    );
    expect(decision.allowed).toBe(true);
  });

  it('refuses an update that grows the request above the maximum', () => {
    const stored = deepFreeze(validPvc('data', storage('5Gi')));
    const decision = admitLimitRanger(
      request({
        operation: 'UPDATE',
        resource: pvcs,
        name: 'data',
        object: validPvc('data', storage('11Gi')),
        oldObject: stored,
        limitRanges: [lr],
      }),
    );
    expect(decision.allowed).toBe(false);
  });

  it('never blocks a claim being deleted', () => {
    const stored = deepFreeze({
      ...validPvc('data', storage('5Gi')),
      metadata: { name: 'data', deletionTimestamp: '2026-01-01T00:00:00Z' },
    });
    const decision = admitLimitRanger(
      request({ operation: 'UPDATE', resource: pvcs, object: validPvc('data', storage('50Gi')), oldObject: stored, limitRanges: [lr] }),
    );
    expect(decision).toMatchObject({ applies: false, allowed: true });
  });
});
