import { describe, expect, it } from 'vitest';
import type { GroupResource, KubeObject, Operation, ResourceQuotaSpec, ScopedResourceSelectorRequirement } from '../kube/types.js';
import { formatResourceList, resourceList } from '../resources/resource-list.js';
import type { UsageEvaluator } from '../usage/evaluator.js';
import { checkQuota } from './resource-quota-plugin.js';
import { decideQuota, type LimitedResource, type QuotaCheckInput, type QuotaDecision, type QuotaSnapshot } from './check.js';
import { forbiddenMessage, isForbidden, renderDenial } from './denial.js';

/*
 * Cases beyond Kubernetes' own test tables, each answered from the ResourceQuota admission
 * plugin's source (apiserver admission/plugin/resourcequota: admission.go Validate,
 * controller.go CheckRequest; quota/v1 resources.go and generic/evaluator.go), master
 * branch. Every row says in its name what Kubernetes does.
 */

type Raw = Record<string, string>;
type Outcome = { denied: string } | { used: Record<string, Raw> };

const outcome = (decision: QuotaDecision): Outcome =>
  decision.allowed
    ? { used: Object.fromEntries(decision.charges.map((c) => [c.quota, formatResourceList(c.used)])) }
    : { denied: renderDenial(decision.denial) };

const quota = (name: string, hard: Raw, used: Raw, spec: Omit<ResourceQuotaSpec, 'hard'> = {}): QuotaSnapshot => ({
  name,
  spec: { ...spec, hard },
  used: resourceList(used),
});

const sel = (scopeName: string, operator: string, values?: string[]): ScopedResourceSelectorRequirement => ({
  scopeName,
  operator,
  ...(values ? { values } : {}),
});

/* ------------------------------------------------------------------------------------------
 * The decision on its own, with a stand-in evaluator for "widgets": a widget states its
 * usage, the scopes it is in and the must-specify names it omits. `extra` is a name the
 * widget can consume but the evaluator does not claim (MatchingResources leaves it out).
 * ---------------------------------------------------------------------------------------- */

const CLAIMED = ['widgets', 'gadgets', 'requests.cpu', 'limits.cpu', 'requests.memory', 'requests.storage'];

interface Widget {
  readonly usage?: Raw;
  readonly inScopes?: readonly string[];
  readonly omits?: readonly string[];
  readonly resourceVersion?: string;
}

const widget = (w: Widget = {}): KubeObject => ({
  metadata: { name: 'w', ...(w.resourceVersion === undefined ? {} : { resourceVersion: w.resourceVersion }) },
  usage: w.usage ?? {},
  inScopes: w.inScopes ?? [],
  omits: w.omits ?? [],
});

const stored = (usage: Raw, extra: Omit<Widget, 'usage'> = {}): KubeObject => widget({ resourceVersion: '42', ...extra, usage });

const widgets: UsageEvaluator = {
  groupResource: { group: '', resource: 'widgets' },
  handles: (operation) => operation === 'CREATE' || operation === 'UPDATE' || operation === 'CONNECT',
  matchingResources: (input) => input.filter((name) => CLAIMED.includes(name)),
  scopeFacts: (object) => Object.fromEntries((object.inScopes as string[]).map((scope) => [scope, true])),
  matchingScopes: (object, scopes) => scopes.filter((s) => (object.inScopes as string[]).includes(s.scopeName)),
  uncoveredQuotaScopes: (limited, matched) => limited.filter((l) => !matched.some((m) => m.scopeName === l.scopeName)),
  constraints: (required, object) => required.filter((name) => (object.omits as string[]).includes(name)),
  usage: (object) => resourceList(object.usage as Raw),
};

interface DecisionCase {
  readonly name: string;
  readonly operation?: Operation;
  readonly subresource?: string;
  readonly object: KubeObject;
  readonly oldObject?: KubeObject;
  readonly quotas: QuotaSnapshot[];
  readonly limitedResources?: LimitedResource[];
  readonly expected: Outcome;
}

const decideWidget = (c: DecisionCase): QuotaDecision =>
  decideQuota(
    {
      operation: c.operation ?? 'CREATE',
      groupResource: widgets.groupResource,
      object: c.object,
      quotas: c.quotas,
      ...(c.subresource === undefined ? {} : { subresource: c.subresource }),
      ...(c.oldObject === undefined ? {} : { oldObject: c.oldObject }),
      ...(c.limitedResources === undefined ? {} : { limitedResources: c.limitedResources }),
    },
    widgets,
  );

const widgetCases = (cases: DecisionCase[]) =>
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(outcome(decideWidget(c))).toEqual(c.expected);
  });

