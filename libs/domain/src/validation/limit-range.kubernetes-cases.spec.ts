import { describe, expect, it } from 'vitest';
import { type Cause, domainErrorOf, triples } from './spec-helpers.js';
import { validateLimitRange } from './limit-range.js';

/**
 * Cases beyond Kubernetes' own tables, each answered from ValidateLimitRange and its
 * resource-name helpers (pkg/apis/core/validation, master). An empty cause list means
 * Kubernetes accepts the object.
 */

const limitRange = (limits: unknown): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: { name: 'lr', namespace: 'ns' },
  spec: { limits },
});

type Row = readonly [name: string, limits: unknown, causes: readonly Cause[]];

function check(limits: unknown, causes: readonly Cause[]): void {
  if (causes.length === 0) {
    expect(() => validateLimitRange(limitRange(limits))).not.toThrow();
    return;
  }
  const error = domainErrorOf(() => validateLimitRange(limitRange(limits)));
  expect(error.code).toBe('ObjectInvalid');
  expect(triples(error.causes)).toEqual(causes);
}

const FOR_CONTAINERS = (field: string, name: string): Cause => [
  'FieldValueInvalid',
  field,
  `Invalid value: "${name}": must be a standard resource for containers`,
];
const NOT_STANDARD = (field: string, name: string): Cause => [
  'FieldValueInvalid',
  field,
  `Invalid value: "${name}": must be a standard resource type or fully qualified`,
];
const PVC_NEEDS_STORAGE: Cause = [
  'FieldValueRequired',
  'spec.limits[0].limits',
  'Required value: either minimum or maximum storage value is required, but neither was provided',
];

describe('LimitRange resource names per limit type', () => {
  const rows: readonly Row[] = [
    [
      'storage on a Pod limit: Kubernetes rejects (Pod limits name container resources)',
      [{ type: 'Pod', max: { storage: '1Gi' } }],
      [FOR_CONTAINERS('spec.limits[0].max[storage]', 'storage')],
    ],
    [
      'storage on a PVC limit: Kubernetes accepts',
      [{ type: 'PersistentVolumeClaim', max: { storage: '10Gi' }, min: { storage: '1Gi' } }],
      [],
    ],
    [
      'cpu on a PVC limit: Kubernetes accepts (any standard resource name)',
      [{ type: 'PersistentVolumeClaim', max: { storage: '1Gi', cpu: '1' } }],
      [],
    ],
    [
      'requests.storage on a PVC limit: Kubernetes accepts the name',
      [{ type: 'PersistentVolumeClaim', max: { storage: '1Gi', 'requests.storage': '1Gi' } }],
      [],
    ],
    [
      'requests.storage on a Container limit: Kubernetes rejects',
      [{ type: 'Container', max: { 'requests.storage': '1Gi' } }],
      [FOR_CONTAINERS('spec.limits[0].max[requests.storage]', 'requests.storage')],
    ],
    [
      'disk on a Container limit: Kubernetes reports it is neither standard nor a container resource',
      [{ type: 'Container', min: { disk: '1' } }],
      [NOT_STANDARD('spec.limits[0].min[disk]', 'disk'), FOR_CONTAINERS('spec.limits[0].min[disk]', 'disk')],
    ],
    [
      'example.com/gpu on a Container limit: Kubernetes accepts an extended resource',
      [{ type: 'Container', max: { 'example.com/gpu': '2' } }],
      [],
    ],
    [
      'requests.example.com/gpu on a Container limit: Kubernetes rejects the quota-style name',
      [{ type: 'Container', max: { 'requests.example.com/gpu': '2' } }],
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].max[requests.example.com/gpu]',
          'Invalid value: "requests.example.com/gpu": doesn\'t follow extended resource name standard',
        ],
      ],
    ],
    [
      'requests.example.com/gpu on a PVC limit: Kubernetes accepts (only the qualified-name rule applies)',
      [{ type: 'PersistentVolumeClaim', max: { storage: '1Gi', 'requests.example.com/gpu': '2' } }],
      [],
    ],
    ['hugepages-2Mi on a Pod limit: Kubernetes accepts', [{ type: 'Pod', max: { 'hugepages-2Mi': '4Mi' } }], []],
    ['ephemeral-storage on a Container limit: Kubernetes accepts', [{ type: 'Container', default: { 'ephemeral-storage': '1Gi' } }], []],
    [
      'a third-party type over storage and a made-up prefixed resource: Kubernetes accepts',
      [{ type: 'example.com/volume', max: { storage: '1Gi', 'example.com/iops': '100' } }],
      [],
    ],
    [
      'a made-up unprefixed resource on a third-party type: Kubernetes rejects',
      [{ type: 'example.com/volume', max: { iops: '100' } }],
      [NOT_STANDARD('spec.limits[0].max[iops]', 'iops')],
    ],
    [
      'a bad name in maxLimitRequestRatio: Kubernetes validates that list too',
      [{ type: 'Container', maxLimitRequestRatio: { storage: '2' } }],
      [FOR_CONTAINERS('spec.limits[0].maxLimitRequestRatio[storage]', 'storage')],
    ],
  ];
  it.each(rows)('%s', (_name, limits, causes) => check(limits, causes));
});

