import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { fold } from '../events/fold.js';
import type { GroupResource, KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import type { AdmitObject } from '../namespace/commands.js';
import { decide } from '../namespace/decide.js';
import { emptyFacts } from '../namespace/facts.js';
import type { AdmissionPlugin } from '../namespace/plugins.js';
import type { LimitedResource } from './check.js';

/*
 * Kubernetes' limitedResources cases (plugin/pkg/admission/resourcequota/admission_test.go:
 * TestAdmitLimitedResource*, TestAdmitLimitedScopeWithCoverQuota, the *WithoutCoveringQuota
 * updates) as the service runs them: through the namespace decider, with the configuration the
 * admission API hands every admission (ADMISSION_CONFIG_FILE). quota/resource-quota-plugin.spec.ts ports the
 * same tables against the quota check alone; these add what only the whole chain decides: a
 * namespace where the ledger holds no quota at all (the Go tests' "no quota" is such a namespace,
 * which the service otherwise admits unmanaged), one holding only a LimitRange, the answer kind
 * (logged or not), that nothing is reserved on a denial, the API group of an entry, and the
 * configuration left unused while ResourceQuota is disabled.
 */

const T0 = Date.UTC(2026, 0, 1);
const NS = 'test';
const PODS: GroupResource = { group: '', resource: 'pods' };
const SERVICES: GroupResource = { group: '', resource: 'services' };
const DEPLOYMENTS: GroupResource = { group: 'apps', resource: 'deployments' };

type Raw = Record<string, string>;

const pod = (name: string, requests: Raw, priorityClassName?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, uid: `uid-${name}` },
  spec: {
    containers: [{ name: 'app', image: 'foo:V0', resources: { requests, limits: {} } }],
    ...(priorityClassName ? { priorityClassName } : {}),
  },
});

const service = (type: string, resourceVersion?: string, ports: number[] = []): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'service', namespace: NS, uid: 'uid-service', ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { type, ...(ports.length > 0 ? { ports: ports.map((port) => ({ port })) } : {}) },
});

const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: NS, uid: 'uid-web' },
  spec: {},
};

const quota = (name: string, hard: Raw, spec: object = {}): LedgerEvent => ({
  type: 'QuotaDefined',
  data: { name, spec: { ...spec, hard } },
});
const limitRange: LedgerEvent = {
  type: 'LimitRangeDefined',
  data: { name: 'limits', spec: { limits: [{ type: 'PersistentVolumeClaim', max: { storage: '10Gi' } }] } },
};

const scope = (scopeName: string, operator: string, values?: string[]): ScopedResourceSelectorRequirement => ({
  scopeName,
  operator,
  ...(values ? { values } : {}),
});

interface Case {
  readonly name: string;
  /** The namespace's ledger: [] is a namespace the ledger never managed (no quota, no limit range). */
  readonly given: readonly LedgerEvent[];
  readonly limited: readonly LimitedResource[];
  readonly resource?: GroupResource;
  readonly operation?: Operation;
  readonly object: KubeObject;
  readonly oldObject?: KubeObject;
  readonly plugins?: readonly AdmissionPlugin[];
  /** The message of the denial, or 'admitted'. */
  readonly expected: string;
}

function run(c: Case) {
  const state = fold(c.given.map((event, i) => ({ ...event, version: i + 1, at: T0 + i })));
  const command: AdmitObject = {
    type: 'AdmitObject',
    request: {
      operation: c.operation ?? 'CREATE',
      groupResource: c.resource ?? PODS,
      namespace: NS,
      name: c.object.metadata?.name ?? '',
      object: c.object,
      ...(c.oldObject ? { oldObject: c.oldObject } : {}),
    },
    reservationId: 'r-new',
    dryRun: false,
    limitedResources: c.limited,
    ...(c.plugins ? { plugins: c.plugins } : {}),
  };
  return decide(command, emptyFacts(NS, T0 + 60_000, state));
}

