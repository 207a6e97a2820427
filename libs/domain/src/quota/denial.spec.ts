import { describe, expect, it } from 'vitest';
import { Quantity } from '../quantity/quantity.js';
import {
  admissionObjectName,
  forbiddenMessage,
  formatScopeRequirements,
  isForbidden,
  renderDenial,
  type ExceededResource,
  type QuotaDenial,
} from './denial.js';

const q = (s: string): Quantity => Quantity.parse(s);
const exceeded = (resource: string, requested: string, used: string | undefined, hard: string): ExceededResource => ({
  resource,
  requested: q(requested),
  used: used === undefined ? undefined : q(used),
  hard: q(hard),
});

describe('renderDenial', () => {
  it.each<[string, QuotaDenial, string]>([
    [
      'an exceeded quota on one resource',
      { kind: 'Exceeded', quota: 'compute', resources: [exceeded('requests.cpu', '500m', '1', '1')] },
      'exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1',
    ],
    [
      'an exceeded quota on several resources, each list sorted by name',
      {
        kind: 'Exceeded',
        quota: 'compute',
        resources: [exceeded('requests.memory', '2Gi', '9Gi', '10Gi'), exceeded('limits.cpu', '2', '3', '4')],
      },
      'exceeded quota: compute, requested: limits.cpu=2,requests.memory=2Gi, used: limits.cpu=3,requests.memory=9Gi, limited: limits.cpu=4,requests.memory=10Gi',
    ],
    [
      'an exceeded quota with no usage entry leaves that resource out of "used"',
      { kind: 'Exceeded', quota: 'q', resources: [exceeded('pods', '1', undefined, '0')] },
      'exceeded quota: q, requested: pods=1, used: , limited: pods=0',
    ],
    [
      "the must-specify rule in the evaluator's words",
      {
        kind: 'MustSpecify',
        quota: 'compute',
        resources: ['requests.cpu', 'limits.memory'],
        detail: 'must specify limits.memory for: web; requests.cpu for: init,web',
      },
      'failed quota: compute: must specify limits.memory for: web; requests.cpu for: init,web',
    ],
    [
      'a quota whose usage is not known',
      { kind: 'StatusUnknown', quota: 'compute', resources: ['requests.memory', 'pods', 'cpu'] },
      'status unknown for quota: compute, resources: cpu,pods,requests.memory',
    ],
    [
      'negative usage',
      { kind: 'NegativeUsage', resources: ['requests.storage'] },
      'quota usage is negative for resource(s): requests.storage',
    ],
    [
      'an update without its old object',
      { kind: 'OldObjectMissing' },
      'unable to get previous usage since prior version of object was not found',
    ],
    [
      'limited resources without a covering quota',
      { kind: 'InsufficientQuotaToConsume', resources: ['requests.cpu', 'cpu'] },
      'insufficient quota to consume: cpu,requests.cpu',
    ],
    [
      'limited scopes without a covering quota, printed as Go prints the requirements',
      {
        kind: 'InsufficientQuotaToMatchScopes',
        scopes: [
          { scopeName: 'BestEffort', operator: 'Exists' },
          { scopeName: 'PriorityClass', operator: 'In', values: ['cluster-services'] },
        ],
      },
      'insufficient quota to match these scopes: [{BestEffort Exists []} {PriorityClass In [cluster-services]}]',
    ],
  ])('renders %s', (_name, denial, text) => {
    expect(renderDenial(denial)).toBe(text);
  });

  // Kubernetes' TestPrettyPrint: the resource list in a message is sorted by name.
  it.each<[Record<string, string>, string]>([
    [{ cpu: '100m' }, 'cpu=100m'],
    [
      {
        pods: '10',
        services: '10',
        replicationcontrollers: '10',
        'services.nodeports': '10',
        'requests.cpu': '100m',
        'requests.memory': '100Mi',
        'limits.cpu': '100m',
        'limits.memory': '100Mi',
      },
      'limits.cpu=100m,limits.memory=100Mi,pods=10,replicationcontrollers=10,requests.cpu=100m,requests.memory=100Mi,services=10,services.nodeports=10',
    ],
  ])('prints the requested list %j as %s', (list, printed) => {
    const resources = Object.entries(list).map(([name, value]) => exceeded(name, value, value, value));
    expect(renderDenial({ kind: 'Exceeded', quota: 'q', resources })).toBe(
      `exceeded quota: q, requested: ${printed}, used: ${printed}, limited: ${printed}`,
    );
  });
});

describe('formatScopeRequirements', () => {
  it('prints an empty list as []', () => {
    expect(formatScopeRequirements([])).toBe('[]');
  });
  it('separates several values with spaces', () => {
    expect(formatScopeRequirements([{ scopeName: 'PriorityClass', operator: 'In', values: ['a', 'b'] }])).toBe(
      '[{PriorityClass In [a b]}]',
    );
  });
});

describe('isForbidden', () => {
  it('treats every refusal as Forbidden except the limited-scopes one, which Kubernetes returns as a bare error', () => {
    expect(isForbidden({ kind: 'OldObjectMissing' })).toBe(true);
    expect(isForbidden({ kind: 'Exceeded', quota: 'q', resources: [] })).toBe(true);
    expect(isForbidden({ kind: 'InsufficientQuotaToConsume', resources: ['cpu'] })).toBe(true);
    expect(isForbidden({ kind: 'InsufficientQuotaToMatchScopes', scopes: [] })).toBe(false);
  });
});

describe('forbiddenMessage', () => {
  const denial: QuotaDenial = { kind: 'NegativeUsage', resources: ['requests.storage'] };

  it('names a core resource and the object', () => {
    expect(forbiddenMessage({ group: '', resource: 'pods' }, 'web', denial)).toBe(
      'pods "web" is forbidden: quota usage is negative for resource(s): requests.storage',
    );
  });
  it('qualifies a resource with its group', () => {
    expect(forbiddenMessage({ group: 'apps', resource: 'deployments' }, 'web', denial)).toMatch(/^deployments\.apps "web" is forbidden: /);
  });
  it('omits an empty name', () => {
    expect(forbiddenMessage({ group: '', resource: 'pods' }, '', denial)).toMatch(/^pods is forbidden: /);
  });
  it('says only "forbidden" without a resource', () => {
    expect(forbiddenMessage({ group: '', resource: '' }, 'x', denial)).toMatch(/^forbidden: quota usage/);
  });
});

describe('admissionObjectName', () => {
  it('prefers the request name, then the object name, then generateName, then Unknown', () => {
    expect(admissionObjectName({ metadata: { name: 'obj' } }, 'req')).toBe('req');
    expect(admissionObjectName({ metadata: { name: 'obj', generateName: 'gen-' } })).toBe('obj');
    expect(admissionObjectName({ metadata: { generateName: 'gen-' } })).toBe('gen-');
    expect(admissionObjectName({})).toBe('Unknown');
    expect(admissionObjectName(undefined)).toBe('Unknown');
  });
});
