import { describe, expect, it } from 'vitest';
import { type Cause, DNS_LABEL_MSG, DNS_SUBDOMAIN_MSG, domainErrorOf, triples } from './spec-helpers.js';
import { validateResourceQuota } from './resource-quota.js';

const META = { name: 'abc', namespace: 'foo' };
const quota = (spec: unknown, metadata: unknown = META): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata,
  spec,
});

/** The full spec of Kubernetes' TestValidateResourceQuota (object counts, compute, DRA names). */
const FULL_HARD = {
  cpu: '100',
  memory: '10000',
  'requests.cpu': '100',
  'requests.memory': '10000',
  'limits.cpu': '100',
  'limits.memory': '10000',
  pods: '10',
  services: '0',
  replicationcontrollers: '10',
  resourcequotas: '10',
  configmaps: '10',
  secrets: '10',
  // Unknown to quota unless DRA is on, but well-formed names, so valid.
  'count/resourceclaims.resource.k8s.io': '1',
  'gold.deviceclass.resource.k8s.io/devices': '1',
};

const EXISTS_ONLY =
  "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity";

describe('validateResourceQuota accepts what Kubernetes accepts (TestValidateResourceQuota, success cases)', () => {
  it.each([
    ['a quota with no scope over every standard kind of resource', { hard: FULL_HARD }],
    ['a fractional compute quantity', { hard: { cpu: '100m' } }],
    ['a Terminating quota on cpu and limits.cpu', { hard: { cpu: '100', 'limits.cpu': '200' }, scopes: ['Terminating'] }],
    ['a NotTerminating quota on cpu', { hard: { cpu: '100' }, scopes: ['NotTerminating'] }],
    ['a BestEffort quota on pods', { hard: { pods: '100' }, scopes: ['BestEffort'] }],
    ['a CrossNamespacePodAffinity quota on cpu', { hard: { cpu: '100', 'limits.cpu': '200' }, scopes: ['CrossNamespacePodAffinity'] }],
    [
      'a PriorityClass scope selector with In',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['cluster-services'] }] } },
    ],
    ['a NotBestEffort quota on cpu', { hard: { cpu: '100' }, scopes: ['NotBestEffort'] }],
  ])('accepts %s', (_name, spec) => {
    expect(() => validateResourceQuota(quota(spec))).not.toThrow();
  });
});

