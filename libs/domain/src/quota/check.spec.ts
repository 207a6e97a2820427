import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import type { KubeObject, Operation, ResourceQuotaSpec } from '../kube/types.js';
import { formatResourceList, resourceList, type ResourceList } from '../resources/resource-list.js';
import type { UsageEvaluator } from '../usage/evaluator.js';
import { decideQuota, type LimitedResource, type QuotaCheckInput, type QuotaDecision, type QuotaSnapshot } from './check.js';
import { renderDenial } from './denial.js';

/**
 * A stand-in evaluator for "widgets", so the decision logic is tested on its own. A widget
 * states its usage (`usage`), the scopes it is in (`inScopes`) and the resources it fails
 * to specify (`omits`); the evaluator charges WIDGET_RESOURCES.
 */
const WIDGET_RESOURCES = ['widgets', 'count/widgets', 'requests.cpu', 'requests.memory', 'requests.storage', 'gadgets'];

interface WidgetSpec {
  readonly usage?: Record<string, string>;
  readonly inScopes?: readonly string[];
  readonly omits?: readonly string[];
  readonly resourceVersion?: string;
  readonly namespace?: string;
}

const widget = (spec: WidgetSpec = {}): KubeObject => ({
  metadata: {
    name: 'w',
    ...(spec.namespace === undefined ? {} : { namespace: spec.namespace }),
    ...(spec.resourceVersion === undefined ? {} : { resourceVersion: spec.resourceVersion }),
  },
  usage: spec.usage ?? {},
  inScopes: spec.inScopes ?? [],
  omits: spec.omits ?? [],
});

const calls: string[] = [];
const fakeEvaluator: UsageEvaluator = {
  groupResource: { group: '', resource: 'widgets' },
  handles: (operation, subresource) =>
    (operation === 'CREATE' || operation === 'UPDATE') && (subresource === undefined || subresource === 'status'),
  matchingResources: (input) => input.filter((name) => WIDGET_RESOURCES.includes(name)),
  scopeFacts: (object) => Object.fromEntries((object.inScopes as string[]).map((scope) => [scope, true])),
  matchingScopes: (object, scopes) => scopes.filter((s) => (object.inScopes as string[]).includes(s.scopeName)),
  uncoveredQuotaScopes: (limited, matched) => limited.filter((l) => !matched.some((m) => m.scopeName === l.scopeName)),
  constraints: (required, object) => required.filter((name) => (object.omits as string[]).includes(name)),
  usage: (object) => {
    calls.push(`usage:${object.metadata?.namespace ?? ''}`);
    return resourceList(object.usage as Record<string, string>);
  },
};

const quota = (
  name: string,
  hard: Record<string, string>,
  used: Record<string, string>,
  spec: Omit<ResourceQuotaSpec, 'hard'> = {},
): QuotaSnapshot => ({
  name,
  spec: { ...spec, hard },
  used: resourceList(used),
});

const request = (
  operation: Operation,
  object: KubeObject,
  quotas: QuotaSnapshot[],
  extra: Partial<Omit<QuotaCheckInput, 'operation' | 'object' | 'quotas'>> = {},
): QuotaCheckInput => ({ operation, groupResource: { group: '', resource: 'widgets' }, object, quotas, ...extra });

const plain = (list: ResourceList): Record<string, string> => formatResourceList(list);

/** The decision as data: the message when denied, or each charged quota's new usage. */
const outcome = (decision: QuotaDecision): { denied: string } | { used: Record<string, Record<string, string>> } =>
  decision.allowed
    ? { used: Object.fromEntries(decision.charges.map((c) => [c.quota, plain(c.used)])) }
    : { denied: renderDenial(decision.denial) };

describe('decideQuota: which requests are charged at all', () => {
  it('allows a DELETE without consulting the evaluator or charging anything', () => {
    const decision = decideQuota(request('DELETE', widget(), [quota('q', { widgets: '0' }, { widgets: '5' })]), undefined);
    expect(decision).toEqual({ allowed: true, charges: [] });
  });

  it('allows a kind that has no evaluator', () => {
    expect(
      decideQuota(request('CREATE', widget({ usage: { widgets: '1' } }), [quota('q', { widgets: '0' }, { widgets: '0' })]), undefined),
    ).toEqual({
      allowed: true,
      charges: [],
    });
  });

  it('allows an operation the evaluator does not handle', () => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { widgets: '1' } }), [quota('q', { widgets: '0' }, { widgets: '0' })], { subresource: 'scale' }),
      fakeEvaluator,
    );
    expect(decision).toEqual({ allowed: true, charges: [] });
  });

  it('allows anything in a namespace without quotas', () => {
    expect(outcome(decideQuota(request('CREATE', widget({ usage: { widgets: '100' } }), []), fakeEvaluator))).toEqual({ used: {} });
  });
});