const limitPods = (entry: Omit<LimitedResource, 'resource'>): LimitedResource => ({ resource: 'pods', ...entry });
const noQuota: readonly LedgerEvent[] = [];

describe('limitedResources, as the whole admission chain decides them', () => {
  it.each<Case>([
    // TestAdmitLimitedResourceNoQuota
    {
      name: 'denies consuming limited cpu in a namespace the ledger never managed',
      given: noQuota,
      limited: [limitPods({ matchContains: ['cpu'] })],
      object: pod('not-allowed-pod', { cpu: '3', memory: '2Gi' }),
      expected: 'pods "not-allowed-pod" is forbidden: insufficient quota to consume: cpu,requests.cpu',
    },
    {
      name: 'denies consuming limited cpu in a namespace holding only a LimitRange',
      given: [limitRange],
      limited: [limitPods({ matchContains: ['cpu'] })],
      object: pod('not-allowed-pod', { cpu: '3', memory: '2Gi' }),
      expected: 'pods "not-allowed-pod" is forbidden: insufficient quota to consume: cpu,requests.cpu',
    },
    // TestAdmitLimitedResourceNoQuotaIgnoresNonMatchingResources
    {
      name: 'admits a pod in an unmanaged namespace when only services are limited',
      given: noQuota,
      limited: [{ resource: 'services', matchContains: ['services'] }],
      object: pod('allowed-pod', { cpu: '3', memory: '2Gi' }),
      expected: 'admitted',
    },
    // TestAdmitLimitedResourceWithQuota
    {
      name: 'admits limited requests.cpu under a quota that limits it',
      given: [quota('quota', { 'requests.cpu': '10' })],
      limited: [limitPods({ matchContains: ['requests.cpu'] })],
      object: pod('allowed-pod', { cpu: '3', memory: '2Gi' }),
      expected: 'admitted',
    },
    // TestAdmitLimitedResourceWithMultipleQuota
    {
      name: 'admits limited requests.cpu when one of two quotas limits it',
      given: [quota('quota1', { 'requests.cpu': '10' }), quota('quota2', { memory: '10Gi' })],
      limited: [limitPods({ matchContains: ['requests.cpu'] })],
      object: pod('allowed-pod', { cpu: '3', memory: '2Gi' }),
      expected: 'admitted',
    },
    // TestAdmitLimitedResourceWithQuotaThatDoesNotCover
    {
      name: 'denies limited cpu under a quota that limits memory only',
      given: [quota('quota', { memory: '10Gi' })],
      limited: [limitPods({ matchContains: ['cpu'] })],
      object: pod('not-allowed-pod', { cpu: '3', memory: '2Gi' }),
      expected: 'pods "not-allowed-pod" is forbidden: insufficient quota to consume: cpu,requests.cpu',
    },
    // TestAdmitZeroDeltaUsageWithoutCoveringQuota: where the ledger holds nothing, an update is judged by its increase over oldObject, as Kubernetes judges it
    {
      name: 'admits an unchanged load balancer in an unmanaged namespace',
      given: noQuota,
      limited: [{ resource: 'services', matchContains: ['services.loadbalancers'] }],
      resource: SERVICES,
      operation: 'UPDATE',
      object: service('LoadBalancer'),
      oldObject: service('LoadBalancer', '1'),
      expected: 'admitted',
    },
    // TestAdmitRejectIncreaseUsageWithoutCoveringQuota
    {
      name: 'denies turning a node port into a load balancer in an unmanaged namespace',
      given: noQuota,
      limited: [{ resource: 'services', matchContains: ['services.loadbalancers'] }],
      resource: SERVICES,
      operation: 'UPDATE',
      object: service('LoadBalancer'),
      oldObject: service('NodePort', '1', [1234]),
      expected: 'services "service" is forbidden: insufficient quota to consume: services.loadbalancers',
    },
    // TestAdmitAllowDecreaseUsageWithoutCoveringQuota
    {
      name: 'admits turning a load balancer into a node port in an unmanaged namespace',
      given: noQuota,
      limited: [{ resource: 'services', matchContains: ['services.loadbalancers'] }],
      resource: SERVICES,
      operation: 'UPDATE',
      object: service('NodePort', undefined, [1234]),
      oldObject: service('LoadBalancer', '1'),
      expected: 'admitted',
    },
    // TestAdmitLimitedScopeWithCoverQuota, "Covering quota does not exist for configured limited scope resourceQuotaBestEffort"
    {
      name: 'denies a best-effort pod in an unmanaged namespace when BestEffort is limited',
      given: noQuota,
      limited: [limitPods({ matchScopes: [scope('BestEffort', 'Exists')] })],
      object: pod('not-allowed-pod', {}, 'fake-priority'),
      expected: 'pods "not-allowed-pod" is forbidden: insufficient quota to match these scopes: [{BestEffort Exists []}]',
    },
    // TestAdmitLimitedScopeWithCoverQuota, "Pod has limited priorityclass. Covering quota exists for configured limited scope PriorityClassIn."
    {
      name: 'admits a pod of a limited priority class where a quota scoped to that class exists',
      given: [
        quota('quota', { pods: '10' }, { scopeSelector: { matchExpressions: [scope('PriorityClass', 'In', ['cluster-services'])] } }),
      ],
      limited: [limitPods({ matchScopes: [scope('PriorityClass', 'In', ['another-priorityclass-name', 'cluster-services'])] })],
      object: pod('allowed-pod', { cpu: '3', memory: '2Gi' }, 'cluster-services'),
      expected: 'admitted',
    },
    // ... "Covering quota does NOT exist for configured limited scope PriorityClassIn."
    {
      name: 'denies a pod of a limited priority class where the only quota is unscoped',
      given: [quota('quota', { pods: '10' })],
      limited: [limitPods({ matchScopes: [scope('PriorityClass', 'In', ['another-priorityclass-name', 'cluster-services'])] })],
      object: pod('not-allowed-pod', { cpu: '3', memory: '2Gi' }, 'cluster-services'),
      expected:
        'pods "not-allowed-pod" is forbidden: insufficient quota to match these scopes: [{PriorityClass In [another-priorityclass-name cluster-services]}]',
    },
    // Beyond the Go tables: the entry's API group must be the request's (CheckRequest compares GroupResource).
    {
      name: 'denies a deployment when count/deployments.apps of the apps group is limited',
      given: noQuota,
      limited: [{ apiGroup: 'apps', resource: 'deployments', matchContains: ['count/deployments.apps'] }],
      resource: DEPLOYMENTS,
      object: deployment,
      expected: 'deployments.apps "web" is forbidden: insufficient quota to consume: count/deployments.apps',
    },
    {
      name: 'admits a deployment when the limited entry names the core group',
      given: noQuota,
      limited: [{ resource: 'deployments', matchContains: ['count/deployments.apps'] }],
      resource: DEPLOYMENTS,
      object: deployment,
      expected: 'admitted',
    },
    // The configuration belongs to the ResourceQuota plugin: disabled, it limits nothing.
    {
      name: 'admits limited cpu without a quota while ResourceQuota is disabled',
      given: noQuota,
      limited: [limitPods({ matchContains: ['cpu'] })],
      plugins: ['NamespaceLifecycle', 'LimitRanger'],
      object: pod('allowed-pod', { cpu: '3', memory: '2Gi' }),
      expected: 'admitted',
    },
  ])('$name', (c) => {
    const { events, answer } = run(c);
    const result = answer.kind === 'Refused' ? undefined : answer.result;
    if (c.expected === 'admitted') {
      expect(result?.allowed).toBe(true);
      return;
    }
    expect(result).toMatchObject({ allowed: false, message: c.expected, stage: 'ResourceQuota' });
    expect(events).toEqual([]);
    // A namespace the ledger manages logs the denial; elsewhere it is answered alone.
    expect(answer.kind).toBe(c.given.length > 0 ? 'Decided' : 'Unmanaged');
  });
});