describe('validateResourceQuota rejects what Kubernetes rejects (TestValidateResourceQuota, error cases)', () => {
  const table: readonly (readonly [string, unknown, readonly Cause[]])[] = [
    [
      'a missing name',
      quota({ hard: FULL_HARD }, { name: '', namespace: 'foo' }),
      [['FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required']],
    ],
    [
      'a missing namespace',
      quota({ hard: FULL_HARD }, { name: 'abc', namespace: '' }),
      [['FieldValueRequired', 'metadata.namespace', 'Required value']],
    ],
    [
      'a name that is no DNS subdomain',
      quota({ hard: FULL_HARD }, { name: '^Invalid', namespace: 'foo' }),
      [['FieldValueInvalid', 'metadata.name', `Invalid value: "^Invalid": ${DNS_SUBDOMAIN_MSG}`]],
    ],
    [
      'a namespace that is no DNS label',
      quota({ hard: FULL_HARD }, { name: 'abc', namespace: '^Invalid' }),
      [['FieldValueInvalid', 'metadata.namespace', `Invalid value: "^Invalid": ${DNS_LABEL_MSG}`]],
    ],
    [
      'negative hard limits',
      quota({
        hard: {
          cpu: '-100',
          memory: '-10000',
          pods: '-10',
          services: '-10',
          replicationcontrollers: '-10',
          resourcequotas: '-10',
          configmaps: '-10',
          secrets: '-10',
        },
      }),
      [
        ['FieldValueInvalid', 'spec.hard[cpu]', 'Invalid value: "-100": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[memory]', 'Invalid value: "-10k": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[pods]', 'Invalid value: "-10": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[services]', 'Invalid value: "-10": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[replicationcontrollers]', 'Invalid value: "-10": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[resourcequotas]', 'Invalid value: "-10": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[configmaps]', 'Invalid value: "-10": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[secrets]', 'Invalid value: "-10": must be greater than or equal to 0'],
      ],
    ],
    [
      'fractional object counts',
      quota({ hard: { pods: '.1', services: '.5', replicationcontrollers: '1.25', resourcequotas: '2.5' } }),
      [
        ['FieldValueInvalid', 'spec.hard[pods]', 'Invalid value: "100m": must be an integer'],
        ['FieldValueInvalid', 'spec.hard[services]', 'Invalid value: "500m": must be an integer'],
        ['FieldValueInvalid', 'spec.hard[replicationcontrollers]', 'Invalid value: "1250m": must be an integer'],
        ['FieldValueInvalid', 'spec.hard[resourcequotas]', 'Invalid value: "2500m": must be an integer'],
      ],
    ],
    [
      'storage, which quota does not track',
      quota({ hard: { storage: '10' } }),
      [['FieldValueInvalid', 'spec.hard[storage]', 'Invalid value: "storage": must be a standard resource for quota']],
    ],
    [
      'Terminating together with NotTerminating',
      quota({ hard: { cpu: '100' }, scopes: ['Terminating', 'NotTerminating'] }),
      [['FieldValueInvalid', 'spec.scopes', 'Invalid value: ["Terminating","NotTerminating"]: conflicting scopes']],
    ],
    [
      'BestEffort together with NotBestEffort',
      quota({ hard: { pods: '100' }, scopes: ['BestEffort', 'NotBestEffort'] }),
      [['FieldValueInvalid', 'spec.scopes', 'Invalid value: ["BestEffort","NotBestEffort"]: conflicting scopes']],
    ],
    [
      'an unknown scope',
      quota({ hard: { cpu: '100' }, scopes: ['foo'] }),
      [['FieldValueInvalid', 'spec.scopes', 'Invalid value: ["foo"]: unsupported scope']],
    ],
    [
      'CrossNamespacePodAffinity selected with In',
      quota({
        scopeSelector: { matchExpressions: [{ scopeName: 'CrossNamespacePodAffinity', operator: 'In', values: ['cluster-services'] }] },
      }),
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.operator', `Invalid value: "In": ${EXISTS_ONLY}`]],
    ],
  ];

  it.each(table)('rejects %s', (_name, obj, expected) => {
    const error = domainErrorOf(() => validateResourceQuota(obj));
    expect(error.code).toBe('ObjectInvalid');
    expect(triples(error.causes)).toEqual(expected);
  });
});

