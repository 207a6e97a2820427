import { describe, expect, it } from 'vitest';
import { type Cause, domainErrorOf, triples } from './spec-helpers.js';
import { validateResourceQuota } from './resource-quota.js';

/**
 * Cases beyond Kubernetes' own tables, each answered from pkg/apis/core/validation
 * (ValidateResourceQuota and helpers, master) and the create strategy of resourcequotas.
 * An empty cause list means Kubernetes accepts the object.
 */

const META = { name: 'q', namespace: 'ns' };
const quota = (spec: unknown, metadata: unknown = META): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata,
  spec,
});

const NOT_INTEGER = 'must be an integer';
const applied = (scopes: string): string => `Invalid value: ${scopes}: unsupported scope applied to resource`;
const selectorApplied = (selector: string): Cause => [
  'FieldValueInvalid',
  'spec.scopeSelector.matchExpressions',
  `Invalid value: {"MatchExpressions":${selector}}: unsupported scope applied to resource`,
];
const REQUIRED_VALUES: Cause = [
  'FieldValueRequired',
  'spec.scopeSelector.matchExpressions.values',
  "Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
];
const EXISTS_ONLY =
  "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity";

type Row = readonly [name: string, spec: unknown, causes: readonly Cause[]];

function check(spec: unknown, causes: readonly Cause[]): void {
  if (causes.length === 0) {
    expect(() => validateResourceQuota(quota(spec))).not.toThrow();
    return;
  }
  const error = domainErrorOf(() => validateResourceQuota(quota(spec)));
  expect(error.code).toBe('ObjectInvalid');
  expect(triples(error.causes)).toEqual(causes);
}

describe('ResourceQuota hard quantities: whole numbers where Kubernetes counts objects or extended resources', () => {
  const rows: readonly Row[] = [
    [
      'pods "1.5": Kubernetes rejects, printing the canonical 1500m',
      { hard: { pods: '1.5' } },
      [['FieldValueInvalid', 'spec.hard[pods]', `Invalid value: "1500m": ${NOT_INTEGER}`]],
    ],
    [
      'services "500m": Kubernetes rejects',
      { hard: { services: '500m' } },
      [['FieldValueInvalid', 'spec.hard[services]', `Invalid value: "500m": ${NOT_INTEGER}`]],
    ],
    ['pods "1000m": Kubernetes accepts (a whole number written in milli-units)', { hard: { pods: '1000m' } }, []],
    ['pods "0.5Ki": Kubernetes accepts (512 is whole)', { hard: { pods: '0.5Ki' } }, []],
    [
      'pods "1n": Kubernetes rejects (milli-value rounds up to 1m)',
      { hard: { pods: '1n' } },
      [['FieldValueInvalid', 'spec.hard[pods]', `Invalid value: "1n": ${NOT_INTEGER}`]],
    ],
    [
      'pods "1e-3": Kubernetes rejects and keeps the exponent form',
      { hard: { pods: '1e-3' } },
      [['FieldValueInvalid', 'spec.hard[pods]', `Invalid value: "1e-3": ${NOT_INTEGER}`]],
    ],
    [
      'services.loadbalancers "0.5": Kubernetes rejects',
      { hard: { 'services.loadbalancers': '0.5' } },
      [['FieldValueInvalid', 'spec.hard[services.loadbalancers]', `Invalid value: "500m": ${NOT_INTEGER}`]],
    ],
    ['cpu "1.5": Kubernetes accepts (compute is not counted in whole units)', { hard: { cpu: '1.5', memory: '1.5Gi' } }, []],
    [
      'requests.example.com/foo "500m": Kubernetes accepts (the requests. form is not an extended resource name)',
      { hard: { 'requests.example.com/foo': '500m' } },
      [],
    ],
    [
      'limits.example.com/foo "500m": Kubernetes rejects (it is an extended resource name, so whole)',
      { hard: { 'limits.example.com/foo': '500m' } },
      [['FieldValueInvalid', 'spec.hard[limits.example.com/foo]', `Invalid value: "500m": ${NOT_INTEGER}`]],
    ],
    [
      'limits.example.com/foo "2": Kubernetes accepts the name (validation does not forbid it)',
      { hard: { 'limits.example.com/foo': '2' } },
      [],
    ],
    [
      'example.com/foo "1.5": Kubernetes rejects',
      { hard: { 'example.com/foo': '1.5' } },
      [['FieldValueInvalid', 'spec.hard[example.com/foo]', `Invalid value: "1500m": ${NOT_INTEGER}`]],
    ],
    [
      'count/pods "2.5": Kubernetes rejects (count/ names are extended-style, so whole)',
      { hard: { 'count/pods': '2.5' } },
      [['FieldValueInvalid', 'spec.hard[count/pods]', `Invalid value: "2500m": ${NOT_INTEGER}`]],
    ],
    ['kubernetes.io/foo "500m": Kubernetes accepts (a native name is never forced whole)', { hard: { 'kubernetes.io/foo': '500m' } }, []],
    ['requests.hugepages-2Mi "1.5": Kubernetes accepts (hugepages are not counts)', { hard: { 'requests.hugepages-2Mi': '1.5' } }, []],
    [
      'hugepages-2Mi "-1": Kubernetes rejects the sign only',
      { hard: { 'hugepages-2Mi': '-1' } },
      [['FieldValueInvalid', 'spec.hard[hugepages-2Mi]', 'Invalid value: "-1": must be greater than or equal to 0']],
    ],
    [
      'configmaps "-0.5": Kubernetes reports the sign, then the fraction',
      { hard: { configmaps: '-0.5' } },
      [
        ['FieldValueInvalid', 'spec.hard[configmaps]', 'Invalid value: "-500m": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[configmaps]', `Invalid value: "-500m": ${NOT_INTEGER}`],
      ],
    ],
    ['pods "0": Kubernetes accepts zero', { hard: { pods: '0', 'example.com/foo': '0' } }, []],
  ];
  it.each(rows)('%s', (_name, spec, causes) => check(spec, causes));
});