describe('decideQuota: CREATE against hard limits', () => {
  it.each<[string, QuotaSnapshot[], WidgetSpec, ReturnType<typeof outcome>]>([
    [
      'charges a quota the full usage of the new object',
      [quota('q', { widgets: '10', 'requests.cpu': '4' }, { widgets: '1', 'requests.cpu': '1' })],
      { usage: { widgets: '1', 'requests.cpu': '500m' } },
      { used: { q: { widgets: '2', 'requests.cpu': '1500m' } } },
    ],
    [
      'charges only the resources the quota limits',
      [quota('q', { widgets: '10' }, { widgets: '1' })],
      { usage: { widgets: '1', 'requests.cpu': '500m', gadgets: '3' } },
      { used: { q: { widgets: '2' } } },
    ],
    [
      'allows reaching the limit exactly',
      [quota('q', { 'requests.memory': '2Gi' }, { 'requests.memory': '1Gi' })],
      { usage: { 'requests.memory': '1Gi' } },
      { used: { q: { 'requests.memory': '2Gi' } } },
    ],
    [
      'denies going one unit over the limit',
      [quota('q', { 'requests.cpu': '1' }, { 'requests.cpu': '500m' })],
      { usage: { 'requests.cpu': '501m' } },
      { denied: 'exceeded quota: q, requested: requests.cpu=501m, used: requests.cpu=500m, limited: requests.cpu=1' },
    ],
    [
      'reports every exceeded resource of the quota, sorted',
      [quota('q', { widgets: '1', 'requests.cpu': '1', gadgets: '10' }, { widgets: '1', 'requests.cpu': '1', gadgets: '0' })],
      { usage: { widgets: '1', 'requests.cpu': '1', gadgets: '1' } },
      {
        denied: 'exceeded quota: q, requested: requests.cpu=1,widgets=1, used: requests.cpu=1,widgets=1, limited: requests.cpu=1,widgets=1',
      },
    ],
    [
      'charges every applicable quota',
      [quota('b', { 'requests.cpu': '4' }, { 'requests.cpu': '0' }), quota('a', { widgets: '4' }, { widgets: '0' })],
      { usage: { widgets: '1', 'requests.cpu': '1' } },
      { used: { a: { widgets: '1' }, b: { 'requests.cpu': '1' } } },
    ],
    [
      'denies when any applicable quota is exceeded, charging none',
      [quota('roomy', { widgets: '100' }, { widgets: '0' }), quota('tight', { widgets: '1' }, { widgets: '1' })],
      { usage: { widgets: '1' } },
      { denied: 'exceeded quota: tight, requested: widgets=1, used: widgets=1, limited: widgets=1' },
    ],
    [
      'reports the first exceeded quota by name when several are',
      [quota('zeta', { widgets: '1' }, { widgets: '1' }), quota('alpha', { widgets: '1' }, { widgets: '1' })],
      { usage: { widgets: '1' } },
      { denied: 'exceeded quota: alpha, requested: widgets=1, used: widgets=1, limited: widgets=1' },
    ],
    [
      'is not blocked by an unrelated resource that is already over its limit',
      [quota('q', { widgets: '10', gadgets: '3' }, { widgets: '1', gadgets: '4' })],
      { usage: { widgets: '1' } },
      { used: { q: { widgets: '2', gadgets: '4' } } },
    ],
    [
      'after hard was lowered below used, still allows requests that do not add to that resource',
      [quota('q', { widgets: '10', 'requests.cpu': '1' }, { widgets: '1', 'requests.cpu': '3' })],
      { usage: { widgets: '1', 'requests.cpu': '0' } },
      { used: { q: { widgets: '2', 'requests.cpu': '3' } } },
    ],
    [
      'after hard was lowered below used, denies requests that add to that resource',
      [quota('q', { widgets: '10', 'requests.cpu': '1' }, { widgets: '1', 'requests.cpu': '3' })],
      { usage: { widgets: '1', 'requests.cpu': '1m' } },
      { denied: 'exceeded quota: q, requested: requests.cpu=1m, used: requests.cpu=3, limited: requests.cpu=1' },
    ],
    [
      'ignores a quota that limits nothing this kind consumes',
      [quota('other', { pods: '0' }, { pods: '0' })],
      { usage: { widgets: '1' } },
      { used: {} },
    ],
    [
      'ignores a quota whose scopes the object is not in',
      [quota('scoped', { widgets: '0' }, { widgets: '0' }, { scopes: ['Special'] })],
      { usage: { widgets: '1' } },
      { used: {} },
    ],
    [
      'applies a quota whose scopes the object is in',
      [quota('scoped', { widgets: '1' }, { widgets: '0' }, { scopes: ['Special'] })],
      { usage: { widgets: '1' }, inScopes: ['Special'] },
      { used: { scoped: { widgets: '1' } } },
    ],
    [
      'needs every scope of the quota, plain and selector alike',
      [
        quota(
          'scoped',
          { widgets: '0' },
          { widgets: '0' },
          {
            scopes: ['Special'],
            scopeSelector: { matchExpressions: [{ scopeName: 'Other', operator: 'Exists' }] },
          },
        ),
      ],
      { usage: { widgets: '1' }, inScopes: ['Special'] },
      { used: {} },
    ],
    [
      'lets a zero-usage object through a full quota, charging nothing',
      [quota('q', { widgets: '1' }, { widgets: '1' })],
      { usage: { widgets: '0' } },
      { used: {} },
    ],
  ])('%s', (_name, quotas, spec, expected) => {
    expect(outcome(decideQuota(request('CREATE', widget(spec), quotas), fakeEvaluator))).toEqual(expected);
  });

  it('returns the structured denial with quantities', () => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { 'requests.cpu': '2' } }), [quota('q', { 'requests.cpu': '2' }, { 'requests.cpu': '1' })]),
      fakeEvaluator,
    );
    expect(decision.allowed).toBe(false);
    if (decision.allowed) return;
    expect(decision.denial.kind).toBe('Exceeded');
    if (decision.denial.kind !== 'Exceeded') return;
    expect(decision.denial.quota).toBe('q');
    expect(decision.denial.resources.map((r) => [r.resource, `${r.requested}`, `${r.used}`, `${r.hard}`])).toEqual([
      ['requests.cpu', '2', '1', '2'],
    ]);
  });

  it('returns the charge itself beside the new usage', () => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { widgets: '1', gadgets: '0' } }), [
        quota('q', { widgets: '5', gadgets: '5' }, { widgets: '2', gadgets: '1' }),
      ]),
      fakeEvaluator,
    );
    expect(decision.allowed && decision.charges.map((c) => [c.quota, plain(c.delta), plain(c.used)])).toEqual([
      ['q', { widgets: '1' }, { widgets: '3', gadgets: '1' }],
    ]);
  });
});

