import { describe, expect, it } from 'vitest';
import { type Cause, DNS_LABEL_MSG, DNS_SUBDOMAIN_MSG, NAME_PART_MSG, domainErrorOf, triples } from './spec-helpers.js';
import { validateLimitRange } from './limit-range.js';

/** Kubernetes' test helper getResources(cpu, memory, ephemeral-storage, storage): empty means absent. */
function resources(cpu: string, memory: string, ephemeral: string, storage: string): Record<string, string> {
  const list: Record<string, string> = {};
  if (cpu) list['cpu'] = cpu;
  if (memory) list['memory'] = memory;
  if (ephemeral) list['ephemeral-storage'] = ephemeral;
  if (storage) list['storage'] = storage;
  return list;
}

const limitRange = (limits: unknown, metadata: unknown = { name: 'abc', namespace: 'foo' }): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata,
  spec: { limits },
});

describe('validateLimitRange accepts what Kubernetes accepts (TestValidateLimitRange and ...ForLocalStorage, success cases)', () => {
  it.each([
    [
      'all fields valid for Pod, Container and PVC',
      [
        {
          type: 'Pod',
          max: resources('100m', '10000Mi', '', ''),
          min: resources('5m', '100Mi', '', ''),
          maxLimitRequestRatio: resources('10', '', '', ''),
        },
        {
          type: 'Container',
          max: resources('100m', '10000Mi', '', ''),
          min: resources('5m', '100Mi', '', ''),
          default: resources('50m', '500Mi', '', ''),
          defaultRequest: resources('10m', '200Mi', '', ''),
          maxLimitRequestRatio: resources('10', '', '', ''),
        },
        { type: 'PersistentVolumeClaim', max: resources('', '', '', '10Gi'), min: resources('', '', '', '5Gi') },
      ],
    ],
    ['a PVC limit with only a minimum', [{ type: 'PersistentVolumeClaim', min: resources('', '', '', '5Gi') }]],
    ['a PVC limit with only a maximum', [{ type: 'PersistentVolumeClaim', max: resources('', '', '', '10Gi') }]],
    [
      'big numbers',
      [
        {
          type: 'Container',
          max: resources('100m', '10000T', '', ''),
          min: resources('5m', '100Mi', '', ''),
          default: resources('50m', '500Mi', '', ''),
          defaultRequest: resources('10m', '200Mi', '', ''),
          maxLimitRequestRatio: resources('10', '', '', ''),
        },
      ],
    ],
    [
      'a third-party limit type over container resources',
      [
        {
          type: 'thirdparty.com/foo',
          max: resources('100m', '10000T', '', ''),
          min: resources('5m', '100Mi', '', ''),
          default: resources('50m', '500Mi', '', ''),
          defaultRequest: resources('10m', '200Mi', '', ''),
          maxLimitRequestRatio: resources('10', '', '', ''),
        },
      ],
    ],
    [
      'a third-party limit type over storage',
      [
        {
          type: 'thirdparty.com/foo',
          max: resources('', '', '', '10000T'),
          min: resources('', '', '', '100Mi'),
          default: resources('', '', '', '500Mi'),
          defaultRequest: resources('', '', '', '200Mi'),
          maxLimitRequestRatio: resources('', '', '', ''),
        },
      ],
    ],
    [
      'ephemeral storage on Pod and Container',
      [
        {
          type: 'Pod',
          max: resources('', '', '10000Mi', ''),
          min: resources('', '', '100Mi', ''),
          maxLimitRequestRatio: resources('', '', '', ''),
        },
        {
          type: 'Container',
          max: resources('', '', '10000Mi', ''),
          min: resources('', '', '100Mi', ''),
          default: resources('', '', '500Mi', ''),
          defaultRequest: resources('', '', '200Mi', ''),
          maxLimitRequestRatio: resources('', '', '', ''),
        },
      ],
    ],
  ])('accepts %s', (_name, limits) => {
    expect(() => validateLimitRange(limitRange(limits))).not.toThrow();
  });
});

type Row = readonly [string, unknown, readonly Cause[]];

