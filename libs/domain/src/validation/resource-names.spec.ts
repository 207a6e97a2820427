import { describe, expect, it } from 'vitest';
import { Quantity } from '../quantity/quantity.js';
import {
  isIntegerResourceName,
  isOvercommitAllowed,
  isResourceQuotaScopeValidForResource,
  isStandardContainerResourceName,
  isStandardQuotaResourceName,
  isStandardResourceName,
  isStandardResourceQuotaScope,
  validateContainerResourceName,
  validateResourceName,
  validateResourceQuantityValue,
  validateResourceQuotaResourceName,
} from './resource-names.js';

describe('validateResourceName (TestValidateResourceNames)', () => {
  it.each([
    ['memory', true],
    ['cpu', true],
    ['storage', true],
    ['requests.cpu', true],
    ['requests.memory', true],
    ['requests.storage', true],
    ['limits.cpu', true],
    ['limits.memory', true],
    ['network', false],
    ['disk', false],
    ['', false],
    ['.', false],
    ['..', false],
    ['my.favorite.app.co/12345', true],
    ['my.favorite.app.co/_12345', false],
    ['my.favorite.app.co/12345_', false],
    ['kubernetes.io/..', false],
    [`kubernetes.io/${'a'.repeat(63)}`, true],
    [`kubernetes.io/${'a'.repeat(64)}`, false],
    ['kubernetes.io//', false],
    ['kubernetes.io', false],
    ['kubernetes.io/will/not/work/', false],
  ])('%s is valid: %s', (name, valid) => {
    expect(validateResourceName(name, 'field').length === 0).toBe(valid);
  });

  it('explains an unknown unprefixed name', () => {
    expect(validateResourceName('network', 'field')).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'field',
        message: 'Invalid value: "network": must be a standard resource type or fully qualified',
      },
    ]);
  });

  it('stops at the qualified-name problems, with Kubernetes byte-length wording', () => {
    expect(validateResourceName(`kubernetes.io/${'a'.repeat(64)}`, 'f').map((e) => e.message)).toEqual([
      `Invalid value: "kubernetes.io/${'a'.repeat(64)}": name part must be no more than 63 bytes`,
    ]);
  });
});

describe('validateResourceQuotaResourceName (quota resource names)', () => {
  it.each([
    ['cpu', 0],
    ['requests.storage', 0],
    ['persistentvolumeclaims', 0],
    ['services.loadbalancers', 0],
    ['hugepages-2Mi', 0],
    ['requests.hugepages-1Gi', 0],
    ['count/pods', 0],
    ['example.com/gpu', 0],
    ['requests.example.com/gpu', 0],
    ['gold.storageclass.storage.k8s.io/requests.storage', 0],
    // Known to the system, but not tracked by quota.
    ['storage', 1],
    // Neither known nor tracked.
    ['limits.hugepages-2Mi', 2],
    ['disk', 2],
    // Malformed: the qualified-name problems, plus "not a quota resource" since it is unprefixed.
    ['', 3],
  ])('%s gives %i error(s)', (name, count) => {
    expect(validateResourceQuotaResourceName(name, 'spec.hard')).toHaveLength(count);
  });
});

describe('validateContainerResourceName', () => {
  it.each([
    ['cpu', []],
    ['ephemeral-storage', []],
    ['hugepages-2Mi', []],
    ['example.com/gpu', []],
    ['kubernetes.io/anything', []],
    ['storage', ['Invalid value: "storage": must be a standard resource for containers']],
    ['requests.cpu', ['Invalid value: "requests.cpu": must be a standard resource for containers']],
    ['requests.example.com/gpu', ['Invalid value: "requests.example.com/gpu": doesn\'t follow extended resource name standard']],
  ])('%s', (name, messages) => {
    expect(validateContainerResourceName(name, 'f').map((e) => e.message)).toEqual(messages);
  });
});