describe('decideQuota: UPDATE charges only the increase', () => {
  const old = (usage: Record<string, string>, extra: WidgetSpec = {}): KubeObject => widget({ resourceVersion: '7', usage, ...extra });

  it.each<[string, QuotaSnapshot[], KubeObject, KubeObject, ReturnType<typeof outcome>]>([
    [
      'charges the per-key increase',
      [quota('q', { 'requests.storage': '100Gi', widgets: '5' }, { 'requests.storage': '10Gi', widgets: '1' })],
      old({ 'requests.storage': '10Gi', widgets: '1' }),
      widget({ usage: { 'requests.storage': '15Gi', widgets: '1' } }),
      { used: { q: { 'requests.storage': '15Gi', widgets: '1' } } },
    ],
    [
      'does not credit a decrease',
      [quota('q', { 'requests.storage': '100Gi' }, { 'requests.storage': '10Gi' })],
      old({ 'requests.storage': '10Gi' }),
      widget({ usage: { 'requests.storage': '5Gi' } }),
      { used: {} },
    ],
    [
      'charges an increase on one key while another decreases',
      [quota('q', { widgets: '5', gadgets: '5' }, { widgets: '1', gadgets: '1' })],
      old({ widgets: '1', gadgets: '0' }),
      widget({ usage: { widgets: '0', gadgets: '1' } }),
      { used: { q: { widgets: '1', gadgets: '2' } } },
    ],
    [
      'allows an unchanged object even when the quota is over its limit',
      [quota('q', { widgets: '1' }, { widgets: '9' })],
      old({ widgets: '1' }),
      widget({ usage: { widgets: '1' } }),
      { used: {} },
    ],
    [
      'denies an increase past the limit',
      [quota('q', { 'requests.storage': '12Gi' }, { 'requests.storage': '10Gi' })],
      old({ 'requests.storage': '10Gi' }),
      widget({ usage: { 'requests.storage': '15Gi' } }),
      { denied: 'exceeded quota: q, requested: requests.storage=5Gi, used: requests.storage=10Gi, limited: requests.storage=12Gi' },
    ],
    [
      'charges in full when the old object has no resourceVersion (a create through update)',
      [quota('q', { widgets: '5' }, { widgets: '1' })],
      widget({ usage: { widgets: '1' } }),
      widget({ usage: { widgets: '1' } }),
      { used: { q: { widgets: '2' } } },
    ],
    [
      'charges in full a quota whose scope the object moves into',
      [quota('special', { widgets: '5' }, { widgets: '1' }, { scopes: ['Special'] }), quota('all', { widgets: '5' }, { widgets: '1' })],
      old({ widgets: '1' }),
      widget({ usage: { widgets: '1' }, inScopes: ['Special'] }),
      { used: { special: { widgets: '2' } } },
    ],
  ])('%s', (_name, quotas, oldObject, object, expected) => {
    expect(outcome(decideQuota(request('UPDATE', object, quotas, { oldObject }), fakeEvaluator))).toEqual(expected);
  });

  it('denies an UPDATE that comes without the old object', () => {
    const decision = decideQuota(
      request('UPDATE', widget({ usage: { widgets: '1' } }), [quota('q', { widgets: '5' }, { widgets: '0' })]),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual({ denied: 'unable to get previous usage since prior version of object was not found' });
  });
});

describe('decideQuota: refusals before any charge', () => {
  it('applies the must-specify rule of a matching quota', () => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { widgets: '1' }, omits: ['requests.memory', 'requests.cpu'] }), [
        quota(
          'compute',
          { widgets: '5', 'requests.cpu': '1', 'requests.memory': '1Gi' },
          { widgets: '0', 'requests.cpu': '0', 'requests.memory': '0' },
        ),
      ]),
      fakeEvaluator,
    );
    // The fake has no wording of its own, so the names are listed.
    expect(outcome(decision)).toEqual({ denied: 'failed quota: compute: must specify requests.cpu,requests.memory' });
  });

  it('words the must-specify rule as the evaluator does', () => {
    const wordy: UsageEvaluator = { ...fakeEvaluator, constraintError: (required) => `must specify ${required.join(' and ')} for: app` };
    const decision = decideQuota(
      request('CREATE', widget({ usage: { widgets: '1' }, omits: ['requests.cpu'] }), [
        quota('compute', { 'requests.cpu': '1' }, { 'requests.cpu': '0' }),
      ]),
      wordy,
    );
    expect(outcome(decision)).toEqual({ denied: 'failed quota: compute: must specify requests.cpu for: app' });
  });

  it('checks the must-specify rule quota by quota, before usage figures of later quotas', () => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { widgets: '1' }, omits: ['requests.cpu'] }), [
        quota('a-unknown', { widgets: '5' }, {}),
        quota('b-compute', { 'requests.cpu': '1' }, { 'requests.cpu': '0' }),
      ]),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual({ denied: 'status unknown for quota: a-unknown, resources: widgets' });
  });

  it('ignores the must-specify rule of a quota that does not apply', () => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { widgets: '1' }, omits: ['requests.cpu'] }), [
        quota('compute', { 'requests.cpu': '1' }, { 'requests.cpu': '0' }, { scopes: ['Special'] }),
      ]),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual({ used: {} });
  });

  // Kubernetes' TestHasUsageStats, through the decision.
  it.each<[string, Record<string, string>, Record<string, string>, ReturnType<typeof outcome>]>([
    [
      'denies when a limited resource has no usage figure',
      { 'requests.memory': '1Gi' },
      {},
      { denied: 'status unknown for quota: q, resources: requests.memory' },
    ],
    [
      'allows when every limited resource has a usage figure',
      { 'requests.memory': '1Gi' },
      { 'requests.memory': '500Mi' },
      { used: { q: { 'requests.memory': '501Mi' } } },
    ],
    [
      'does not need usage for a hard resource the evaluator does not charge',
      { 'requests.memory': '1Gi', pods: '1' },
      { 'requests.memory': '500Mi' },
      { used: { q: { 'requests.memory': '501Mi' } } },
    ],
    [
      'lists every limited resource when one figure is missing',
      { 'requests.memory': '1Gi', widgets: '1' },
      { 'requests.memory': '500Mi' },
      { denied: 'status unknown for quota: q, resources: requests.memory,widgets' },
    ],
  ])('%s', (_name, hard, used, expected) => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { 'requests.memory': '1Mi' } }), [quota('q', hard, used)]),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual(expected);
  });

  it('denies negative usage', () => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { 'requests.storage': '-1Gi', widgets: '1' } }), [quota('q', { widgets: '5' }, { widgets: '0' })]),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual({ denied: 'quota usage is negative for resource(s): requests.storage' });
  });

  it('denies negative usage with no quota when limitedResources are configured', () => {
    const decision = decideQuota(
      request('CREATE', widget({ usage: { widgets: '-1' } }), [], { limitedResources: [{ resource: 'pods', matchContains: ['cpu'] }] }),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual({ denied: 'quota usage is negative for resource(s): widgets' });
  });

  it('does not look at the object at all with no quota and nothing limited, as Kubernetes does', () => {
    calls.length = 0;
    const decision = decideQuota(request('CREATE', widget({ usage: { widgets: '-1' } }), []), fakeEvaluator);
    expect(outcome(decision)).toEqual({ used: {} });
    expect(calls).toEqual([]);
  });

  it('throws a DomainError on a quota whose hard limits do not parse', () => {
    const run = () => decideQuota(request('CREATE', widget(), [quota('q', { widgets: 'lots' }, {})]), fakeEvaluator);
    expect(run).toThrow(DomainError);
    expect(run).toThrow(/^resourcequota "q": spec\.hard\[widgets\]/);
  });
});