describe('Kubernetes cases: UPDATE charges SubtractWithNonNegativeResult per key', () => {
  widgetCases([
    {
      name: 'a key only the new object has is charged in full (the old usage counts as absent)',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '1', gadgets: '2' } }),
      oldObject: stored({ widgets: '1' }),
      quotas: [quota('q', { widgets: '5', gadgets: '5' }, { widgets: '1', gadgets: '0' })],
      expected: { used: { q: { widgets: '1', gadgets: '2' } } },
    },
    {
      name: 'a key only the old object has gives a zero delta, so nothing is charged',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '1' } }),
      oldObject: stored({ widgets: '1', gadgets: '3' }),
      quotas: [quota('q', { widgets: '5', gadgets: '1' }, { widgets: '1', gadgets: '9' })],
      expected: { used: {} },
    },
    {
      name: 'a key dropped while another grows: only the growth is charged, nothing is credited',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '3' } }),
      oldObject: stored({ widgets: '1', gadgets: '3' }),
      quotas: [quota('q', { widgets: '5', gadgets: '5' }, { widgets: '1', gadgets: '3' })],
      expected: { used: { q: { widgets: '3', gadgets: '3' } } },
    },
    {
      name: 'a refused UPDATE reports the increase as requested, not the new total',
      operation: 'UPDATE',
      object: widget({ usage: { 'requests.cpu': '1500m' } }),
      oldObject: stored({ 'requests.cpu': '1' }),
      quotas: [quota('q', { 'requests.cpu': '2' }, { 'requests.cpu': '1800m' })],
      expected: { denied: 'exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=1800m, limited: requests.cpu=2' },
    },
    {
      name: 'an old object whose resourceVersion is empty is a create-on-update: charged in full',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '2' } }),
      oldObject: widget({ resourceVersion: '', usage: { widgets: '2' } }),
      quotas: [quota('q', { widgets: '5' }, { widgets: '1' })],
      expected: { used: { q: { widgets: '3' } } },
    },
    {
      name: 'an object leaving a scoped quota is not charged to it (the quota no longer matches the new object)',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '2' } }),
      oldObject: stored({ widgets: '1' }, { inScopes: ['Special'] }),
      quotas: [quota('special', { widgets: '1' }, { widgets: '1' }, { scopes: ['Special'] })],
      expected: { used: {} },
    },
    {
      name: 'an object entering a full scoped quota is refused with its full usage as requested',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '2' }, inScopes: ['Special'] }),
      oldObject: stored({ widgets: '2' }),
      quotas: [
        quota('special', { widgets: '3' }, { widgets: '2' }, { scopes: ['Special'] }),
        quota('all', { widgets: '9' }, { widgets: '2' }),
      ],
      expected: { denied: 'exceeded quota: special, requested: widgets=2, used: widgets=2, limited: widgets=3' },
    },
    {
      name: 'an UPDATE that adds nothing is still refused when a matching quota has no usage figure (checked first)',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '1' } }),
      oldObject: stored({ widgets: '1' }),
      quotas: [quota('q', { widgets: '5', gadgets: '5' }, { widgets: '1' })],
      expected: { denied: 'status unknown for quota: q, resources: gadgets,widgets' },
    },
    {
      name: 'an UPDATE that adds nothing is still refused by the must-specify rule',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '1' }, omits: ['requests.cpu'] }),
      oldObject: stored({ widgets: '1' }),
      quotas: [quota('q', { 'requests.cpu': '5' }, { 'requests.cpu': '0' })],
      expected: { denied: 'failed quota: q: must specify requests.cpu' },
    },
    {
      name: 'an UPDATE to negative usage is refused although the delta is clamped to zero',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '-1' } }),
      oldObject: stored({ widgets: '1' }),
      quotas: [quota('q', { widgets: '5' }, { widgets: '1' })],
      expected: { denied: 'quota usage is negative for resource(s): widgets' },
    },
    {
      name: 'a CONNECT the evaluator handles is charged the full usage of the object, like a CREATE',
      operation: 'CONNECT',
      object: widget({ usage: { widgets: '1' } }),
      quotas: [quota('q', { widgets: '5' }, { widgets: '1' })],
      expected: { used: { q: { widgets: '2' } } },
    },
    {
      name: 'a CONNECT with no matching quota charges nothing and needs no covering quota',
      operation: 'CONNECT',
      object: widget({ usage: { 'requests.cpu': '1' } }),
      quotas: [],
      limitedResources: [{ resource: 'widgets', matchContains: ['cpu'] }],
      expected: { used: {} },
    },
  ]);
});

describe('Kubernetes cases: quotas already over their limit (hard lowered below used)', () => {
  widgetCases([
    {
      name: 'a request that adds only to other keys is admitted; the over-limit key is left as it is',
      object: widget({ usage: { widgets: '1' } }),
      quotas: [quota('q', { widgets: '5', 'requests.cpu': '1' }, { widgets: '0', 'requests.cpu': '4' })],
      expected: { used: { q: { widgets: '1', 'requests.cpu': '4' } } },
    },
    {
      name: 'a request adding to the over-limit key is refused, listing only that key',
      object: widget({ usage: { widgets: '1', 'requests.cpu': '1m' } }),
      quotas: [quota('q', { widgets: '5', 'requests.cpu': '1' }, { widgets: '0', 'requests.cpu': '4' })],
      expected: { denied: 'exceeded quota: q, requested: requests.cpu=1m, used: requests.cpu=4, limited: requests.cpu=1' },
    },
    {
      name: 'a key at exactly its limit refuses any addition',
      object: widget({ usage: { gadgets: '1' } }),
      quotas: [quota('q', { gadgets: '3' }, { gadgets: '3' })],
      expected: { denied: 'exceeded quota: q, requested: gadgets=1, used: gadgets=3, limited: gadgets=3' },
    },
    {
      name: 'reaching the limit to the milli-unit is allowed (LessThanOrEqual)',
      object: widget({ usage: { 'requests.cpu': '1m' } }),
      quotas: [quota('q', { 'requests.cpu': '2' }, { 'requests.cpu': '1999m' })],
      expected: { used: { q: { 'requests.cpu': '2' } } },
    },
    {
      name: 'binary and decimal amounts compare by value: 1Gi is reached exactly by bytes',
      object: widget({ usage: { 'requests.memory': '1' } }),
      quotas: [quota('q', { 'requests.memory': '1Gi' }, { 'requests.memory': '1073741823' })],
      expected: { used: { q: { 'requests.memory': '1073741824' } } },
    },
  ]);
});