describe('validateLimitRange rejects what Kubernetes rejects (TestValidateLimitRange, error cases)', () => {
  const table: readonly Row[] = [
    [
      'a missing name',
      limitRange([], { name: '', namespace: 'foo' }),
      [['FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required']],
    ],
    [
      'a missing namespace',
      limitRange([], { name: 'abc', namespace: '' }),
      [['FieldValueRequired', 'metadata.namespace', 'Required value']],
    ],
    [
      'a name that is no DNS subdomain',
      limitRange([], { name: '^Invalid', namespace: 'foo' }),
      [['FieldValueInvalid', 'metadata.name', `Invalid value: "^Invalid": ${DNS_SUBDOMAIN_MSG}`]],
    ],
    [
      'a namespace that is no DNS label',
      limitRange([], { name: 'abc', namespace: '^Invalid' }),
      [['FieldValueInvalid', 'metadata.namespace', `Invalid value: "^Invalid": ${DNS_LABEL_MSG}`]],
    ],
    [
      'the same limit type twice',
      limitRange([
        { type: 'Pod', max: resources('100m', '10000m', '', ''), min: resources('0m', '100m', '', '') },
        { type: 'Pod', min: resources('0m', '100m', '', '') },
      ]),
      [['FieldValueDuplicate', 'spec.limits[1].type', 'Duplicate value: "Pod"']],
    ],
    [
      'a default on a Pod limit',
      limitRange([
        {
          type: 'Pod',
          max: resources('100m', '10000m', '', ''),
          min: resources('0m', '100m', '', ''),
          default: resources('10m', '100m', '', ''),
        },
      ]),
      [['FieldValueForbidden', 'spec.limits[0].default', "Forbidden: may not be specified when `type` is 'Pod'"]],
    ],
    [
      'a defaultRequest on a Pod limit',
      limitRange([
        {
          type: 'Pod',
          max: resources('100m', '10000m', '', ''),
          min: resources('0m', '100m', '', ''),
          defaultRequest: resources('10m', '100m', '', ''),
        },
      ]),
      [['FieldValueForbidden', 'spec.limits[0].defaultRequest', "Forbidden: may not be specified when `type` is 'Pod'"]],
    ],
    [
      'min above max',
      limitRange([{ type: 'Pod', max: resources('10m', '', '', ''), min: resources('100m', '', '', '') }]),
      [['FieldValueInvalid', 'spec.limits[0].min[cpu]', 'Invalid value: "100m": min value 100m is greater than max value 10m']],
    ],
    [
      'a default above max (Kubernetes prints max as the bad value)',
      limitRange([
        { type: 'Container', max: resources('1', '', '', ''), min: resources('100m', '', '', ''), default: resources('2000m', '', '', '') },
      ]),
      [['FieldValueInvalid', 'spec.limits[0].default[cpu]', 'Invalid value: "1": default value 2 is greater than max value 1']],
    ],
    [
      'a defaultRequest above max',
      limitRange([
        {
          type: 'Container',
          max: resources('1', '', '', ''),
          min: resources('100m', '', '', ''),
          defaultRequest: resources('2000m', '', '', ''),
        },
      ]),
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[cpu]',
          'Invalid value: "2": default request value 2 is greater than max value 1',
        ],
      ],
    ],
    [
      'a defaultRequest above the default',
      limitRange([
        {
          type: 'Container',
          max: resources('2', '', '', ''),
          min: resources('100m', '', '', ''),
          default: resources('500m', '', '', ''),
          defaultRequest: resources('800m', '', '', ''),
        },
      ]),
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[cpu]',
          'Invalid value: "800m": default request value 800m is greater than default limit value 500m',
        ],
      ],
    ],
    [
      'a maxLimitRequestRatio below 1',
      limitRange([{ type: 'Pod', maxLimitRequestRatio: resources('800m', '', '', '') }]),
      [['FieldValueInvalid', 'spec.limits[0].maxLimitRequestRatio[cpu]', 'Invalid value: "800m": ratio 800m is less than 1']],
    ],
    [
      'a maxLimitRequestRatio above max/min',
      limitRange([
        {
          type: 'Container',
          max: resources('', '2Gi', '', ''),
          min: resources('', '512Mi', '', ''),
          maxLimitRequestRatio: resources('', '10', '', ''),
        },
      ]),
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].maxLimitRequestRatio[memory]',
          'Invalid value: "10": ratio 10 is greater than max/min = 4.000000',
        ],
      ],
    ],
    [
      'a non-standard unprefixed limit type',
      limitRange([
        {
          type: 'foo',
          max: resources('', '', '', '10000T'),
          min: resources('', '', '', '100Mi'),
          default: resources('', '', '', '500Mi'),
          defaultRequest: resources('', '', '', '200Mi'),
          maxLimitRequestRatio: resources('', '', '', ''),
        },
      ]),
      [['FieldValueInvalid', 'spec.limits[0].type', 'Invalid value: "foo": must be a standard limit type or fully qualified']],
    ],
    [
      'a PVC limit with neither min nor max storage (reported under the item path plus `.limits`)',
      limitRange([{ type: 'PersistentVolumeClaim' }]),
      [
        [
          'FieldValueRequired',
          'spec.limits[0].limits',
          'Required value: either minimum or maximum storage value is required, but neither was provided',
        ],
      ],
    ],
    [
      'a PVC min above its max',
      limitRange([{ type: 'PersistentVolumeClaim', min: resources('', '', '', '10Gi'), max: resources('', '', '', '1Gi') }]),
      [['FieldValueInvalid', 'spec.limits[0].min[storage]', 'Invalid value: "10Gi": min value 10Gi is greater than max value 1Gi']],
    ],
  ];

  it.each(table)('rejects %s', (_name, obj, expected) => {
    const error = domainErrorOf(() => validateLimitRange(obj));
    expect(error.code).toBe('ObjectInvalid');
    expect(triples(error.causes)).toEqual(expected);
  });
});

