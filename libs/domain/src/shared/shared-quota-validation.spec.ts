import { describe, expect, it } from 'vitest';
import { type Cause, DNS_SUBDOMAIN_MSG, domainErrorOf, triples } from '../validation/spec-helpers.js';
import { validateClusterResourceQuota, validateHierarchicalResourceQuota } from './shared-quota-validation.js';

const crq = (
  spec: unknown,
  metadata: Record<string, unknown> = { name: 'team-a' },
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'quota.openshift.io/v1',
  kind: 'ClusterResourceQuota',
  metadata,
  spec,
  ...extra,
});

const hrq = (
  spec: unknown,
  metadata: Record<string, unknown> = { name: 'team-quota', namespace: 'team-a' },
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'hnc.x-k8s.io/v1alpha2',
  kind: 'HierarchicalResourceQuota',
  metadata,
  spec,
  ...extra,
});

const RESTRICT = 'must restrict the selected projects';

describe('validateClusterResourceQuota (OpenShift ValidateClusterResourceQuota)', () => {
  it('accepts a quota over the namespaces a label selector picks, prints its quantities canonically, and drops the status', () => {
    const quota = validateClusterResourceQuota(
      crq(
        {
          selector: { labels: { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['scratch'] }] } },
          quota: { hard: { pods: '50', 'requests.cpu': '2000m' } },
        },
        { name: 'team-a' },
        { status: { total: { hard: { pods: '50' }, used: { pods: '3' } }, namespaces: [] } },
      ),
    );
    expect(quota.spec).toEqual({
      selector: { labels: { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['scratch'] }] } },
      quota: { hard: { pods: '50', 'requests.cpu': '2' } },
    });
    expect(quota).not.toHaveProperty('status');
  });

  it('accepts one selecting by annotation only, with scopes', () => {
    expect(() =>
      validateClusterResourceQuota(
        crq({
          selector: { annotations: { 'openshift.io/requester': 'alice' } },
          quota: { hard: { pods: '10' }, scopes: ['NotTerminating'] },
        }),
      ),
    ).not.toThrow();
  });

  it.each<readonly [string, unknown, Record<string, unknown> | undefined, readonly Cause[]]>([
    [
      'no selector',
      { quota: { hard: { pods: '1' } } },
      undefined,
      [['FieldValueRequired', 'spec.selector', `Required value: ${RESTRICT}`]],
    ],
    [
      'a label selector that selects every namespace',
      { selector: { labels: {} }, quota: { hard: { pods: '1' } } },
      undefined,
      [
        ['FieldValueRequired', 'spec.selector', `Required value: ${RESTRICT}`],
        ['FieldValueInvalid', 'spec.selector.labels', `Invalid value: {}: ${RESTRICT}`],
      ],
    ],
    [
      'a bad requirement in the selector',
      { selector: { labels: { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['a'] }] } }, quota: {} },
      undefined,
      [
        [
          'FieldValueForbidden',
          'spec.selector.labels.matchExpressions[0].values',
          "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ],
      ],
    ],
    [
      'a bad resource name in the quota, reported under spec.quota',
      { selector: { labels: { matchLabels: { team: 'a' } } }, quota: { hard: { 'bad name': '1' } } },
      undefined,
      [
        [
          'FieldValueInvalid',
          'spec.quota.hard[bad name]',
          `Invalid value: "bad name": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
        ],
        ['FieldValueInvalid', 'spec.quota.hard[bad name]', 'Invalid value: "bad name": must be a standard resource for quota'],
      ],
    ],
    [
      'conflicting scopes, reported under spec.quota',
      { selector: { labels: { matchLabels: { team: 'a' } } }, quota: { scopes: ['Terminating', 'NotTerminating'] } },
      undefined,
      [['FieldValueInvalid', 'spec.quota.scopes', 'Invalid value: ["Terminating","NotTerminating"]: conflicting scopes']],
    ],
    [
      'a namespace on a cluster-scoped object',
      { selector: { annotations: { a: 'b' } }, quota: {} },
      { name: 'team-a', namespace: 'x' },
      [['FieldValueForbidden', 'metadata.namespace', 'Forbidden: not allowed on this type']],
    ],
    [
      'a name that is not a DNS subdomain',
      { selector: { annotations: { a: 'b' } }, quota: {} },
      { name: 'Team' },
      [['FieldValueInvalid', 'metadata.name', `Invalid value: "Team": ${DNS_SUBDOMAIN_MSG}`]],
    ],
  ])('refuses %s', (_name, spec, metadata, expected) => {
    const error = domainErrorOf(() => validateClusterResourceQuota(crq(spec, metadata)));
    expect(error.code).toBe('ObjectInvalid');
    expect(triples(error.causes ?? [])).toEqual(expected);
  });

  it.each<readonly [string, unknown, string]>([
    [
      'another group',
      { ...crq({ selector: { annotations: { a: 'b' } } }), apiVersion: 'v1' },
      'apiVersion: Unsupported value: "v1": supported values: "quota.openshift.io/v1"',
    ],
    ['an unknown field of the selector', crq({ selector: { namespaces: ['a'] } }), 'unknown field "spec.selector.namespaces"'],
    ['matchLabels that are not strings', crq({ selector: { labels: { matchLabels: { a: 1 } } } }), 'spec.selector.labels.matchLabels'],
    [
      'a quantity that does not parse',
      crq({ selector: { annotations: { a: 'b' } }, quota: { hard: { pods: 'lots' } } }),
      'must be a quantity such as',
    ],
  ])('cannot decode %s', (_name, raw, fragment) => {
    const error = domainErrorOf(() => validateClusterResourceQuota(raw));
    expect(error.code).toBe('ObjectMalformed');
    expect(error.message).toContain('ClusterResourceQuota in version "v1" cannot be handled as a ClusterResourceQuota');
    expect(error.message).toContain(fragment);
  });
});

describe('validateHierarchicalResourceQuota (HNC, hnc.x-k8s.io/v1alpha2)', () => {
  it('accepts a quota for a namespace and its descendants, and drops the status', () => {
    expect(
      validateHierarchicalResourceQuota(
        hrq({ hard: { pods: '50', 'limits.memory': '1024Mi' } }, undefined, { status: { used: { pods: '2' } } }),
      ),
    ).toEqual({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: 'team-quota', namespace: 'team-a' },
      spec: { hard: { pods: '50', 'limits.memory': '1Gi' } },
    });
  });

  it.each<readonly [string, unknown, Record<string, unknown> | undefined, readonly Cause[]]>([
    ['no namespace', { hard: { pods: '1' } }, { name: 'q' }, [['FieldValueRequired', 'metadata.namespace', 'Required value']]],
    [
      'a negative limit',
      { hard: { pods: '-1' } },
      undefined,
      [['FieldValueInvalid', 'spec.hard[pods]', 'Invalid value: "-1": must be greater than or equal to 0']],
    ],
  ])('refuses %s', (_name, spec, metadata, expected) => {
    const error = domainErrorOf(() => validateHierarchicalResourceQuota(hrq(spec, metadata)));
    expect(triples(error.causes ?? [])).toEqual(expected);
  });

  it('knows no scopes (HNC has none)', () => {
    const error = domainErrorOf(() => validateHierarchicalResourceQuota(hrq({ hard: { pods: '1' }, scopes: ['BestEffort'] })));
    expect(error.message).toContain('HierarchicalResourceQuota in version "v1alpha2" cannot be handled as a HierarchicalResourceQuota');
    expect(error.message).toContain('unknown field "spec.scopes"');
  });
});