describe('Kubernetes cases: the exceeded-quota message', () => {
  widgetCases([
    {
      name: 'several exceeded keys are sorted and comma-joined in each list; a key within its limit is left out',
      object: widget({ usage: { widgets: '2', 'requests.cpu': '2', gadgets: '1', 'limits.cpu': '4' } }),
      quotas: [
        quota(
          'q',
          { widgets: '2', 'requests.cpu': '2', gadgets: '10', 'limits.cpu': '4' },
          { widgets: '1', 'requests.cpu': '1', gadgets: '0', 'limits.cpu': '1' },
        ),
      ],
      expected: {
        denied:
          'exceeded quota: q, requested: limits.cpu=4,requests.cpu=2,widgets=2, used: limits.cpu=1,requests.cpu=1,widgets=1, limited: limits.cpu=4,requests.cpu=2,widgets=2',
      },
    },
    {
      name: 'a consumed name the evaluator does not claim is still limited by a hard entry, with no usage figure to print',
      object: widget({ usage: { widgets: '1', extra: '1' } }),
      quotas: [quota('q', { widgets: '5', extra: '0' }, { widgets: '0' })],
      expected: { denied: 'exceeded quota: q, requested: extra=1, used: , limited: extra=0' },
    },
    {
      name: 'a zero limit written "0m" prints as 0',
      object: widget({ usage: { 'requests.cpu': '100m' } }),
      quotas: [quota('q', { 'requests.cpu': '0m' }, { 'requests.cpu': '0' })],
      expected: { denied: 'exceeded quota: q, requested: requests.cpu=100m, used: requests.cpu=0, limited: requests.cpu=0' },
    },
    {
      name: 'a zero limit admits a request consuming zero of it (zeros are removed from the delta)',
      object: widget({ usage: { 'requests.cpu': '0', widgets: '1' } }),
      quotas: [quota('q', { 'requests.cpu': '0', widgets: '1' }, { 'requests.cpu': '0', widgets: '0' })],
      expected: { used: { q: { 'requests.cpu': '0', widgets: '1' } } },
    },
    {
      name: 'limits print in canonical form: 1000m as 1, 2048Mi as 2Gi',
      object: widget({ usage: { 'requests.cpu': '2', 'requests.memory': '3Gi' } }),
      quotas: [quota('q', { 'requests.cpu': '1000m', 'requests.memory': '2048Mi' }, { 'requests.cpu': '0', 'requests.memory': '0' })],
      expected: {
        denied:
          'exceeded quota: q, requested: requests.cpu=2,requests.memory=3Gi, used: requests.cpu=0,requests.memory=0, limited: requests.cpu=1,requests.memory=2Gi',
      },
    },
    {
      name: "the requested amount prints in the request's own format (0.5 as 500m), the used one in the quota's",
      object: widget({ usage: { 'requests.cpu': '0.5', 'requests.memory': '1073741824' } }),
      quotas: [quota('q', { 'requests.cpu': '1', 'requests.memory': '1Gi' }, { 'requests.cpu': '600m', 'requests.memory': '512Mi' })],
      expected: {
        denied:
          'exceeded quota: q, requested: requests.cpu=500m,requests.memory=1073741824, used: requests.cpu=600m,requests.memory=512Mi, limited: requests.cpu=1,requests.memory=1Gi',
      },
    },
    {
      name: "an UPDATE delta keeps the new object's format: 15Gi written in bytes minus 10Gi prints in bytes",
      operation: 'UPDATE',
      object: widget({ usage: { 'requests.storage': '16106127360' } }),
      oldObject: stored({ 'requests.storage': '10Gi' }),
      quotas: [quota('q', { 'requests.storage': '12Gi' }, { 'requests.storage': '10Gi' })],
      expected: {
        denied: 'exceeded quota: q, requested: requests.storage=5368709120, used: requests.storage=10Gi, limited: requests.storage=12Gi',
      },
    },
  ]);
});