describe('ResourceQuota hard resource names', () => {
  const notStandard = (name: string): Cause => [
    'FieldValueInvalid',
    `spec.hard[${name}]`,
    `Invalid value: "${name}": must be a standard resource type or fully qualified`,
  ];
  const notQuota = (name: string): Cause => [
    'FieldValueInvalid',
    `spec.hard[${name}]`,
    `Invalid value: "${name}": must be a standard resource for quota`,
  ];
  const rows: readonly Row[] = [
    [
      'requests.foo: Kubernetes rejects an unprefixed requests. name that is not standard',
      { hard: { 'requests.foo': '1' } },
      [notStandard('requests.foo'), notQuota('requests.foo')],
    ],
    [
      'limits.storage: Kubernetes rejects (no such quota resource)',
      { hard: { 'limits.storage': '1Gi' } },
      [notStandard('limits.storage'), notQuota('limits.storage')],
    ],
    [
      'limits.hugepages-2Mi: Kubernetes rejects (only requests. and bare hugepages are tracked)',
      { hard: { 'limits.hugepages-2Mi': '1Gi' } },
      [notStandard('limits.hugepages-2Mi'), notQuota('limits.hugepages-2Mi')],
    ],
    ['storage: Kubernetes rejects it for quota only (it is a standard resource)', { hard: { storage: '1Gi' } }, [notQuota('storage')]],
    ['CPU in capitals: Kubernetes rejects (names are case-sensitive)', { hard: { CPU: '1' } }, [notStandard('CPU'), notQuota('CPU')]],
    ['requests.nvidia.com/gpu: Kubernetes accepts', { hard: { 'requests.nvidia.com/gpu': '4' } }, []],
    [
      'hugepages-1Gi and requests.hugepages-1Gi: Kubernetes accepts',
      { hard: { 'hugepages-1Gi': '2Gi', 'requests.hugepages-1Gi': '2Gi' } },
      [],
    ],
    [
      'Example.com/foo: Kubernetes rejects the upper-case prefix and nothing else',
      { hard: { 'Example.com/foo': '1.5' } },
      [
        [
          'FieldValueInvalid',
          'spec.hard[Example.com/foo]',
          "Invalid value: \"Example.com/foo\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ],
      ],
    ],
    [
      'an empty name: Kubernetes reports the empty name part, its format, and that it is no quota resource',
      { hard: { '': '1' } },
      [
        ['FieldValueInvalid', 'spec.hard[]', 'Invalid value: "": name part must be non-empty'],
        [
          'FieldValueInvalid',
          'spec.hard[]',
          "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ],
        notQuota(''),
      ],
    ],
  ];
  it.each(rows)('%s', (_name, spec, causes) => check(spec, causes));
});

describe('ResourceQuota scopes against the resources they limit', () => {
  const rows: readonly Row[] = [
    [
      'BestEffort with requests.cpu: Kubernetes rejects',
      { hard: { 'requests.cpu': '1' }, scopes: ['BestEffort'] },
      [['FieldValueInvalid', 'spec.scopes', applied('["BestEffort"]')]],
    ],
    [
      'BestEffort with hugepages-2Mi: Kubernetes rejects (a standard quota name, not a pod count)',
      { hard: { 'hugepages-2Mi': '1Gi' }, scopes: ['BestEffort'] },
      [['FieldValueInvalid', 'spec.scopes', applied('["BestEffort"]')]],
    ],
    [
      'NotBestEffort with requests.ephemeral-storage: Kubernetes rejects (not a scoped compute resource)',
      { hard: { 'requests.ephemeral-storage': '1Gi' }, scopes: ['NotBestEffort'] },
      [['FieldValueInvalid', 'spec.scopes', applied('["NotBestEffort"]')]],
    ],
    [
      'Terminating with persistentvolumeclaims: Kubernetes rejects',
      { hard: { persistentvolumeclaims: '1' }, scopes: ['Terminating'] },
      [['FieldValueInvalid', 'spec.scopes', applied('["Terminating"]')]],
    ],
    [
      'PriorityClass in scopes with services: Kubernetes rejects',
      { hard: { services: '1' }, scopes: ['PriorityClass'] },
      [['FieldValueInvalid', 'spec.scopes', applied('["PriorityClass"]')]],
    ],
    [
      'VolumeAttributesClass in scopes with requests.storage: Kubernetes accepts',
      { hard: { 'requests.storage': '1Gi', persistentvolumeclaims: '2' }, scopes: ['VolumeAttributesClass'] },
      [],
    ],
    [
      'VolumeAttributesClass in scopes with pods: Kubernetes rejects',
      { hard: { pods: '1' }, scopes: ['VolumeAttributesClass'] },
      [['FieldValueInvalid', 'spec.scopes', applied('["VolumeAttributesClass"]')]],
    ],
    [
      'BestEffort with an extended resource: Kubernetes accepts (only standard names are checked)',
      { hard: { 'requests.example.com/gpu': '1', pods: '2' }, scopes: ['BestEffort'] },
      [],
    ],
    ['BestEffort twice over pods: Kubernetes accepts duplicate scopes', { hard: { pods: '1' }, scopes: ['BestEffort', 'BestEffort'] }, []],
    [
      'BestEffort twice over cpu: Kubernetes reports once per listed scope',
      { hard: { cpu: '1' }, scopes: ['BestEffort', 'BestEffort'] },
      [
        ['FieldValueInvalid', 'spec.scopes', applied('["BestEffort","BestEffort"]')],
        ['FieldValueInvalid', 'spec.scopes', applied('["BestEffort","BestEffort"]')],
      ],
    ],
    [
      'BestEffort over cpu and memory: Kubernetes reports once per resource',
      { hard: { memory: '1Gi', cpu: '1', pods: '3' }, scopes: ['BestEffort'] },
      [
        ['FieldValueInvalid', 'spec.scopes', applied('["BestEffort"]')],
        ['FieldValueInvalid', 'spec.scopes', applied('["BestEffort"]')],
      ],
    ],
    [
      'all four yes/no scopes together: Kubernetes reports both conflicting pairs',
      { hard: { pods: '1' }, scopes: ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort'] },
      [
        [
          'FieldValueInvalid',
          'spec.scopes',
          'Invalid value: ["Terminating","NotTerminating","BestEffort","NotBestEffort"]: conflicting scopes',
        ],
        [
          'FieldValueInvalid',
          'spec.scopes',
          'Invalid value: ["Terminating","NotTerminating","BestEffort","NotBestEffort"]: conflicting scopes',
        ],
      ],
    ],
    [
      'an unknown scope next to a conflicting pair: Kubernetes reports both',
      { scopes: ['Foo', 'NotBestEffort', 'BestEffort'] },
      [
        ['FieldValueInvalid', 'spec.scopes', 'Invalid value: ["Foo","NotBestEffort","BestEffort"]: unsupported scope'],
        ['FieldValueInvalid', 'spec.scopes', 'Invalid value: ["Foo","NotBestEffort","BestEffort"]: conflicting scopes'],
      ],
    ],
    ['an empty scopes list over services: Kubernetes accepts', { hard: { services: '1' }, scopes: [] }, []],
    [
      'a lower-case scope: Kubernetes rejects it as unknown',
      { scopes: ['besteffort'] },
      [['FieldValueInvalid', 'spec.scopes', 'Invalid value: ["besteffort"]: unsupported scope']],
    ],
    [
      'BestEffort in scopes and NotBestEffort in the selector: Kubernetes accepts (the two lists are not checked against each other)',
      {
        hard: { pods: '1' },
        scopes: ['BestEffort'],
        scopeSelector: { matchExpressions: [{ scopeName: 'NotBestEffort', operator: 'Exists' }] },
      },
      [],
    ],
  ];
  it.each(rows)('%s', (_name, spec, causes) => check(spec, causes));
});

describe('ResourceQuota scope selectors', () => {
  const rows: readonly Row[] = [
    [
      'PriorityClass In with an empty values list: Kubernetes requires values',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [] }] } },
      [REQUIRED_VALUES],
    ],
    [
      'PriorityClass NotIn without values: Kubernetes requires values',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'NotIn' }] } },
      [REQUIRED_VALUES],
    ],
    [
      'PriorityClass Exists with an empty values list: Kubernetes accepts',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Exists', values: [] }] } },
      [],
    ],
    [
      'PriorityClass DoesNotExist with values: Kubernetes rejects them',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'DoesNotExist', values: ['a', 'b'] }] } },
      [
        [
          'FieldValueInvalid',
          'spec.scopeSelector.matchExpressions.values',
          `Invalid value: ["a","b"]: must be no value when \`operator\` is 'Exist' or 'DoesNotExist' for scope selector`,
        ],
      ],
    ],
    [
      'PriorityClass with an empty operator: Kubernetes rejects it',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', values: ['a'] }] } },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.operator', 'Invalid value: "": not a valid selector operator']],
    ],
    [
      'PriorityClass with operator "in": Kubernetes rejects (operators are case-sensitive)',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'in', values: ['a'] }] } },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.operator', 'Invalid value: "in": not a valid selector operator']],
    ],
    [
      'BestEffort DoesNotExist: Kubernetes rejects (only Exists)',
      { scopeSelector: { matchExpressions: [{ scopeName: 'BestEffort', operator: 'DoesNotExist' }] } },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.operator', `Invalid value: "DoesNotExist": ${EXISTS_ONLY}`]],
    ],
    [
      'Terminating with an unknown operator: Kubernetes reports both the Exists rule and the operator',
      { scopeSelector: { matchExpressions: [{ scopeName: 'Terminating', operator: 'Foo' }] } },
      [
        ['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.operator', `Invalid value: "Foo": ${EXISTS_ONLY}`],
        ['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.operator', 'Invalid value: "Foo": not a valid selector operator'],
      ],
    ],
    [
      'an unknown scope with In and no values: Kubernetes reports the scope, then the values',
      { scopeSelector: { matchExpressions: [{ scopeName: 'Foo', operator: 'In' }] } },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.scopeName', 'Invalid value: "Foo": unsupported scope'], REQUIRED_VALUES],
    ],
    [
      'an empty scope name: Kubernetes rejects it',
      { scopeSelector: { matchExpressions: [{ operator: 'Exists' }] } },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.scopeName', 'Invalid value: "": unsupported scope']],
    ],
    [
      'CrossNamespacePodAffinity Exists over pods and cpu: Kubernetes accepts',
      {
        hard: { pods: '1', cpu: '1' },
        scopeSelector: { matchExpressions: [{ scopeName: 'CrossNamespacePodAffinity', operator: 'Exists' }] },
      },
      [],
    ],
    [
      'PriorityClass In over services: Kubernetes rejects, printing the whole selector',
      { hard: { services: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } },
      [selectorApplied('[{"ScopeName":"PriorityClass","Operator":"In","Values":["high"]}]')],
    ],
    [
      'two requirements that each do not fit cpu: Kubernetes reports once per requirement',
      {
        hard: { cpu: '1' },
        scopeSelector: {
          matchExpressions: [
            { scopeName: 'BestEffort', operator: 'Exists' },
            { scopeName: 'VolumeAttributesClass', operator: 'In', values: ['v'] },
          ],
        },
      },
      [
        selectorApplied(
          '[{"ScopeName":"BestEffort","Operator":"Exists","Values":null},{"ScopeName":"VolumeAttributesClass","Operator":"In","Values":["v"]}]',
        ),
        selectorApplied(
          '[{"ScopeName":"BestEffort","Operator":"Exists","Values":null},{"ScopeName":"VolumeAttributesClass","Operator":"In","Values":["v"]}]',
        ),
      ],
    ],
    [
      'BestEffort and NotBestEffort selected with an empty scopes list: Kubernetes prints that empty list',
      {
        scopes: [],
        scopeSelector: {
          matchExpressions: [
            { scopeName: 'BestEffort', operator: 'Exists' },
            { scopeName: 'NotBestEffort', operator: 'Exists' },
          ],
        },
      },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions', 'Invalid value: []: conflicting scopes']],
    ],
    [
      'Terminating and NotTerminating selected beside scopes [BestEffort]: Kubernetes prints the scopes list',
      {
        hard: { pods: '1' },
        scopes: ['BestEffort'],
        scopeSelector: {
          matchExpressions: [
            { scopeName: 'Terminating', operator: 'Exists' },
            { scopeName: 'NotTerminating', operator: 'Exists' },
          ],
        },
      },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions', 'Invalid value: ["BestEffort"]: conflicting scopes']],
    ],
    [
      'the same requirement twice: Kubernetes accepts',
      {
        scopeSelector: {
          matchExpressions: [
            { scopeName: 'BestEffort', operator: 'Exists' },
            { scopeName: 'BestEffort', operator: 'Exists' },
          ],
        },
      },
      [],
    ],
    ['an empty matchExpressions list: Kubernetes accepts', { hard: { services: '1' }, scopeSelector: { matchExpressions: [] } }, []],
  ];
  it.each(rows)('%s', (_name, spec, causes) => check(spec, causes));
});