describe('LimitRange types', () => {
  const rows: readonly Row[] = [
    [
      'type "pod" in lower case: Kubernetes rejects',
      [{ type: 'pod' }],
      [['FieldValueInvalid', 'spec.limits[0].type', 'Invalid value: "pod": must be a standard limit type or fully qualified']],
    ],
    ['type "example.com/Pod": Kubernetes accepts a qualified third-party type', [{ type: 'example.com/Pod', max: { cpu: '1' } }], []],
    [
      'the same third-party type twice: Kubernetes reports the duplicate',
      [{ type: 'example.com/x' }, { type: 'example.com/x' }],
      [['FieldValueDuplicate', 'spec.limits[1].type', 'Duplicate value: "example.com/x"']],
    ],
    [
      'Container three times: Kubernetes reports each repeat',
      [{ type: 'Container' }, { type: 'Container' }, { type: 'Container' }],
      [
        ['FieldValueDuplicate', 'spec.limits[1].type', 'Duplicate value: "Container"'],
        ['FieldValueDuplicate', 'spec.limits[2].type', 'Duplicate value: "Container"'],
      ],
    ],
    [
      'Pod and Container limits side by side: Kubernetes accepts',
      [
        { type: 'Pod', max: { cpu: '2' } },
        { type: 'Container', max: { cpu: '1' } },
      ],
      [],
    ],
    ['no limits at all: Kubernetes accepts', [], []],
  ];
  it.each(rows)('%s', (_name, limits, causes) => check(limits, causes));
});

describe('LimitRange Pod and PVC specifics', () => {
  const rows: readonly Row[] = [
    [
      'an empty default on a Pod limit: Kubernetes accepts (only a non-empty one is forbidden)',
      [{ type: 'Pod', default: {}, defaultRequest: {} }],
      [],
    ],
    [
      'a Pod default with a bad resource name: Kubernetes only forbids the default, it does not read it',
      [{ type: 'Pod', default: { disk: '1' } }],
      [['FieldValueForbidden', 'spec.limits[0].default', "Forbidden: may not be specified when `type` is 'Pod'"]],
    ],
    [
      'a Pod default below its min: Kubernetes forbids the default and compares nothing with it',
      [{ type: 'Pod', min: { cpu: '2' }, default: { cpu: '1' } }],
      [['FieldValueForbidden', 'spec.limits[0].default', "Forbidden: may not be specified when `type` is 'Pod'"]],
    ],
    [
      'a PVC limit with only cpu: Kubernetes requires min or max storage',
      [{ type: 'PersistentVolumeClaim', max: { cpu: '1' } }],
      [PVC_NEEDS_STORAGE],
    ],
    [
      'a PVC limit with storage only in default: Kubernetes still requires min or max storage',
      [{ type: 'PersistentVolumeClaim', default: { storage: '1Gi' } }],
      [PVC_NEEDS_STORAGE],
    ],
    [
      'a PVC limit with min storage "0": Kubernetes accepts (present is enough)',
      [{ type: 'PersistentVolumeClaim', min: { storage: '0' } }],
      [],
    ],
    [
      'a PVC default above its max storage: Kubernetes compares PVC defaults too (printing max)',
      [{ type: 'PersistentVolumeClaim', max: { storage: '1Gi' }, default: { storage: '2Gi' } }],
      [['FieldValueInvalid', 'spec.limits[0].default[storage]', 'Invalid value: "1Gi": default value 2Gi is greater than max value 1Gi']],
    ],
  ];
  it.each(rows)('%s', (_name, limits, causes) => check(limits, causes));
});