describe('Kubernetes cases: several quotas', () => {
  widgetCases([
    {
      name: 'one passes and one fails: the failing one is named and neither is charged',
      object: widget({ usage: { widgets: '1', gadgets: '1' } }),
      quotas: [quota('a-roomy', { widgets: '10' }, { widgets: '0' }), quota('b-tight', { gadgets: '1' }, { gadgets: '1' })],
      expected: { denied: 'exceeded quota: b-tight, requested: gadgets=1, used: gadgets=1, limited: gadgets=1' },
    },
    {
      name: 'each message lists only the keys of the quota it names',
      object: widget({ usage: { widgets: '2', gadgets: '2' } }),
      quotas: [quota('a', { widgets: '1' }, { widgets: '0' }), quota('b', { gadgets: '1' }, { gadgets: '0' })],
      expected: { denied: 'exceeded quota: a, requested: widgets=2, used: widgets=0, limited: widgets=1' },
    },
    {
      name: 'a must-specify failure of a later quota wins over an earlier exceeded quota (constraints are checked first)',
      object: widget({ usage: { widgets: '9' }, omits: ['requests.memory'] }),
      quotas: [
        quota('a-full', { widgets: '1' }, { widgets: '1' }),
        quota('b-memory', { 'requests.memory': '1Gi' }, { 'requests.memory': '0' }),
      ],
      expected: { denied: 'failed quota: b-memory: must specify requests.memory' },
    },
    {
      name: 'must-specify under several quotas names only the first failing quota and its own resources',
      object: widget({ usage: { widgets: '1' }, omits: ['requests.cpu', 'requests.memory'] }),
      quotas: [
        quota('b-memory', { 'requests.memory': '1Gi' }, { 'requests.memory': '0' }),
        quota('a-cpu', { 'requests.cpu': '1' }, { 'requests.cpu': '0' }),
      ],
      expected: { denied: 'failed quota: a-cpu: must specify requests.cpu' },
    },
    {
      name: 'an unknown usage figure of a later quota wins over an earlier exceeded quota',
      object: widget({ usage: { widgets: '9' } }),
      quotas: [quota('a-full', { widgets: '1' }, { widgets: '1' }), quota('b-new', { widgets: '5' }, {})],
      expected: { denied: 'status unknown for quota: b-new, resources: widgets' },
    },
    {
      name: 'negative usage is reported before any exceeded quota',
      object: widget({ usage: { widgets: '9', gadgets: '-1' } }),
      quotas: [quota('a-full', { widgets: '1' }, { widgets: '1' })],
      expected: { denied: 'quota usage is negative for resource(s): gadgets' },
    },
    {
      name: 'quotas whose delta is zero are skipped while another is charged',
      object: widget({ usage: { widgets: '1', gadgets: '0' } }),
      quotas: [quota('a-gadgets', { gadgets: '0' }, { gadgets: '0' }), quota('b-widgets', { widgets: '3' }, { widgets: '1' })],
      expected: { used: { 'b-widgets': { widgets: '2' } } },
    },
    {
      name: 'a quota matched for a resource the request consumes none of is not charged but still needs its usage figure',
      object: widget({ usage: { widgets: '1' } }),
      quotas: [quota('a', { gadgets: '3' }, {}), quota('b', { widgets: '3' }, { widgets: '0' })],
      expected: { denied: 'status unknown for quota: a, resources: gadgets' },
    },
  ]);
});

describe('Kubernetes cases: quotas that do not apply', () => {
  widgetCases([
    {
      name: 'a quota without hard limits never applies',
      object: widget({ usage: { widgets: '1' }, omits: ['requests.cpu'] }),
      quotas: [quota('empty', {}, {})],
      expected: { used: {} },
    },
    {
      name: 'hard names the evaluator does not claim need no usage figure and are never charged',
      object: widget({ usage: { widgets: '1' } }),
      quotas: [quota('q', { widgets: '5', 'count/services': '1', pods: '0' }, { widgets: '0' })],
      expected: { used: { q: { widgets: '1' } } },
    },
    {
      name: 'a scoped quota the object is out of scope for imposes neither its limits, must-specify rule nor usage figures',
      object: widget({ usage: { widgets: '9' }, omits: ['requests.cpu'] }),
      quotas: [quota('scoped', { widgets: '0', 'requests.cpu': '1' }, {}, { scopes: ['Special'] })],
      expected: { used: {} },
    },
    {
      name: 'a quota needs every scope: matching one of two selectors is not enough',
      object: widget({ usage: { widgets: '1' }, inScopes: ['Special'] }),
      quotas: [
        quota(
          'scoped',
          { widgets: '0' },
          { widgets: '0' },
          { scopeSelector: { matchExpressions: [sel('Special', 'Exists'), sel('Other', 'Exists')] } },
        ),
      ],
      expected: { used: {} },
    },
  ]);
});