describe('validateLimitRange: ordering, overcommit and resource names', () => {
  const table: readonly Row[] = [
    [
      'min above defaultRequest and default (min is the printed value for default)',
      limitRange([
        {
          type: 'Container',
          min: resources('500m', '', '', ''),
          default: resources('200m', '', '', ''),
          defaultRequest: resources('100m', '', '', ''),
        },
      ]),
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[cpu]',
          'Invalid value: "100m": min value 500m is greater than default request value 100m',
        ],
        ['FieldValueInvalid', 'spec.limits[0].default[cpu]', 'Invalid value: "500m": min value 500m is greater than default value 200m'],
      ],
    ],
    [
      'a hugepages default that differs from its defaultRequest (hugepages cannot be overcommitted)',
      limitRange([{ type: 'Container', default: { 'hugepages-2Mi': '4Mi' }, defaultRequest: { 'hugepages-2Mi': '2Mi' } }]),
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[hugepages-2Mi]',
          'Invalid value: "2Mi": default value 4Mi must equal to defaultRequest value 2Mi in hugepages-2Mi',
        ],
      ],
    ],
    [
      'an extended-resource default that differs from its defaultRequest',
      limitRange([{ type: 'Container', default: { 'example.com/gpu': '2' }, defaultRequest: { 'example.com/gpu': '1' } }]),
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[example.com/gpu]',
          'Invalid value: "1": default value 2 must equal to defaultRequest value 1 in example.com/gpu',
        ],
      ],
    ],
    [
      'storage on a Container limit',
      limitRange([{ type: 'Container', max: { storage: '1Gi' } }]),
      [['FieldValueInvalid', 'spec.limits[0].max[storage]', 'Invalid value: "storage": must be a standard resource for containers']],
    ],
    [
      'an unknown unprefixed resource on a PVC limit',
      limitRange([{ type: 'PersistentVolumeClaim', max: { storage: '1Gi', disk: '1Gi' } }]),
      [['FieldValueInvalid', 'spec.limits[0].max[disk]', 'Invalid value: "disk": must be a standard resource type or fully qualified']],
    ],
    [
      'a kubernetes.io-prefixed resource that is not a container resource',
      limitRange([{ type: 'Container', max: { 'kubernetes.io/foo': '1' } }]),
      [],
    ],
    [
      'an empty limit type (two qualified-name problems)',
      limitRange([{ max: resources('1', '', '', '') }]),
      [
        ['FieldValueInvalid', 'spec.limits[0].type', 'Invalid value: "": name part must be non-empty'],
        ['FieldValueInvalid', 'spec.limits[0].type', `Invalid value: "": ${NAME_PART_MSG}`],
      ],
    ],
    [
      'a ratio above max/min computed in whole units for huge values',
      limitRange([{ type: 'Container', max: { memory: '8E' }, min: { memory: '4E' }, maxLimitRequestRatio: { memory: '3' } }]),
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].maxLimitRequestRatio[memory]',
          'Invalid value: "3": ratio 3 is greater than max/min = 2.000000',
        ],
      ],
    ],
  ];

  it.each(table)('handles %s', (_name, obj, expected) => {
    if (expected.length === 0) {
      expect(() => validateLimitRange(obj)).not.toThrow();
      return;
    }
    expect(triples(domainErrorOf(() => validateLimitRange(obj)).causes)).toEqual(expected);
  });

  it('accepts negative quantities, which Kubernetes does not check on LimitRanges', () => {
    expect(() => validateLimitRange(limitRange([{ type: 'Container', min: { cpu: '-1' }, max: { cpu: '1' } }]))).not.toThrow();
  });

  it('accepts a ratio equal to max/min', () => {
    expect(() =>
      validateLimitRange(limitRange([{ type: 'Container', max: { cpu: '2' }, min: { cpu: '500m' }, maxLimitRequestRatio: { cpu: '4' } }])),
    ).not.toThrow();
  });

  it('prints several errors in brackets', () => {
    const error = domainErrorOf(() => validateLimitRange(limitRange([{ type: 'Pod', default: { cpu: '1' } }, { type: 'Pod' }])));
    expect(error.message).toBe(
      'LimitRange "abc" is invalid: [spec.limits[0].default: Forbidden: may not be specified when `type` is \'Pod\', spec.limits[1].type: Duplicate value: "Pod"]',
    );
  });
});