describe('LimitRange ordering: min <= defaultRequest <= default <= max, only between members that are present', () => {
  const rows: readonly Row[] = [
    [
      'all four equal: Kubernetes accepts',
      [{ type: 'Container', min: { cpu: '1' }, defaultRequest: { cpu: '1' }, default: { cpu: '1' }, max: { cpu: '1' } }],
      [],
    ],
    [
      'equal values written differently (1 and 1000m): Kubernetes accepts',
      [{ type: 'Container', min: { cpu: '1000m' }, max: { cpu: '1' } }],
      [],
    ],
    [
      'defaultRequest above default, no min or max: Kubernetes rejects',
      [{ type: 'Container', default: { memory: '1Gi' }, defaultRequest: { memory: '2Gi' } }],
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[memory]',
          'Invalid value: "2Gi": default request value 2Gi is greater than default limit value 1Gi',
        ],
      ],
    ],
    [
      'defaultRequest below min, no default: Kubernetes prints the defaultRequest',
      [{ type: 'Container', min: { cpu: '500m' }, defaultRequest: { cpu: '100m' } }],
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[cpu]',
          'Invalid value: "100m": min value 500m is greater than default request value 100m',
        ],
      ],
    ],
    [
      'default below min, no max: Kubernetes prints min as the bad value',
      [{ type: 'Container', min: { cpu: '500m' }, default: { cpu: '100m' } }],
      [['FieldValueInvalid', 'spec.limits[0].default[cpu]', 'Invalid value: "500m": min value 500m is greater than default value 100m']],
    ],
    [
      'default above max with a defaultRequest between: Kubernetes reports only default against max',
      [{ type: 'Container', max: { cpu: '1' }, default: { cpu: '2' }, defaultRequest: { cpu: '500m' } }],
      [['FieldValueInvalid', 'spec.limits[0].default[cpu]', 'Invalid value: "1": default value 2 is greater than max value 1']],
    ],
    [
      'everything inverted: Kubernetes reports every broken pair, in its order',
      [{ type: 'Container', min: { cpu: '4' }, defaultRequest: { cpu: '3' }, default: { cpu: '2' }, max: { cpu: '1' } }],
      [
        ['FieldValueInvalid', 'spec.limits[0].min[cpu]', 'Invalid value: "4": min value 4 is greater than max value 1'],
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[cpu]',
          'Invalid value: "3": min value 4 is greater than default request value 3',
        ],
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[cpu]',
          'Invalid value: "3": default request value 3 is greater than max value 1',
        ],
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[cpu]',
          'Invalid value: "3": default request value 3 is greater than default limit value 2',
        ],
        ['FieldValueInvalid', 'spec.limits[0].default[cpu]', 'Invalid value: "4": min value 4 is greater than default value 2'],
        ['FieldValueInvalid', 'spec.limits[0].default[cpu]', 'Invalid value: "1": default value 2 is greater than max value 1'],
      ],
    ],
    [
      'negative min and max in order: Kubernetes accepts (signs are not checked)',
      [{ type: 'Container', min: { cpu: '-2' }, max: { cpu: '-1' } }],
      [],
    ],
  ];
  it.each(rows)('%s', (_name, limits, causes) => check(limits, causes));
});