describe('Kubernetes cases: limitedResources', () => {
  const limitWidgets = (entry: Omit<LimitedResource, 'resource'>): LimitedResource => ({ resource: 'widgets', ...entry });

  widgetCases([
    {
      name: 'matchContains matches substrings: every consumed cpu name is listed, sorted',
      object: widget({ usage: { 'requests.cpu': '1', 'limits.cpu': '2', widgets: '1' } }),
      quotas: [],
      limitedResources: [limitWidgets({ matchContains: ['cpu'] })],
      expected: { denied: 'insufficient quota to consume: limits.cpu,requests.cpu' },
    },
    {
      name: 'a name matched by two entries is listed once',
      object: widget({ usage: { 'requests.cpu': '1' } }),
      quotas: [],
      limitedResources: [limitWidgets({ matchContains: ['cpu'] }), limitWidgets({ matchContains: ['requests.'] })],
      expected: { denied: 'insufficient quota to consume: requests.cpu' },
    },
    {
      name: 'a covering quota counts even when it is the one that then refuses (the message is the exceeded one)',
      object: widget({ usage: { 'requests.cpu': '2' } }),
      quotas: [quota('q', { 'requests.cpu': '1' }, { 'requests.cpu': '0' })],
      limitedResources: [limitWidgets({ matchContains: ['cpu'] })],
      expected: { denied: 'exceeded quota: q, requested: requests.cpu=2, used: requests.cpu=0, limited: requests.cpu=1' },
    },
    {
      name: 'a limited name is looked up in the full usage of the object, not only in what the quota limits',
      object: widget({ usage: { widgets: '1', 'requests.cpu': '1' } }),
      quotas: [quota('q', { widgets: '5' }, { widgets: '0' })],
      limitedResources: [limitWidgets({ matchContains: ['cpu'] })],
      expected: { denied: 'insufficient quota to consume: requests.cpu' },
    },
    {
      name: 'an object consuming nothing at all passes an uncovered limited scope (no change, early return)',
      object: widget({ usage: { widgets: '0' }, inScopes: ['Special'] }),
      quotas: [quota('q', { widgets: '5' }, { widgets: '0' })],
      limitedResources: [limitWidgets({ matchScopes: [sel('Special', 'Exists')] })],
      expected: { used: {} },
    },
    {
      name: 'a limited scope listed by two entries is printed twice',
      object: widget({ usage: { widgets: '1' }, inScopes: ['Special'] }),
      quotas: [],
      limitedResources: [
        limitWidgets({ matchScopes: [sel('Special', 'Exists')] }),
        { resource: 'gadgets', matchScopes: [sel('Special', 'Exists')] },
      ],
      expected: { denied: 'insufficient quota to match these scopes: [{Special Exists []} {Special Exists []}]' },
    },
    {
      name: 'a scope matched by a quota the object only partly matches still covers the limited scope',
      object: widget({ usage: { widgets: '1' }, inScopes: ['Special'] }),
      quotas: [quota('partly', { widgets: '0' }, { widgets: '0' }, { scopes: ['Special', 'Other'] })],
      limitedResources: [limitWidgets({ matchScopes: [sel('Special', 'Exists')] })],
      expected: { used: {} },
    },
    {
      name: 'an UPDATE that adds to an unlimited name still needs cover for the limited names it already consumes',
      operation: 'UPDATE',
      object: widget({ usage: { widgets: '2', 'requests.cpu': '1' } }),
      oldObject: stored({ widgets: '1', 'requests.cpu': '1' }),
      quotas: [],
      limitedResources: [limitWidgets({ matchContains: ['cpu'] })],
      expected: { denied: 'insufficient quota to consume: requests.cpu' },
    },
  ]);
});

/* ------------------------------------------------------------------------------------------
 * Through the plugin entry point, with the real evaluators.
 * ---------------------------------------------------------------------------------------- */

const PODS: GroupResource = { group: '', resource: 'pods' };
const SERVICES: GroupResource = { group: '', resource: 'services' };
const PVCS: GroupResource = { group: '', resource: 'persistentvolumeclaims' };

interface PodOptions {
  readonly priorityClassName?: string;
  readonly activeDeadlineSeconds?: number;
  readonly resourceVersion?: string;
  readonly containers?: { name: string; requests?: Raw; limits?: Raw }[];
}

const pod = (requests: Raw, limits: Raw = {}, options: PodOptions = {}): KubeObject => ({
  metadata: { name: 'web', namespace: 'test', ...(options.resourceVersion ? { resourceVersion: options.resourceVersion } : {}) },
  spec: {
    containers: (options.containers ?? [{ name: 'app', requests, limits }]).map((c) => ({
      name: c.name,
      image: 'img',
      resources: { requests: c.requests ?? {}, limits: c.limits ?? {} },
    })),
    ...(options.priorityClassName ? { priorityClassName: options.priorityClassName } : {}),
    ...(options.activeDeadlineSeconds === undefined ? {} : { activeDeadlineSeconds: options.activeDeadlineSeconds }),
  },
});

const claim = (storage: string, resourceVersion?: string): KubeObject => ({
  metadata: { name: 'data', namespace: 'test', ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { resources: { requests: { storage } } },
});

const svc = (type: string, ports = 1, resourceVersion?: string): KubeObject => ({
  metadata: { name: 'svc', namespace: 'test', ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ port: 80 + i })) },
});