describe('validateLimitRange: strict decoding of untrusted JSON', () => {
  it.each<Row>([
    [
      'an unknown field in a limit item',
      limitRange([{ type: 'Container', maximum: { cpu: '1' } }]),
      [['FieldValueInvalid', 'spec.limits[0].maximum', 'unknown field "spec.limits[0].maximum"']],
    ],
    [
      'a status, which LimitRange does not have',
      { ...limitRange([]), status: {} },
      [['FieldValueInvalid', 'status', 'unknown field "status"']],
    ],
    [
      'limits that are not a list',
      limitRange({ type: 'Container' }),
      [['FieldValueTypeInvalid', 'spec.limits', 'Invalid value: "object": must be of type array']],
    ],
    [
      'a type that is not a string',
      limitRange([{ type: 3 }]),
      [['FieldValueTypeInvalid', 'spec.limits[0].type', 'Invalid value: "integer": must be of type string']],
    ],
    [
      'an unparsable quantity',
      limitRange([{ type: 'Container', max: { cpu: 'lots' } }]),
      [['FieldValueInvalid', 'spec.limits[0].max[cpu]', `Invalid value: "lots": must be a quantity such as "500m", "2", "1Gi" or "1e3"`]],
    ],
    [
      'another kind',
      { ...limitRange([]), kind: 'ResourceQuota' },
      [['FieldValueNotSupported', 'kind', 'Unsupported value: "ResourceQuota": supported values: "LimitRange"']],
    ],
  ])('refuses %s', (_name, obj, expected) => {
    expect(triples(domainErrorOf(() => validateLimitRange(obj)).causes)).toEqual(expected);
  });

  it('words the failure like the API server', () => {
    const error = domainErrorOf(() => validateLimitRange(limitRange([{ type: 'Container', maximum: {} }])));
    expect(error.message).toBe(
      'LimitRange in version "v1" cannot be handled as a LimitRange: strict decoding error: unknown field "spec.limits[0].maximum"',
    );
  });
});

describe('validateLimitRange returns the typed object', () => {
  it('prints quantities as Kubernetes stores them and keeps only the lists that were given', () => {
    const result = validateLimitRange(
      limitRange([
        { type: 'Container', max: { cpu: '2000m', memory: '1.5Gi' }, default: { cpu: 1 }, defaultRequest: { cpu: '0.5' } },
        { type: 'PersistentVolumeClaim', min: { storage: '1Gi' } },
      ]),
    );
    expect(result).toEqual({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'abc', namespace: 'foo' },
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2', memory: '1536Mi' }, default: { cpu: '1' }, defaultRequest: { cpu: '500m' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' } },
        ],
      },
    });
  });
});