describe('validateResourceQuota: scopes and scope selectors', () => {
  const table: readonly (readonly [string, unknown, readonly Cause[]])[] = [
    [
      'a BestEffort quota on cpu (BestEffort pods request nothing)',
      { hard: { cpu: '1' }, scopes: ['BestEffort'] },
      [['FieldValueInvalid', 'spec.scopes', 'Invalid value: ["BestEffort"]: unsupported scope applied to resource']],
    ],
    [
      'a Terminating quota on services (not a pod resource)',
      { hard: { services: '1', pods: '1' }, scopes: ['Terminating'] },
      [['FieldValueInvalid', 'spec.scopes', 'Invalid value: ["Terminating"]: unsupported scope applied to resource']],
    ],
    [
      'an unknown scope name in a selector',
      { scopeSelector: { matchExpressions: [{ scopeName: 'Foo', operator: 'Exists' }] } },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.scopeName', 'Invalid value: "Foo": unsupported scope']],
    ],
    [
      'In without values',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In' }] } },
      [
        [
          'FieldValueRequired',
          'spec.scopeSelector.matchExpressions.values',
          "Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
        ],
      ],
    ],
    [
      'Exists with values',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Exists', values: ['a'] }] } },
      [
        [
          'FieldValueInvalid',
          'spec.scopeSelector.matchExpressions.values',
          `Invalid value: ["a"]: must be no value when \`operator\` is 'Exist' or 'DoesNotExist' for scope selector`,
        ],
      ],
    ],
    [
      'an unknown operator',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Equals', values: ['a'] }] } },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.operator', 'Invalid value: "Equals": not a valid selector operator']],
    ],
    [
      'a yes/no scope selected with NotIn and no values',
      { scopeSelector: { matchExpressions: [{ scopeName: 'BestEffort', operator: 'NotIn' }] } },
      [
        ['FieldValueInvalid', 'spec.scopeSelector.matchExpressions.operator', `Invalid value: "NotIn": ${EXISTS_ONLY}`],
        [
          'FieldValueRequired',
          'spec.scopeSelector.matchExpressions.values',
          "Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
        ],
      ],
    ],
    [
      'conflicting scopes selected (the scopes list, unset, is the printed value)',
      {
        scopeSelector: {
          matchExpressions: [
            { scopeName: 'Terminating', operator: 'Exists' },
            { scopeName: 'NotTerminating', operator: 'Exists' },
          ],
        },
      },
      [['FieldValueInvalid', 'spec.scopeSelector.matchExpressions', 'Invalid value: null: conflicting scopes']],
    ],
    [
      'a selected scope that does not fit a hard resource (the selector is printed as Kubernetes prints it)',
      { hard: { cpu: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'BestEffort', operator: 'Exists' }] } },
      [
        [
          'FieldValueInvalid',
          'spec.scopeSelector.matchExpressions',
          'Invalid value: {"MatchExpressions":[{"ScopeName":"BestEffort","Operator":"Exists","Values":null}]}: unsupported scope applied to resource',
        ],
      ],
    ],
    [
      'a VolumeAttributesClass selector on cpu',
      {
        hard: { cpu: '1' },
        scopeSelector: { matchExpressions: [{ scopeName: 'VolumeAttributesClass', operator: 'In', values: ['gold'] }] },
      },
      [
        [
          'FieldValueInvalid',
          'spec.scopeSelector.matchExpressions',
          'Invalid value: {"MatchExpressions":[{"ScopeName":"VolumeAttributesClass","Operator":"In","Values":["gold"]}]}: unsupported scope applied to resource',
        ],
      ],
    ],
  ];

  it.each(table)('rejects %s', (_name, spec, expected) => {
    expect(triples(domainErrorOf(() => validateResourceQuota(quota(spec))).causes)).toEqual(expected);
  });

  it.each([
    [
      'a PriorityClass quota on pods and compute',
      { hard: { pods: '5', 'requests.cpu': '2', 'limits.memory': '1Gi' }, scopes: ['PriorityClass'] },
    ],
    [
      'a VolumeAttributesClass selector on PVC count and storage',
      {
        hard: { persistentvolumeclaims: '10', 'requests.storage': '10Gi' },
        scopeSelector: { matchExpressions: [{ scopeName: 'VolumeAttributesClass', operator: 'In', values: ['gold'] }] },
      },
    ],
    [
      'a scoped quota that also limits a non-standard resource (scopes only constrain standard names)',
      { hard: { 'example.com/foo': '1' }, scopes: ['BestEffort'] },
    ],
    ['NotIn with values', { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'NotIn', values: ['low'] }] } }],
    ['DoesNotExist without values', { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'DoesNotExist' }] } }],
    ['an empty scope selector', { scopeSelector: {} }],
  ])('accepts %s', (_name, spec) => {
    expect(() => validateResourceQuota(quota(spec))).not.toThrow();
  });
});