interface AdmissionCase {
  readonly name: string;
  readonly operation?: Operation;
  readonly resource?: GroupResource;
  readonly subresource?: string;
  /** The request namespace; `null` sends none (a cluster-scoped request). */
  readonly namespace?: string | null;
  readonly object: KubeObject;
  readonly oldObject?: KubeObject;
  readonly quotas: QuotaSnapshot[];
  readonly limitedResources?: LimitedResource[];
  readonly expected: Outcome;
}

const admit = (c: AdmissionCase): QuotaDecision => {
  const input: QuotaCheckInput = {
    operation: c.operation ?? 'CREATE',
    groupResource: c.resource ?? PODS,
    object: c.object,
    quotas: c.quotas,
    ...(c.namespace === null ? {} : { namespace: c.namespace ?? 'test' }),
    ...(c.subresource === undefined ? {} : { subresource: c.subresource }),
    ...(c.oldObject === undefined ? {} : { oldObject: c.oldObject }),
    ...(c.limitedResources === undefined ? {} : { limitedResources: c.limitedResources }),
  };
  return checkQuota(input);
};

const admissionCases = (cases: AdmissionCase[]) =>
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(outcome(admit(c))).toEqual(c.expected);
  });

const fullPods = () => quota('pods', { pods: '1', 'count/pods': '1' }, { pods: '1', 'count/pods': '1' });