describe('resource name classes (pkg/apis/core/helper)', () => {
  it.each([
    ['pods', true],
    ['services.nodeports', true],
    ['configmaps', true],
    ['cpu', false],
    ['memory', false],
    ['hugepages-2Mi', false],
    ['example.com/gpu', true],
    ['count/pods', true],
    // Quota's own prefixed form is not an extended resource name, so it is not forced whole.
    ['requests.example.com/gpu', false],
    ['kubernetes.io/foo', false],
  ])('isIntegerResourceName(%s) is %s', (name, expected) => {
    expect(isIntegerResourceName(name)).toBe(expected);
  });

  it.each([
    ['cpu', true],
    ['requests.storage', true],
    ['limits.ephemeral-storage', true],
    ['resourcequotas', true],
    ['hugepages-2Mi', true],
    ['requests.hugepages-2Mi', true],
    ['storage', false],
    ['limits.storage', false],
    ['example.com/gpu', false],
  ])('isStandardQuotaResourceName(%s) is %s', (name, expected) => {
    expect(isStandardQuotaResourceName(name)).toBe(expected);
  });

  // TestIsStandardResource, TestIsStandardContainerResource, TestIsOvercommitAllowed.
  it.each([
    ['cpu', true],
    ['memory', true],
    ['disk', false],
    ['blah', false],
    ['x.y.z', false],
    ['hugepages-2Mi', true],
    ['requests.hugepages-2Mi', true],
  ])('isStandardResourceName(%s) is %s', (name, expected) => {
    expect(isStandardResourceName(name)).toBe(expected);
  });

  it.each([
    ['cpu', true],
    ['memory', true],
    ['disk', false],
    ['hugepages-2Mi', true],
  ])('isStandardContainerResourceName(%s) is %s', (name, expected) => {
    expect(isStandardContainerResourceName(name)).toBe(expected);
  });

  it.each([
    ['cpu', true],
    ['memory', true],
    ['hugepages-2Mi', false],
    ['example.com/gpu', false],
  ])('isOvercommitAllowed(%s) is %s', (name, expected) => {
    expect(isOvercommitAllowed(name)).toBe(expected);
  });
});

describe('quota scopes', () => {
  it.each([
    ['Terminating', true],
    ['PriorityClass', true],
    ['CrossNamespacePodAffinity', true],
    ['VolumeAttributesClass', true],
    ['terminating', false],
    ['', false],
  ])('isStandardResourceQuotaScope(%s) is %s', (scope, expected) => {
    expect(isStandardResourceQuotaScope(scope)).toBe(expected);
  });

  it.each([
    ['BestEffort', 'pods', true],
    ['BestEffort', 'cpu', false],
    ['NotBestEffort', 'requests.memory', true],
    ['Terminating', 'limits.cpu', true],
    ['NotTerminating', 'requests.ephemeral-storage', false],
    ['PriorityClass', 'services', false],
    ['CrossNamespacePodAffinity', 'pods', true],
    ['VolumeAttributesClass', 'requests.storage', true],
    ['VolumeAttributesClass', 'persistentvolumeclaims', true],
    ['VolumeAttributesClass', 'pods', false],
    ['SomethingElse', 'services', true],
  ])('scope %s may limit %s: %s', (scope, resource, expected) => {
    expect(isResourceQuotaScopeValidForResource(scope, resource)).toBe(expected);
  });
});

describe('validateResourceQuantityValue', () => {
  it.each([
    ['memory', '1.5', []],
    ['cpu', '0', []],
    ['cpu', '-1m', ['Invalid value: "-1m": must be greater than or equal to 0']],
    ['pods', '2', []],
    ['pods', '1.5', ['Invalid value: "1500m": must be an integer']],
    ['pods', '1n', ['Invalid value: "1n": must be an integer']],
    ['pods', '-2', ['Invalid value: "-2": must be greater than or equal to 0']],
    ['example.com/foo', '1m', ['Invalid value: "1m": must be an integer']],
  ])('%s = %s', (name, value, messages) => {
    expect(validateResourceQuantityValue(name, Quantity.parse(value), 'f').map((e) => e.message)).toEqual(messages);
  });
});