describe('ResourceQuota create: what the API server does around validation', () => {
  it('ignores a status the client sent: Kubernetes clears it before validating a create', () => {
    const obj = { ...quota({ hard: { pods: '1' } }), status: { hard: { pods: '1.5' }, used: { cpu: '-1', disk: '1' } } };
    const result = validateResourceQuota(obj);
    expect(result.status).toBeUndefined();
  });

  it('accepts a generateName without a name: Kubernetes generates the name before validating', () => {
    expect(() => validateResourceQuota(quota({}, { generateName: 'quota-', namespace: 'ns' }))).not.toThrow();
  });

  it('reports only the generateName when it is malformed and no name is given', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({}, { generateName: 'Quota-', namespace: 'ns' })));
    expect(error.causes.map((c) => c.field)).toEqual(['metadata.generateName']);
  });
});

describe('ResourceQuota: the overall message, as NewInvalid aggregates it', () => {
  it('prints one error without brackets', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({ hard: { pods: '1.5' } })));
    expect(error.message).toBe('ResourceQuota "q" is invalid: spec.hard[pods]: Invalid value: "1500m": must be an integer');
  });

  it('prints identical errors once and without brackets, yet keeps every cause', () => {
    const error = domainErrorOf(() =>
      validateResourceQuota(quota({ hard: { pods: '1' }, scopes: ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort'] })),
    );
    expect(error.message).toBe(
      'ResourceQuota "q" is invalid: spec.scopes: Invalid value: ["Terminating","NotTerminating","BestEffort","NotBestEffort"]: conflicting scopes',
    );
    expect(error.causes).toHaveLength(2);
  });

  it('prints distinct errors in brackets, separated by commas, in validation order', () => {
    const error = domainErrorOf(() =>
      validateResourceQuota(quota({ hard: { services: '0.5', cpu: '1' }, scopes: ['BestEffort'] }, { name: 'q', namespace: 'Bad' })),
    );
    expect(error.message).toBe(
      'ResourceQuota "q" is invalid: [metadata.namespace: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\', or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\'), spec.hard[services]: Invalid value: "500m": must be an integer, spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource]',
    );
  });

  it('quotes the name as Go does', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({}, { name: 'a"b', namespace: 'ns' })));
    expect(error.message.startsWith('ResourceQuota "a\\"b" is invalid: metadata.name: Invalid value: "a\\"b": ')).toBe(true);
  });

  it('answers an unparsable quantity with the parse error alone, as the decoder stops there', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({ hard: { cpu: 'lots', pods: '1.5.1' }, bogus: true })));
    expect(error.code).toBe('ObjectMalformed');
    // Kubernetes prints its regular expression alone; ours names the field, the value and what a quantity looks like.
    expect(error.message).toBe(
      'ResourceQuota in version "v1" cannot be handled as a ResourceQuota: spec.hard[cpu]: Invalid value: "lots": must be a quantity such as "500m", "2", "1Gi" or "1e3"',
    );
  });

  it('trims the white space Go trims around a quantity (but not a byte-order mark)', () => {
    expect(validateResourceQuota(quota({ hard: { cpu: '\u0085 2 \t' } })).spec?.hard).toEqual({ cpu: '2' });
    expect(domainErrorOf(() => validateResourceQuota(quota({ hard: { cpu: '\ufeff2' } }))).code).toBe('ObjectMalformed');
  });
});