describe('Kubernetes cases: requests the plugin does not evaluate', () => {
  admissionCases([
    {
      name: 'DELETE of a pod is admitted although the quota is full',
      operation: 'DELETE',
      object: pod({ cpu: '1' }),
      quotas: [fullPods()],
      expected: { used: {} },
    },
    {
      name: 'CONNECT to a pod (exec, attach) is admitted: the pod evaluator does not handle it',
      operation: 'CONNECT',
      subresource: 'exec',
      object: pod({ cpu: '1' }),
      quotas: [fullPods()],
      expected: { used: {} },
    },
    {
      name: 'CREATE of pods/binding is admitted: a subresource is not a new pod',
      subresource: 'binding',
      object: { metadata: { name: 'web', namespace: 'test' } },
      quotas: [fullPods()],
      expected: { used: {} },
    },
    {
      name: 'CREATE of pods/eviction is admitted',
      subresource: 'eviction',
      object: { metadata: { name: 'web', namespace: 'test' } },
      quotas: [fullPods()],
      expected: { used: {} },
    },
    {
      name: 'UPDATE of pods/status is admitted even when the quota has no usage figures',
      operation: 'UPDATE',
      subresource: 'status',
      object: pod({ cpu: '1' }, {}, { resourceVersion: '2' }),
      oldObject: pod({ cpu: '1' }, {}, { resourceVersion: '1' }),
      quotas: [quota('q', { cpu: '1' }, {})],
      expected: { used: {} },
    },
    {
      name: 'CREATE of serviceaccounts/token is not counted as a new service account',
      resource: { group: '', resource: 'serviceaccounts' },
      subresource: 'token',
      object: { metadata: { name: 'default', namespace: 'test' } },
      quotas: [quota('q', { 'count/serviceaccounts': '1' }, { 'count/serviceaccounts': '1' })],
      expected: { used: {} },
    },
    {
      name: 'UPDATE of services/status is admitted even when the quota has no usage figures',
      operation: 'UPDATE',
      resource: SERVICES,
      subresource: 'status',
      object: svc('LoadBalancer', 1, '2'),
      oldObject: svc('LoadBalancer', 1, '1'),
      quotas: [quota('q', { 'services.loadbalancers': '1' }, {})],
      expected: { used: {} },
    },
    {
      name: 'UPDATE of deployments/scale is admitted',
      operation: 'UPDATE',
      resource: { group: 'apps', resource: 'deployments' },
      subresource: 'scale',
      object: { metadata: { name: 'd', namespace: 'test', resourceVersion: '2' } },
      oldObject: { metadata: { name: 'd', namespace: 'test', resourceVersion: '1' } },
      quotas: [quota('q', { 'count/deployments.apps': '0' }, {})],
      expected: { used: {} },
    },
    {
      name: 'UPDATE of a counted object is admitted: object counts change only on CREATE',
      operation: 'UPDATE',
      resource: { group: 'apps', resource: 'deployments' },
      object: { metadata: { name: 'd', namespace: 'test', resourceVersion: '2' } },
      oldObject: { metadata: { name: 'd', namespace: 'test', resourceVersion: '1' } },
      quotas: [quota('q', { 'count/deployments.apps': '0' }, { 'count/deployments.apps': '5' })],
      expected: { used: {} },
    },
    {
      name: 'a request without a namespace (cluster-scoped) is admitted without a look',
      resource: { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
      namespace: null,
      object: { metadata: { name: 'admin' } },
      quotas: [],
      limitedResources: [{ apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles', matchContains: ['count/'] }],
      expected: { used: {} },
    },
    {
      name: 'creating a namespace is admitted even when namespaces are limited by configuration',
      resource: { group: '', resource: 'namespaces' },
      namespace: 'new-team',
      object: { metadata: { name: 'new-team' } },
      quotas: [],
      limitedResources: [{ resource: 'namespaces', matchContains: ['count/'] }],
      expected: { used: {} },
    },
    {
      name: 'CREATE of a bindings object is admitted: quota ignores that resource',
      resource: { group: '', resource: 'bindings' },
      object: { metadata: { name: 'web', namespace: 'test' } },
      quotas: [quota('q', { 'count/bindings': '0' }, { 'count/bindings': '0' })],
      expected: { used: {} },
    },
  ]);
});

describe('Kubernetes cases: counted kinds', () => {
  admissionCases([
    {
      name: 'a CREATE of a counted kind is refused at its count limit, by its group-qualified name',
      resource: { group: 'apps', resource: 'deployments' },
      object: { metadata: { name: 'd', namespace: 'test' } },
      quotas: [quota('q', { 'count/deployments.apps': '2' }, { 'count/deployments.apps': '2' })],
      expected: {
        denied: 'exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=2, limited: count/deployments.apps=2',
      },
    },
    {
      name: 'a legacy alias and its count name are both charged and both reported',
      resource: { group: '', resource: 'secrets' },
      object: { metadata: { name: 's', namespace: 'test' } },
      quotas: [quota('q', { secrets: '1', 'count/secrets': '1' }, { secrets: '1', 'count/secrets': '1' })],
      expected: {
        denied:
          'exceeded quota: q, requested: count/secrets=1,secrets=1, used: count/secrets=1,secrets=1, limited: count/secrets=1,secrets=1',
      },
    },
    {
      name: 'a scoped quota never matches a counted kind (object counts match no scope)',
      resource: { group: 'apps', resource: 'deployments' },
      object: { metadata: { name: 'd', namespace: 'test' } },
      quotas: [quota('q', { 'count/deployments.apps': '0' }, { 'count/deployments.apps': '0' }, { scopes: ['BestEffort'] })],
      expected: { used: {} },
    },
    {
      name: 'a limited count name with no covering quota is refused',
      resource: { group: 'apps', resource: 'deployments' },
      object: { metadata: { name: 'd', namespace: 'test' } },
      quotas: [quota('q', { 'count/replicasets.apps': '5' }, { 'count/replicasets.apps': '0' })],
      limitedResources: [{ apiGroup: 'apps', resource: 'deployments', matchContains: ['count/deployments'] }],
      expected: { denied: 'insufficient quota to consume: count/deployments.apps' },
    },
    {
      name: "a quota on a kind's count with no usage figure refuses with status unknown",
      resource: { group: '', resource: 'configmaps' },
      object: { metadata: { name: 'c', namespace: 'test' } },
      quotas: [quota('q', { configmaps: '5', 'count/configmaps': '5' }, { configmaps: '1' })],
      expected: { denied: 'status unknown for quota: q, resources: configmaps,count/configmaps' },
    },
  ]);
});

describe('Kubernetes cases: pods through the plugin', () => {
  admissionCases([
    {
      name: 'must-specify names only the first failing quota and the resources that quota tracks',
      object: pod({}, {}),
      quotas: [
        quota('b-limits', { 'limits.memory': '1Gi' }, { 'limits.memory': '0' }),
        quota('a-requests', { 'requests.cpu': '1' }, { 'requests.cpu': '0' }),
      ],
      expected: { denied: 'failed quota: a-requests: must specify requests.cpu for: app' },
    },
    {
      name: 'must-specify lists each missing resource with the containers missing it',
      object: pod({}, {}, { containers: [{ name: 'web', requests: { cpu: '1' } }, { name: 'sidecar' }] }),
      quotas: [quota('compute', { 'requests.cpu': '4', 'limits.memory': '1Gi' }, { 'requests.cpu': '0', 'limits.memory': '0' })],
      expected: { denied: 'failed quota: compute: must specify limits.memory for: sidecar,web; requests.cpu for: sidecar' },
    },
    {
      name: 'must-specify is not applied for resources other than cpu and memory (ephemeral-storage)',
      object: pod({ cpu: '1' }),
      quotas: [quota('q', { 'requests.ephemeral-storage': '1Gi', pods: '5' }, { 'requests.ephemeral-storage': '0', pods: '0' })],
      expected: { used: { q: { 'requests.ephemeral-storage': '0', pods: '1' } } },
    },
    {
      name: 'the requests of several containers are summed before the check',
      object: pod(
        {},
        {},
        {
          containers: [
            { name: 'a', requests: { cpu: '600m' } },
            { name: 'b', requests: { cpu: '600m' } },
          ],
        },
      ),
      quotas: [quota('q', { 'requests.cpu': '1' }, { 'requests.cpu': '0' })],
      expected: { denied: 'exceeded quota: q, requested: requests.cpu=1200m, used: requests.cpu=0, limited: requests.cpu=1' },
    },
    {
      name: 'a NotIn PriorityClass scope matches a pod without a priority class',
      object: pod({ cpu: '1' }),
      quotas: [
        quota('q', { pods: '1' }, { pods: '1' }, { scopeSelector: { matchExpressions: [sel('PriorityClass', 'NotIn', ['high'])] } }),
      ],
      expected: { denied: 'exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1' },
    },
    {
      name: 'a DoesNotExist PriorityClass scope does not match a pod with a class',
      object: pod({ cpu: '1' }, {}, { priorityClassName: 'high' }),
      quotas: [quota('q', { pods: '1' }, { pods: '1' }, { scopeSelector: { matchExpressions: [sel('PriorityClass', 'DoesNotExist')] } })],
      expected: { used: {} },
    },
    {
      name: 'a limited PriorityClass In scope is covered by any matched quota scope of the same name (NotIn here)',
      object: pod({ cpu: '1' }, { cpu: '1' }, { priorityClassName: 'gold' }),
      quotas: [
        quota('q', { pods: '5' }, { pods: '0' }, { scopeSelector: { matchExpressions: [sel('PriorityClass', 'NotIn', ['silver'])] } }),
      ],
      limitedResources: [{ resource: 'pods', matchScopes: [sel('PriorityClass', 'In', ['gold'])] }],
      expected: { used: { q: { pods: '1' } } },
    },
    {
      name: 'a Terminating quota does not match a pod without an active deadline',
      object: pod({ cpu: '1' }),
      quotas: [quota('q', { pods: '0' }, { pods: '0' }, { scopes: ['Terminating'] })],
      expected: { used: {} },
    },
    {
      name: 'a pod without a namespace is charged to the request namespace (the plugin fills it in)',
      object: { metadata: { name: 'web' }, spec: { containers: [{ name: 'app', resources: { requests: { cpu: '1' } } }] } },
      quotas: [quota('q', { 'requests.cpu': '2' }, { 'requests.cpu': '0' })],
      expected: { used: { q: { 'requests.cpu': '1' } } },
    },
    {
      name: 'a refusal is a Forbidden status naming the pod',
      object: pod({ cpu: '2' }),
      quotas: [quota('q', { cpu: '1' }, { cpu: '0' })],
      expected: { denied: 'exceeded quota: q, requested: cpu=2, used: cpu=0, limited: cpu=1' },
    },
  ]);

  it('words the refusal as pods "web" is forbidden', () => {
    const decision = admit({
      name: '',
      object: pod({ cpu: '2' }),
      quotas: [quota('q', { cpu: '1' }, { cpu: '0' })],
      expected: { used: {} },
    });
    expect(!decision.allowed && isForbidden(decision.denial) && forbiddenMessage(PODS, 'web', decision.denial)).toBe(
      'pods "web" is forbidden: exceeded quota: q, requested: cpu=2, used: cpu=0, limited: cpu=1',
    );
  });
});

describe('Kubernetes cases: services and claims through the plugin', () => {
  admissionCases([
    {
      name: 'a scoped quota never matches a service (services have no scopes)',
      resource: SERVICES,
      object: svc('ClusterIP'),
      quotas: [quota('q', { services: '0' }, { services: '0' }, { scopes: ['NotTerminating'] })],
      expected: { used: {} },
    },
    {
      name: 'a service type change to NodePort is charged its node ports only',
      resource: SERVICES,
      operation: 'UPDATE',
      object: svc('NodePort', 2),
      oldObject: svc('ClusterIP', 2, '5'),
      quotas: [quota('q', { services: '5', 'services.nodeports': '1' }, { services: '1', 'services.nodeports': '0' })],
      expected: { denied: 'exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1' },
    },
    {
      name: 'a claim that grows past the storage limit is refused with the growth as requested',
      resource: PVCS,
      operation: 'UPDATE',
      object: claim('16106127360'),
      oldObject: claim('10Gi', '3'),
      quotas: [quota('q', { 'requests.storage': '12Gi' }, { 'requests.storage': '10Gi' })],
      expected: {
        denied: 'exceeded quota: q, requested: requests.storage=5368709120, used: requests.storage=10Gi, limited: requests.storage=12Gi',
      },
    },
    {
      name: 'a claim of a storage class is limited by the class-qualified names as well',
      resource: PVCS,
      object: { ...claim('5Gi'), spec: { storageClassName: 'gold', resources: { requests: { storage: '5Gi' } } } },
      quotas: [
        quota(
          'q',
          { 'requests.storage': '100Gi', 'gold.storageclass.storage.k8s.io/requests.storage': '4Gi' },
          { 'requests.storage': '0', 'gold.storageclass.storage.k8s.io/requests.storage': '0' },
        ),
      ],
      expected: {
        denied:
          'exceeded quota: q, requested: gold.storageclass.storage.k8s.io/requests.storage=5Gi, used: gold.storageclass.storage.k8s.io/requests.storage=0, limited: gold.storageclass.storage.k8s.io/requests.storage=4Gi',
      },
    },
    {
      name: 'a claim status write is charged past the limit, never refused',
      resource: PVCS,
      operation: 'UPDATE',
      subresource: 'status',
      object: { ...claim('10Gi', '4'), status: { allocatedResources: { storage: '20Gi' } } },
      oldObject: claim('10Gi', '3'),
      quotas: [quota('q', { 'requests.storage': '12Gi' }, { 'requests.storage': '10Gi' })],
      expected: { used: { q: { 'requests.storage': '20Gi' } } },
    },
  ]);
});