describe('decideQuota: limitedResources', () => {
  const limitWidgets = (entry: Partial<LimitedResource>): LimitedResource[] => [{ resource: 'widgets', ...entry }];

  it.each<[string, LimitedResource[], QuotaSnapshot[], WidgetSpec, ReturnType<typeof outcome>]>([
    [
      'denies consuming a limited resource without a covering quota',
      limitWidgets({ matchContains: ['cpu'] }),
      [],
      { usage: { widgets: '1', 'requests.cpu': '1' } },
      { denied: 'insufficient quota to consume: requests.cpu' },
    ],
    [
      'allows it with a quota that limits that resource',
      limitWidgets({ matchContains: ['cpu'] }),
      [quota('q', { 'requests.cpu': '4' }, { 'requests.cpu': '0' })],
      { usage: { widgets: '1', 'requests.cpu': '1' } },
      { used: { q: { 'requests.cpu': '1' } } },
    ],
    [
      'denies when the applicable quotas limit other resources only',
      limitWidgets({ matchContains: ['cpu'] }),
      [quota('q', { widgets: '4' }, { widgets: '0' })],
      { usage: { widgets: '1', 'requests.cpu': '1' } },
      { denied: 'insufficient quota to consume: requests.cpu' },
    ],
    [
      'does not count a quota the object is out of scope for',
      limitWidgets({ matchContains: ['cpu'] }),
      [quota('q', { 'requests.cpu': '4' }, { 'requests.cpu': '0' }, { scopes: ['Special'] })],
      { usage: { 'requests.cpu': '1' } },
      { denied: 'insufficient quota to consume: requests.cpu' },
    ],
    [
      'ignores limited resource names the object consumes zero of',
      limitWidgets({ matchContains: ['cpu'] }),
      [],
      { usage: { widgets: '1', 'requests.cpu': '0' } },
      { used: {} },
    ],
    [
      'ignores entries for another kind',
      [{ resource: 'pods', matchContains: ['cpu'] }],
      [],
      { usage: { 'requests.cpu': '1' } },
      { used: {} },
    ],
    [
      'ignores entries for the same resource name in another group',
      [{ apiGroup: 'example.com', resource: 'widgets', matchContains: ['cpu'] }],
      [],
      { usage: { 'requests.cpu': '1' } },
      { used: {} },
    ],
    [
      'denies an object in a limited scope that no quota scope covers',
      limitWidgets({ matchScopes: [{ scopeName: 'Special', operator: 'Exists' }] }),
      [],
      { usage: { widgets: '1' }, inScopes: ['Special'] },
      { denied: 'insufficient quota to match these scopes: [{Special Exists []}]' },
    ],
    [
      'applies limited scopes from entries naming other kinds too, as Kubernetes does',
      [{ resource: 'pods', matchScopes: [{ scopeName: 'Special', operator: 'Exists' }] }],
      [],
      { usage: { widgets: '1' }, inScopes: ['Special'] },
      { denied: 'insufficient quota to match these scopes: [{Special Exists []}]' },
    ],
    [
      'counts a quota scope as covering even when that quota has no hard limits',
      limitWidgets({ matchScopes: [{ scopeName: 'Special', operator: 'Exists' }] }),
      [quota('cover', {}, {}, { scopes: ['Special'] })],
      { usage: { widgets: '1' }, inScopes: ['Special'] },
      { used: {} },
    ],
    [
      'allows an object outside the limited scope',
      limitWidgets({ matchScopes: [{ scopeName: 'Special', operator: 'Exists' }] }),
      [],
      { usage: { widgets: '1' } },
      { used: {} },
    ],
    [
      'checks uncovered resources before uncovered scopes',
      limitWidgets({ matchContains: ['cpu'], matchScopes: [{ scopeName: 'Special', operator: 'Exists' }] }),
      [],
      { usage: { 'requests.cpu': '1' }, inScopes: ['Special'] },
      { denied: 'insufficient quota to consume: requests.cpu' },
    ],
  ])('%s', (_name, limitedResources, quotas, spec, expected) => {
    expect(outcome(decideQuota(request('CREATE', widget(spec), quotas, { limitedResources }), fakeEvaluator))).toEqual(expected);
  });

  it('lets an UPDATE that adds nothing through without a covering quota', () => {
    const decision = decideQuota(
      request('UPDATE', widget({ usage: { 'requests.cpu': '1' } }), [], {
        oldObject: widget({ resourceVersion: '1', usage: { 'requests.cpu': '1' } }),
        limitedResources: limitWidgets({ matchContains: ['cpu'] }),
      }),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual({ used: {} });
  });

  it('denies an UPDATE that adds to a limited resource without a covering quota', () => {
    const decision = decideQuota(
      request('UPDATE', widget({ usage: { 'requests.cpu': '2' } }), [], {
        oldObject: widget({ resourceVersion: '1', usage: { 'requests.cpu': '1' } }),
        limitedResources: limitWidgets({ matchContains: ['cpu'] }),
      }),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual({ denied: 'insufficient quota to consume: requests.cpu' });
  });
});

describe('decideQuota: details', () => {
  it('measures usage with the request namespace filled in when the object has none', () => {
    calls.length = 0;
    decideQuota(
      request('CREATE', widget({ usage: { widgets: '1' } }), [quota('q', { widgets: '5' }, { widgets: '0' })], { namespace: 'team-a' }),
      fakeEvaluator,
    );
    expect(calls).toEqual(['usage:team-a']);
  });

  it('keeps the namespace the object already has', () => {
    calls.length = 0;
    decideQuota(
      request('CREATE', widget({ namespace: 'own', usage: { widgets: '1' } }), [quota('q', { widgets: '5' }, { widgets: '0' })], {
        namespace: 'team-a',
      }),
      fakeEvaluator,
    );
    expect(calls).toEqual(['usage:own']);
  });

  it('records a status write over the limit instead of refusing it', () => {
    const decision = decideQuota(
      request(
        'UPDATE',
        widget({ usage: { 'requests.storage': '20Gi' } }),
        [quota('q', { 'requests.storage': '12Gi' }, { 'requests.storage': '10Gi' })],
        {
          subresource: 'status',
          oldObject: widget({ resourceVersion: '3', usage: { 'requests.storage': '10Gi' } }),
        },
      ),
      fakeEvaluator,
    );
    expect(outcome(decision)).toEqual({ used: { q: { 'requests.storage': '20Gi' } } });
  });

  it('does not modify the quotas it is given', () => {
    const quotas = [quota('q', { widgets: '5' }, { widgets: '1' })];
    decideQuota(request('CREATE', widget({ usage: { widgets: '1' } }), quotas), fakeEvaluator);
    expect(plain(quotas[0]!.used)).toEqual({ widgets: '1' });
  });
});