describe('validateResourceQuota: resource names and quantities in spec.hard', () => {
  it.each([
    ['hugepages', { 'hugepages-2Mi': '1Gi', 'requests.hugepages-1Gi': '2Gi' }],
    ['an extended resource with a whole count', { 'requests.example.com/gpu': '4' }],
    ['an object count by group resource', { 'count/deployments.apps': '10' }],
    ['storage by class', { 'gold.storageclass.storage.k8s.io/requests.storage': '500Gi' }],
    ['ephemeral storage', { 'requests.ephemeral-storage': '10Gi', 'limits.ephemeral-storage': '20Gi', 'ephemeral-storage': '10Gi' }],
    ['zero', { pods: '0' }],
  ])('accepts %s', (_name, hard) => {
    expect(() => validateResourceQuota(quota({ hard }))).not.toThrow();
  });

  it.each<readonly [string, Record<string, string>, readonly Cause[]]>([
    [
      'an unknown unprefixed name (neither standard nor quota)',
      { network: '1' },
      [
        ['FieldValueInvalid', 'spec.hard[network]', 'Invalid value: "network": must be a standard resource type or fully qualified'],
        ['FieldValueInvalid', 'spec.hard[network]', 'Invalid value: "network": must be a standard resource for quota'],
      ],
    ],
    [
      'a fractional extended resource (extended resources are counted in whole units)',
      { 'example.com/gpu': '500m' },
      [['FieldValueInvalid', 'spec.hard[example.com/gpu]', 'Invalid value: "500m": must be an integer']],
    ],
    [
      'a negative fractional object count',
      { secrets: '-1.5' },
      [
        ['FieldValueInvalid', 'spec.hard[secrets]', 'Invalid value: "-1500m": must be greater than or equal to 0'],
        ['FieldValueInvalid', 'spec.hard[secrets]', 'Invalid value: "-1500m": must be an integer'],
      ],
    ],
    [
      'a name with two slashes',
      { 'a/b/c': '1' },
      [
        [
          'FieldValueInvalid',
          'spec.hard[a/b/c]',
          "Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ],
      ],
    ],
  ])('rejects %s', (_name, hard, expected) => {
    expect(triples(domainErrorOf(() => validateResourceQuota(quota({ hard }))).causes)).toEqual(expected);
  });

  it('ignores status.hard and status.used, which the API server clears before validating a create', () => {
    const obj = { ...quota({ hard: { pods: '1' } }), status: { hard: { pods: '1' }, used: { pods: '-1', disk: '1' } } };
    expect(validateResourceQuota(obj)).not.toHaveProperty('status');
  });

  it('still refuses a status quantity that cannot be decoded', () => {
    const obj = { ...quota({ hard: { pods: '1' } }), status: { used: { pods: 'many' } } };
    expect(domainErrorOf(() => validateResourceQuota(obj)).code).toBe('ObjectMalformed');
  });
});

describe('validateResourceQuota: the overall message reads like the API server', () => {
  it('prints a single error bare', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({ hard: { storage: '10' } })));
    expect(error.message).toBe(
      'ResourceQuota "abc" is invalid: spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota',
    );
  });

  it('prints several errors in brackets, in order', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({ hard: { pods: '1.5', cpu: '-1' } }, { name: 'q', namespace: '' })));
    expect(error.message).toBe(
      'ResourceQuota "q" is invalid: [metadata.namespace: Required value, spec.hard[pods]: Invalid value: "1500m": must be an integer, spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0]',
    );
  });

  it('prints an error once in the message but keeps every cause, as Kubernetes does', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({ hard: { cpu: '1', memory: '1Gi' }, scopes: ['BestEffort'] })));
    expect(error.message).toBe(
      'ResourceQuota "abc" is invalid: spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource',
    );
    expect(error.causes).toHaveLength(2);
  });
});