describe('LimitRange maxLimitRequestRatio', () => {
  const ratio = (value: string, detail: string): Cause => [
    'FieldValueInvalid',
    'spec.limits[0].maxLimitRequestRatio[cpu]',
    `Invalid value: "${value}": ${detail}`,
  ];
  const rows: readonly Row[] = [
    ['ratio exactly 1: Kubernetes accepts', [{ type: 'Container', maxLimitRequestRatio: { cpu: '1' } }], []],
    [
      'ratio 999m: Kubernetes rejects (below 1)',
      [{ type: 'Container', maxLimitRequestRatio: { cpu: '999m' } }],
      [ratio('999m', 'ratio 999m is less than 1')],
    ],
    [
      'ratio 0: Kubernetes rejects (below 1)',
      [{ type: 'Pod', maxLimitRequestRatio: { cpu: '0' } }],
      [ratio('0', 'ratio 0 is less than 1')],
    ],
    [
      'ratio below 1 on a PVC limit: Kubernetes checks every type',
      [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, maxLimitRequestRatio: { storage: '500m' } }],
      [['FieldValueInvalid', 'spec.limits[0].maxLimitRequestRatio[storage]', 'Invalid value: "500m": ratio 500m is less than 1']],
    ],
    [
      'ratio without min: Kubernetes does not compare it with max',
      [{ type: 'Container', max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '100' } }],
      [],
    ],
    [
      'ratio with min "0": Kubernetes accepts (max/min is infinite)',
      [{ type: 'Container', min: { cpu: '0' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '100' } }],
      [],
    ],
    [
      'ratio with min and max both "0": Kubernetes accepts (max/min is not a number)',
      [{ type: 'Container', min: { cpu: '0' }, max: { cpu: '0' }, maxLimitRequestRatio: { cpu: '5' } }],
      [],
    ],
    [
      'ratio 4 with max 1 and min 300m: Kubernetes prints max/min with six decimals',
      [{ type: 'Container', min: { cpu: '300m' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '4' } }],
      [ratio('4', 'ratio 4 is greater than max/min = 3.333333')],
    ],
    [
      'ratio 1 with min 3 above max 1: Kubernetes reports the order and max/min = 0.333333',
      [{ type: 'Container', min: { cpu: '3' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '1' } }],
      [
        ['FieldValueInvalid', 'spec.limits[0].min[cpu]', 'Invalid value: "3": min value 3 is greater than max value 1'],
        ratio('1', 'ratio 1 is greater than max/min = 0.333333'),
      ],
    ],
    [
      'max/min = 1/128 exactly: Kubernetes rounds the tie to even (0.007812), not up',
      [{ type: 'Container', min: { cpu: '128' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '1' } }],
      [
        ['FieldValueInvalid', 'spec.limits[0].min[cpu]', 'Invalid value: "128": min value 128 is greater than max value 1'],
        ratio('1', 'ratio 1 is greater than max/min = 0.007812'),
      ],
    ],
    [
      'max 0 over a negative min: Kubernetes prints a negative zero',
      [{ type: 'Container', min: { cpu: '-1' }, max: { cpu: '0' }, maxLimitRequestRatio: { cpu: '1' } }],
      [ratio('1', 'ratio 1 is greater than max/min = -0.000000')],
    ],
    [
      'ratio 1500m with max 1 and min 1: Kubernetes compares in milli-units',
      [{ type: 'Container', min: { cpu: '1' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '1500m' } }],
      [ratio('1500m', 'ratio 1500m is greater than max/min = 1.000000')],
    ],
  ];
  it.each(rows)('%s', (_name, limits, causes) => check(limits, causes));
});

describe('LimitRange defaults of resources that cannot be overcommitted', () => {
  const rows: readonly Row[] = [
    [
      'hugepages default equal to defaultRequest: Kubernetes accepts',
      [{ type: 'Container', default: { 'hugepages-2Mi': '4Mi' }, defaultRequest: { 'hugepages-2Mi': '4Mi' } }],
      [],
    ],
    [
      'an extended resource with only a default: Kubernetes accepts (nothing to compare)',
      [{ type: 'Container', default: { 'example.com/gpu': '1' } }],
      [],
    ],
    [
      'a kubernetes.io resource with default above defaultRequest: Kubernetes accepts (native, so overcommit is allowed)',
      [{ type: 'Container', default: { 'kubernetes.io/foo': '2' }, defaultRequest: { 'kubernetes.io/foo': '1' } }],
      [],
    ],
    [
      'an extended resource with defaultRequest above default: Kubernetes reports both the order and the mismatch',
      [{ type: 'Container', default: { 'example.com/gpu': '1' }, defaultRequest: { 'example.com/gpu': '2' } }],
      [
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[example.com/gpu]',
          'Invalid value: "2": default request value 2 is greater than default limit value 1',
        ],
        [
          'FieldValueInvalid',
          'spec.limits[0].defaultRequest[example.com/gpu]',
          'Invalid value: "2": default value 1 must equal to defaultRequest value 2 in example.com/gpu',
        ],
      ],
    ],
    [
      'a fractional extended-resource default: Kubernetes accepts (LimitRange does not check whole units)',
      [{ type: 'Container', default: { 'example.com/gpu': '500m' }, defaultRequest: { 'example.com/gpu': '0.5' } }],
      [],
    ],
  ];
  it.each(rows)('%s', (_name, limits, causes) => check(limits, causes));
});

describe('LimitRange: the overall message', () => {
  it('prints a single error without brackets', () => {
    const error = domainErrorOf(() => validateLimitRange(limitRange([{ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }])));
    expect(error.message).toBe(
      'LimitRange "lr" is invalid: spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1',
    );
  });

  it('prints several in brackets, in validation order', () => {
    const error = domainErrorOf(() =>
      validateLimitRange(limitRange([{ type: 'PersistentVolumeClaim' }, { type: 'PersistentVolumeClaim', max: { storage: '1Gi' } }])),
    );
    expect(error.message).toBe(
      'LimitRange "lr" is invalid: [spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided, spec.limits[1].type: Duplicate value: "PersistentVolumeClaim"]',
    );
  });
});