describe('validateResourceQuota: strict decoding of untrusted JSON', () => {
  it.each<readonly [string, unknown, readonly Cause[]]>([
    [
      'unknown top-level and spec fields',
      { ...quota({ hard: { pods: '1' }, foo: 1 }), extra: true },
      [
        ['FieldValueInvalid', 'extra', 'unknown field "extra"'],
        ['FieldValueInvalid', 'spec.foo', 'unknown field "spec.foo"'],
      ],
    ],
    [
      'an unknown field in a selector requirement',
      quota({ scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Exists', value: 'x' }] } }),
      [
        [
          'FieldValueInvalid',
          'spec.scopeSelector.matchExpressions[0].value',
          'unknown field "spec.scopeSelector.matchExpressions[0].value"',
        ],
      ],
    ],
    [
      'an unknown metadata field',
      quota({}, { ...META, nmae: 'x' }),
      [['FieldValueInvalid', 'metadata.nmae', 'unknown field "metadata.nmae"']],
    ],
    [
      'fields of the wrong JSON type',
      quota({ hard: ['cpu'], scopes: 'BestEffort' }, { name: 7, namespace: 'foo' }),
      [
        ['FieldValueTypeInvalid', 'metadata.name', 'Invalid value: "integer": must be of type string'],
        ['FieldValueTypeInvalid', 'spec.hard', 'Invalid value: "array": must be of type object'],
        ['FieldValueTypeInvalid', 'spec.scopes', 'Invalid value: "string": must be of type array'],
      ],
    ],
    [
      'unparsable quantities',
      quota({ hard: { cpu: '1 core', memory: true, pods: '10ki' } }),
      [
        ['FieldValueInvalid', 'spec.hard[cpu]', `Invalid value: "1 core": must be a quantity such as "500m", "2", "1Gi" or "1e3"`],
        ['FieldValueInvalid', 'spec.hard[memory]', `Invalid value: "true": must be a quantity such as "500m", "2", "1Gi" or "1e3"`],
        [
          'FieldValueInvalid',
          'spec.hard[pods]',
          `Invalid value: "10ki": must be a quantity such as "500m", "2", "1Gi" or "1e3": the suffix is none of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent (e3)`,
        ],
      ],
    ],
    [
      'another apiVersion and kind',
      { apiVersion: 'apps/v1', kind: 'LimitRange', metadata: META, spec: {} },
      [
        ['FieldValueNotSupported', 'apiVersion', 'Unsupported value: "apps/v1": supported values: "v1"'],
        ['FieldValueNotSupported', 'kind', 'Unsupported value: "LimitRange": supported values: "ResourceQuota"'],
      ],
    ],
    [
      'something that is not an object',
      ['not', 'a', 'quota'],
      [['FieldValueTypeInvalid', '', 'Invalid value: "array": must be of type object']],
    ],
    ['null', null, [['FieldValueTypeInvalid', '', 'Invalid value: "null": must be of type object']]],
  ])('refuses %s before validating', (_name, obj, expected) => {
    const error = domainErrorOf(() => validateResourceQuota(obj));
    expect(error.code).toBe('ObjectMalformed');
    expect(triples(error.causes)).toEqual(expected);
  });

  it('words an unknown-field failure as strict field validation does', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({ hard: {}, foo: 1, bar: 2 })));
    expect(error.message).toBe(
      'ResourceQuota in version "v1" cannot be handled as a ResourceQuota: strict decoding error: unknown field "spec.foo", unknown field "spec.bar"',
    );
  });

  it('does not validate an object that failed to decode (a bad name is not reported alongside)', () => {
    const error = domainErrorOf(() => validateResourceQuota(quota({ hard: { cpu: 'x' } }, { name: 'Bad Name', namespace: 'foo' })));
    expect(error.causes.map((c) => c.field)).toEqual(['spec.hard[cpu]']);
  });
});

describe('validateResourceQuota returns the typed object', () => {
  it('prints quantities as Kubernetes stores them and keeps scopes, selector and metadata', () => {
    const result = validateResourceQuota({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'compute', namespace: 'team-a', labels: { team: 'a' }, resourceVersion: '7' },
      spec: {
        hard: { cpu: '2000m', memory: '1.5Gi', pods: 10, 'requests.cpu': ' 500m ', 'limits.memory': null },
        scopes: ['NotBestEffort'],
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
      },
      status: { used: { cpu: '1' } },
    });
    expect(result).toEqual({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'compute', namespace: 'team-a', labels: { team: 'a' }, resourceVersion: '7' },
      spec: {
        hard: { cpu: '2', memory: '1536Mi', pods: '10', 'requests.cpu': '500m', 'limits.memory': '0' },
        scopes: ['NotBestEffort'],
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
      },
    });
  });

  it('fills in apiVersion and kind when they are absent, and an empty spec', () => {
    expect(validateResourceQuota({ metadata: META })).toEqual({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: META, spec: {} });
  });
});
