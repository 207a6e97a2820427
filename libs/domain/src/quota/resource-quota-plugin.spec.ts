import { describe, expect, it } from 'vitest';
import type {
  GroupResource,
  KubeObject,
  Operation,
  PersistentVolumeClaim,
  Pod,
  ResourceQuotaSpec,
  ScopedResourceSelectorRequirement,
  Service,
} from '../kube/types.js';
import { formatResourceList, resourceList } from '../resources/resource-list.js';
import { checkQuota } from './resource-quota-plugin.js';
import type { LimitedResource, QuotaCheckInput, QuotaDecision, QuotaSnapshot } from './check.js';
import { forbiddenMessage, isForbidden, renderDenial } from './denial.js';

/*
 * Kubernetes' plugin/pkg/admission/resourcequota/admission_test.go, ported as data: each
 * case is (quotas, object, old object, operation, limitedResources) → the refusal message,
 * or the new usage of every quota the request is charged to (what the Go tests read back
 * from the quota status update; `{}` where they expect no update).
 */

const PODS: GroupResource = { group: '', resource: 'pods' };
const SERVICES: GroupResource = { group: '', resource: 'services' };
const PVCS: GroupResource = { group: '', resource: 'persistentvolumeclaims' };

type Raw = Record<string, string>;

/** A list of cpu and memory, leaving out the empty ones (the Go tests' getResourceList). */
const cpuMem = (cpu: string, memory: string): Raw => ({ ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) });

interface PodOptions {
  readonly priorityClassName?: string;
  readonly activeDeadlineSeconds?: number;
  readonly namespace?: string | null;
  readonly affinity?: NonNullable<Pod['spec']>['affinity'];
}

/** A one-container pod in namespace "test" (the Go tests' validPod / validPodWithPriority). */
function pod(name: string, requests: Raw, limits: Raw, options: PodOptions = {}): Pod {
  const namespace = options.namespace === undefined ? 'test' : options.namespace;
  return {
    metadata: { name, ...(namespace === null ? {} : { namespace }) },
    spec: {
      containers: [{ name: 'app', image: 'foo:V0', resources: { requests, limits } }],
      ...(options.priorityClassName ? { priorityClassName: options.priorityClassName } : {}),
      ...(options.activeDeadlineSeconds === undefined ? {} : { activeDeadlineSeconds: options.activeDeadlineSeconds }),
      ...(options.affinity ? { affinity: options.affinity } : {}),
    },
  };
}

const service = (resourceVersion: string | undefined, type: string, ports: number[] = []): Service => ({
  metadata: { name: 'service', namespace: 'test', ...(resourceVersion === undefined ? {} : { resourceVersion }) },
  spec: { type, ...(ports.length > 0 ? { ports: ports.map((port) => ({ port })) } : {}) },
});

const pvc = (name: string, storage: string, resourceVersion?: string): PersistentVolumeClaim => ({
  metadata: { name, namespace: 'test', ...(resourceVersion === undefined ? {} : { resourceVersion }) },
  spec: { resources: { requests: { storage }, limits: {} } },
});

const quota = (name: string, hard: Raw, used: Raw, spec: Omit<ResourceQuotaSpec, 'hard'> = {}): QuotaSnapshot => ({
  name,
  spec: { ...spec, hard },
  used: resourceList(used),
});

/** A quota with neither limits nor scopes (the Go tests' `&corev1.ResourceQuota{}`). */
const EMPTY_QUOTA = quota('', {}, {});

const selector = (scopeName: string, operator: string, values?: string[]): ScopedResourceSelectorRequirement => ({
  scopeName,
  operator,
  ...(values ? { values } : {}),
});

const scopedBy = (...matchExpressions: ScopedResourceSelectorRequirement[]) => ({ scopeSelector: { matchExpressions } });

const limitPods = (entry: Omit<LimitedResource, 'resource'>): LimitedResource => ({ resource: 'pods', ...entry });

type Outcome = { denied: string } | { used: Record<string, Raw> };

const outcome = (decision: QuotaDecision): Outcome =>
  decision.allowed
    ? { used: Object.fromEntries(decision.charges.map((c) => [c.quota, formatResourceList(c.used)])) }
    : { denied: renderDenial(decision.denial) };

interface Case {
  readonly name: string;
  readonly operation?: Operation;
  readonly resource?: GroupResource;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly object: KubeObject;
  readonly oldObject?: KubeObject;
  readonly quotas: QuotaSnapshot[];
  readonly limitedResources?: LimitedResource[];
  readonly expected: Outcome;
}

const decide = (c: Case): QuotaDecision => {
  const input: QuotaCheckInput = {
    operation: c.operation ?? 'CREATE',
    groupResource: c.resource ?? PODS,
    object: c.object,
    quotas: c.quotas,
    namespace: c.namespace ?? 'test',
    ...(c.subresource === undefined ? {} : { subresource: c.subresource }),
    ...(c.oldObject === undefined ? {} : { oldObject: c.oldObject }),
    ...(c.limitedResources === undefined ? {} : { limitedResources: c.limitedResources }),
  };
  return checkQuota(input);
};

const runCases = (cases: Case[]) =>
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(outcome(decide(c))).toEqual(c.expected);
  });

const computeQuota = (name = 'quota', spec: Omit<ResourceQuotaSpec, 'hard'> = {}) =>
  quota(name, { cpu: '3', memory: '100Gi', pods: '5' }, { cpu: '1', memory: '50Gi', pods: '3' }, spec);

const serviceQuota = () =>
  quota(
    'quota',
    { services: '10', 'services.loadbalancers': '10', 'services.nodeports': '10' },
    { services: '1', 'services.loadbalancers': '1', 'services.nodeports': '0' },
  );

const pvcQuota = () =>
  quota('quota', { persistentvolumeclaims: '3', 'requests.storage': '100Gi' }, { persistentvolumeclaims: '1', 'requests.storage': '10Gi' });

describe('quota admission: operations that are never charged', () => {
  runCases([
    // TestAdmissionIgnoresDelete
    { name: 'admits every DELETE', operation: 'DELETE', object: {}, quotas: [], expected: { used: {} } },
    // TestAdmissionIgnoresSubresources
    {
      name: 'denies a pod CREATE that exceeds the quota',
      object: pod('123', cpuMem('100m', '2Gi'), {}),
      quotas: [quota('quota', { memory: '2Gi' }, { memory: '1Gi' })],
      expected: { denied: 'exceeded quota: quota, requested: memory=2Gi, used: memory=1Gi, limited: memory=2Gi' },
    },
    {
      name: 'admits the same CREATE sent to a subresource',
      subresource: 'subresource',
      object: pod('123', cpuMem('100m', '2Gi'), {}),
      quotas: [quota('quota', { memory: '2Gi' }, { memory: '1Gi' })],
      expected: { used: {} },
    },
    {
      name: 'admits an event without looking at quotas, events being ignored by quota',
      resource: { group: '', resource: 'events' },
      object: { metadata: { name: 'e', namespace: 'test' } },
      quotas: [quota('quota', { 'count/events': '0' }, { 'count/events': '0' })],
      expected: { used: {} },
    },
  ]);
});

describe('quota admission: pods within and over the limits', () => {
  runCases([
    // TestAdmitBelowQuotaLimit (and the first half of TestAdmitDryRun: the decision is the same)
    {
      name: 'admits a pod below the limits and charges its requests',
      object: pod('allowed-pod', cpuMem('100m', '2Gi'), {}),
      quotas: [computeQuota()],
      expected: { used: { quota: { cpu: '1100m', memory: '52Gi', pods: '4' } } },
    },
    // TestAdmitDryRun (second half)
    {
      name: 'denies a pod whose memory would exceed the quota',
      object: pod('too-large-pod', cpuMem('100m', '60Gi'), {}),
      quotas: [computeQuota()],
      expected: { denied: 'exceeded quota: quota, requested: memory=60Gi, used: memory=50Gi, limited: memory=100Gi' },
    },
    // TestAdmitExceedQuotaLimit
    {
      name: 'denies a pod whose cpu would exceed the quota',
      object: pod('not-allowed-pod', cpuMem('3', '2Gi'), {}),
      quotas: [computeQuota()],
      expected: { denied: 'exceeded quota: quota, requested: cpu=3, used: cpu=1, limited: cpu=3' },
    },
    // TestAdmitEnforceQuotaConstraints
    {
      name: 'denies a pod that omits a memory limit the quota tracks',
      object: pod('not-allowed-pod', cpuMem('100m', '2Gi'), cpuMem('200m', '')),
      quotas: [
        quota(
          'quota',
          { cpu: '3', memory: '100Gi', 'limits.memory': '200Gi', pods: '5' },
          { cpu: '1', memory: '50Gi', 'limits.memory': '100Gi', pods: '3' },
        ),
      ],
      expected: { denied: 'failed quota: quota: must specify limits.memory for: app' },
    },
    // TestAdmitPodInNamespaceWithoutQuota (the quota lives in another namespace, so none is given)
    {
      name: 'admits a pod in a namespace without quota',
      object: pod('allowed-pod', cpuMem('100m', '2Gi'), cpuMem('200m', '')),
      quotas: [],
      expected: { used: {} },
    },
    // TestAdmissionSetsMissingNamespace
    {
      name: 'admits a pod that does not name its namespace, charging the request namespace',
      object: pod('pod-without-namespace', cpuMem('1', '2Gi'), {}, { namespace: null }),
      quotas: [quota('quota', { pods: '3' }, { pods: '1' })],
      expected: { used: { quota: { pods: '2' } } },
    },
    // TestAdmitWhenUnrelatedResourceExceedsQuota
    {
      name: 'admits a pod although services are already over their limit',
      object: pod('allowed-pod', {}, {}),
      quotas: [quota('quota', { services: '3', pods: '4' }, { services: '4', pods: '1' })],
      expected: { used: { quota: { services: '4', pods: '2' } } },
    },
  ]);

  it('words an exceeded quota as a Forbidden status for the pod', () => {
    const object = pod('too-large-pod', cpuMem('100m', '60Gi'), {});
    const decision = decide({ name: '', object, quotas: [computeQuota()], expected: { used: {} } });
    expect(decision.allowed).toBe(false);
    if (decision.allowed) return;
    expect(isForbidden(decision.denial)).toBe(true);
    expect(forbiddenMessage(PODS, 'too-large-pod', decision.denial)).toBe(
      'pods "too-large-pod" is forbidden: exceeded quota: quota, requested: memory=60Gi, used: memory=50Gi, limited: memory=100Gi',
    );
  });
});

describe('quota admission: scoped quotas', () => {
  runCases([
    // TestAdmitBelowTerminatingQuotaLimit
    {
      name: 'charges a pod with an active deadline to the Terminating quota only',
      object: pod('allowed-pod', cpuMem('100m', '2Gi'), {}, { activeDeadlineSeconds: 30 }),
      quotas: [
        computeQuota('quota-non-terminating', { scopes: ['NotTerminating'] }),
        computeQuota('quota-terminating', { scopes: ['Terminating'] }),
      ],
      expected: { used: { 'quota-terminating': { cpu: '1100m', memory: '52Gi', pods: '4' } } },
    },
    // TestAdmitBelowBestEffortQuotaLimit
    {
      name: 'charges a best-effort pod to the BestEffort quota only',
      object: pod('allowed-pod', {}, {}),
      quotas: [
        quota('quota-besteffort', { pods: '5' }, { pods: '3' }, { scopes: ['BestEffort'] }),
        quota('quota-not-besteffort', { pods: '5' }, { pods: '3' }, { scopes: ['NotBestEffort'] }),
      ],
      expected: { used: { 'quota-besteffort': { pods: '4' } } },
    },
    // TestAdmitBestEffortQuotaLimitIgnoresBurstable
    {
      name: 'does not charge a burstable pod to a BestEffort quota',
      object: pod('allowed-pod', cpuMem('100m', '1Gi'), {}),
      quotas: [quota('quota-besteffort', { pods: '5' }, { pods: '3' }, { scopes: ['BestEffort'] })],
      expected: { used: {} },
    },
  ]);
});

describe('quota admission: updates charge only what they add', () => {
  runCases([
    // TestAdmitHandlesOldObjects
    {
      name: 'charges a load balancer turned node port for the node port, not crediting the load balancer',
      operation: 'UPDATE',
      resource: SERVICES,
      object: service(undefined, 'NodePort', [1234]),
      oldObject: service('1', 'LoadBalancer'),
      quotas: [serviceQuota()],
      expected: { used: { quota: { services: '1', 'services.loadbalancers': '1', 'services.nodeports': '1' } } },
    },
    // TestAdmitHandlesCreatingUpdates
    {
      name: 'charges an update whose old object was never stored as a create',
      operation: 'UPDATE',
      resource: SERVICES,
      object: service(undefined, 'NodePort', [1234]),
      oldObject: service('', 'LoadBalancer'),
      quotas: [serviceQuota()],
      expected: { used: { quota: { services: '2', 'services.loadbalancers': '1', 'services.nodeports': '1' } } },
    },
    // TestAdmitHandlesNegativePVCUpdates
    {
      name: 'does not touch the quota when a claim shrinks',
      operation: 'UPDATE',
      resource: PVCS,
      object: pvc('pvc-to-update', '5Gi'),
      oldObject: pvc('pvc-to-update', '10Gi', '1'),
      quotas: [pvcQuota()],
      expected: { used: {} },
    },
    // TestAdmitHandlesPVCUpdates
    {
      name: 'charges a claim that grows for the growth only',
      operation: 'UPDATE',
      resource: PVCS,
      object: pvc('pvc-to-update', '15Gi'),
      oldObject: pvc('pvc-to-update', '10Gi', '1'),
      quotas: [pvcQuota()],
      expected: { used: { quota: { persistentvolumeclaims: '1', 'requests.storage': '15Gi' } } },
    },
    {
      name: 'denies an update that comes without the stored object',
      operation: 'UPDATE',
      resource: PVCS,
      object: pvc('pvc-to-update', '15Gi'),
      quotas: [pvcQuota()],
      expected: { denied: 'unable to get previous usage since prior version of object was not found' },
    },
  ]);
});

describe('quota admission: negative usage', () => {
  // TestAdmitRejectsNegativeUsage
  runCases([
    {
      name: 'denies a claim requesting negative storage',
      resource: PVCS,
      object: pvc('not-allowed-pvc', '-1Gi'),
      quotas: [pvcQuota()],
      expected: { denied: 'quota usage is negative for resource(s): requests.storage' },
    },
    {
      name: 'admits a claim requesting positive storage',
      resource: PVCS,
      object: pvc('not-allowed-pvc', '1Gi'),
      quotas: [pvcQuota()],
      expected: { used: { quota: { persistentvolumeclaims: '2', 'requests.storage': '11Gi' } } },
    },
  ]);
});

describe('quota admission: limitedResources by resource name', () => {
  runCases([
    // TestAdmitLimitedResourceNoQuota
    {
      name: 'denies consuming limited cpu without any quota',
      object: pod('not-allowed-pod', cpuMem('3', '2Gi'), {}),
      quotas: [],
      limitedResources: [limitPods({ matchContains: ['cpu'] })],
      expected: { denied: 'insufficient quota to consume: cpu,requests.cpu' },
    },
    // TestAdmitLimitedResourceNoQuotaIgnoresNonMatchingResources
    {
      name: 'admits a pod when only services are limited',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}),
      quotas: [],
      limitedResources: [{ resource: 'services', matchContains: ['services'] }],
      expected: { used: {} },
    },
    // TestAdmitLimitedResourceWithQuota
    {
      name: 'admits consuming limited requests.cpu under a quota that limits it',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}),
      quotas: [quota('quota', { 'requests.cpu': '10' }, { 'requests.cpu': '1' })],
      limitedResources: [limitPods({ matchContains: ['requests.cpu'] })],
      expected: { used: { quota: { 'requests.cpu': '4' } } },
    },
    // TestAdmitLimitedResourceWithMultipleQuota
    {
      name: 'admits consuming limited requests.cpu when one of several quotas limits it',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}),
      quotas: [quota('quota1', { 'requests.cpu': '10' }, { 'requests.cpu': '1' }), quota('quota2', { memory: '10Gi' }, { memory: '1Gi' })],
      limitedResources: [limitPods({ matchContains: ['requests.cpu'] })],
      expected: { used: { quota1: { 'requests.cpu': '4' }, quota2: { memory: '3Gi' } } },
    },
    // TestAdmitLimitedResourceWithQuotaThatDoesNotCover
    {
      name: 'denies consuming limited cpu under a quota that limits memory only',
      object: pod('not-allowed-pod', cpuMem('3', '2Gi'), {}),
      quotas: [quota('quota', { memory: '10Gi' }, { memory: '1Gi' })],
      limitedResources: [limitPods({ matchContains: ['cpu'] })],
      expected: { denied: 'insufficient quota to consume: cpu,requests.cpu' },
    },
    // TestAdmitZeroDeltaUsageWithoutCoveringQuota
    {
      name: 'admits an unchanged load balancer without a covering quota',
      operation: 'UPDATE',
      resource: SERVICES,
      object: service(undefined, 'LoadBalancer'),
      oldObject: service('1', 'LoadBalancer'),
      quotas: [],
      limitedResources: [{ resource: 'services', matchContains: ['services.loadbalancers'] }],
      expected: { used: {} },
    },
    // TestAdmitRejectIncreaseUsageWithoutCoveringQuota
    {
      name: 'denies turning a node port into a load balancer without a covering quota',
      operation: 'UPDATE',
      resource: SERVICES,
      object: service(undefined, 'LoadBalancer'),
      oldObject: service('1', 'NodePort', [1234]),
      quotas: [],
      limitedResources: [{ resource: 'services', matchContains: ['services.loadbalancers'] }],
      expected: { denied: 'insufficient quota to consume: services.loadbalancers' },
    },
    // TestAdmitAllowDecreaseUsageWithoutCoveringQuota
    {
      name: 'admits turning a load balancer into a node port without a covering quota',
      operation: 'UPDATE',
      resource: SERVICES,
      object: service(undefined, 'NodePort', [1234]),
      oldObject: service('1', 'LoadBalancer'),
      quotas: [],
      limitedResources: [{ resource: 'services', matchContains: ['services.loadbalancers'] }],
      expected: { used: {} },
    },
  ]);
});

describe('quota admission: limitedResources by scope (PriorityClass and BestEffort)', () => {
  // TestAdmitLimitedScopeWithCoverQuota, case by case.
  const priorityExists = selector('PriorityClass', 'Exists');
  const bestEffort = selector('BestEffort', 'Exists');
  const priorityIn = (...values: string[]) => selector('PriorityClass', 'In', values);
  const bestEffortAndClusterServices = [
    limitPods({ matchScopes: [bestEffort] }),
    limitPods({ matchScopes: [priorityIn('cluster-services')] }),
  ];
  const limitedPriorityIn = [limitPods({ matchScopes: [priorityIn('another-priorityclass-name', 'cluster-services')] })];
  const besteffortQuota = () => quota('quota-besteffort', { pods: '5' }, { pods: '3' }, { scopes: ['BestEffort'] });

  runCases([
    {
      name: 'admits a pod with a priority class when a quota scope covers PriorityClass Exists',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'fake-priority' }),
      quotas: [quota('quota', {}, {}, scopedBy(priorityExists))],
      limitedResources: [limitPods({ matchScopes: [priorityExists] })],
      expected: { used: {} },
    },
    {
      name: 'denies limited requests.cpu that the covering scope quota does not limit',
      object: pod('not-allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'fake-priority' }),
      quotas: [quota('quota', {}, {}, scopedBy(priorityExists))],
      limitedResources: [limitPods({ matchScopes: [priorityExists], matchContains: ['requests.cpu'] })],
      expected: { denied: 'insufficient quota to consume: requests.cpu' },
    },
    {
      name: 'denies a pod with a priority class when no quota covers PriorityClass Exists',
      object: pod('not-allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'fake-priority' }),
      quotas: [EMPTY_QUOTA],
      limitedResources: [limitPods({ matchScopes: [priorityExists] })],
      expected: { denied: 'insufficient quota to match these scopes: [{PriorityClass Exists []}]' },
    },
    {
      name: 'denies a best-effort pod when no quota covers BestEffort',
      object: pod('not-allowed-pod', {}, {}, { priorityClassName: 'fake-priority' }),
      quotas: [EMPTY_QUOTA],
      limitedResources: [limitPods({ matchScopes: [bestEffort] })],
      expected: { denied: 'insufficient quota to match these scopes: [{BestEffort Exists []}]' },
    },
    {
      name: 'admits a best-effort pod when a BestEffort quota covers it, charging that quota',
      object: pod('allowed-pod', {}, {}, { priorityClassName: 'fake-priority' }),
      quotas: [besteffortQuota()],
      limitedResources: [limitPods({ matchScopes: [bestEffort] })],
      expected: { used: { 'quota-besteffort': { pods: '4' } } },
    },
    {
      name: 'admits a pod in neither of two limited scopes',
      object: pod('allowed-pod', cpuMem('100m', '1Gi'), {}, { priorityClassName: 'fake-priority' }),
      quotas: [EMPTY_QUOTA],
      limitedResources: bestEffortAndClusterServices,
      expected: { used: {} },
    },
    {
      name: 'denies a pod in the limited BestEffort scope only, without a covering quota',
      object: pod('allowed-pod', {}, {}, { priorityClassName: 'fake-priority' }),
      quotas: [EMPTY_QUOTA],
      limitedResources: bestEffortAndClusterServices,
      expected: { denied: 'insufficient quota to match these scopes: [{BestEffort Exists []}]' },
    },
    {
      name: 'denies a pod in the limited PriorityClass scope only, without a covering quota',
      object: pod('allowed-pod', cpuMem('100m', '1Gi'), {}, { priorityClassName: 'cluster-services' }),
      quotas: [EMPTY_QUOTA],
      limitedResources: bestEffortAndClusterServices,
      expected: { denied: 'insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]' },
    },
    {
      name: 'denies a pod in both limited scopes, listing both',
      object: pod('allowed-pod', {}, {}, { priorityClassName: 'cluster-services' }),
      quotas: [EMPTY_QUOTA],
      limitedResources: bestEffortAndClusterServices,
      expected: { denied: 'insufficient quota to match these scopes: [{BestEffort Exists []} {PriorityClass In [cluster-services]}]' },
    },
    {
      name: 'denies a pod in both limited scopes when only BestEffort is covered',
      object: pod('allowed-pod', {}, {}, { priorityClassName: 'cluster-services' }),
      quotas: [besteffortQuota()],
      limitedResources: bestEffortAndClusterServices,
      expected: { denied: 'insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]' },
    },
    {
      name: 'denies a pod in both limited scopes when only PriorityClass is covered',
      object: pod('allowed-pod', {}, {}, { priorityClassName: 'cluster-services' }),
      quotas: [quota('quota', {}, {}, scopedBy(priorityIn('cluster-services')))],
      limitedResources: bestEffortAndClusterServices,
      expected: { denied: 'insufficient quota to match these scopes: [{BestEffort Exists []}]' },
    },
    {
      name: 'admits a pod in both limited scopes when both are covered',
      object: pod('allowed-pod', {}, {}, { priorityClassName: 'cluster-services' }),
      quotas: [besteffortQuota(), quota('quota', {}, {}, scopedBy(priorityIn('cluster-services')))],
      limitedResources: bestEffortAndClusterServices,
      expected: { used: { 'quota-besteffort': { pods: '4' } } },
    },
    {
      name: 'admits a pod with a priority class when no scope is limited',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'fake-priority' }),
      quotas: [EMPTY_QUOTA],
      limitedResources: [],
      expected: { used: {} },
    },
    {
      name: 'still enforces the hard limits of the covering quota',
      object: pod('not-allowed-pod', cpuMem('3', '20Gi'), {}, { priorityClassName: 'fake-priority' }),
      quotas: [quota('quota', { memory: '10Gi' }, { memory: '1Gi' }, scopedBy(priorityExists))],
      limitedResources: [limitPods({ matchScopes: [priorityExists] })],
      expected: { denied: 'exceeded quota: quota, requested: memory=20Gi, used: memory=1Gi, limited: memory=10Gi' },
    },
    {
      name: 'admits a pod whose priority class is not the limited one',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'fake-priority' }),
      quotas: [quota('quota', {}, {}, scopedBy(priorityIn('cluster-services')))],
      limitedResources: [limitPods({ matchScopes: [priorityIn('cluster-services')] })],
      expected: { used: {} },
    },
    {
      name: 'admits a pod of a limited priority class when a quota scope covers that class',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'cluster-services' }),
      quotas: [quota('quota', {}, {}, scopedBy(priorityIn('cluster-services')))],
      limitedResources: limitedPriorityIn,
      expected: { used: {} },
    },
    {
      name: 'denies a pod of a limited priority class when the quota scope names another class',
      object: pod('not-allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'cluster-services' }),
      quotas: [quota('quota', {}, {}, scopedBy(priorityIn('another-priorityclass-name')))],
      limitedResources: limitedPriorityIn,
      expected: { denied: 'insufficient quota to match these scopes: [{PriorityClass In [another-priorityclass-name cluster-services]}]' },
    },
    {
      name: 'admits a pod of the class that the quota scope names',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'another-priorityclass-name' }),
      quotas: [quota('quota', {}, {}, scopedBy(priorityIn('another-priorityclass-name')))],
      limitedResources: limitedPriorityIn,
      expected: { used: {} },
    },
    {
      name: 'denies a pod of a limited priority class with no covering quota',
      object: pod('not-allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'cluster-services' }),
      quotas: [EMPTY_QUOTA],
      limitedResources: limitedPriorityIn,
      expected: { denied: 'insufficient quota to match these scopes: [{PriorityClass In [another-priorityclass-name cluster-services]}]' },
    },
    {
      name: 'admits a pod of a limited priority class covered by a PriorityClass Exists quota scope',
      object: pod('allowed-pod', cpuMem('3', '2Gi'), {}, { priorityClassName: 'cluster-services' }),
      quotas: [quota('quota', {}, {}, scopedBy(priorityExists))],
      limitedResources: limitedPriorityIn,
      expected: { used: {} },
    },
  ]);

  it('answers an uncovered scope as a bare error, not Forbidden, as Kubernetes does', () => {
    const decision = decide({
      name: '',
      object: pod('p', {}, {}),
      quotas: [EMPTY_QUOTA],
      limitedResources: [limitPods({ matchScopes: [bestEffort] })],
      expected: { used: {} },
    });
    expect(!decision.allowed && isForbidden(decision.denial)).toBe(false);
  });
});

describe('quota admission: CrossNamespacePodAffinity', () => {
  // Kubernetes recommends limiting this scope so only namespaces granted a quota may use
  // cross-namespace affinity; these cases follow that setup.
  const crossNamespace = selector('CrossNamespacePodAffinity', 'Exists');
  const affinityTo = (namespaces: string[]) => ({
    podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaces, topologyKey: 'kubernetes.io/hostname' }] },
  });
  const antiAffinityAnyNamespace = {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [{ podAffinityTerm: { namespaceSelector: {}, topologyKey: 'zone' } }],
    },
  };
  const limited = [limitPods({ matchScopes: [crossNamespace] })];
  const crossQuota = () => quota('cross-ns', { pods: '10' }, { pods: '0' }, { scopes: ['CrossNamespacePodAffinity'] });

  runCases([
    {
      name: 'charges a pod with affinity to other namespaces to a CrossNamespacePodAffinity quota',
      object: pod('p', {}, {}, { affinity: affinityTo(['other']) }),
      quotas: [crossQuota()],
      expected: { used: { 'cross-ns': { pods: '1' } } },
    },
    {
      name: 'does not charge a pod without cross-namespace affinity to that quota',
      object: pod('p', {}, {}, { affinity: affinityTo([]) }),
      quotas: [crossQuota()],
      expected: { used: {} },
    },
    {
      name: 'denies cross-namespace affinity when that scope is limited and no quota covers it',
      object: pod('p', {}, {}, { affinity: antiAffinityAnyNamespace }),
      quotas: [],
      limitedResources: limited,
      expected: { denied: 'insufficient quota to match these scopes: [{CrossNamespacePodAffinity Exists []}]' },
    },
    {
      name: 'admits cross-namespace affinity when a quota covers the limited scope',
      object: pod('p', {}, {}, { affinity: antiAffinityAnyNamespace }),
      quotas: [crossQuota()],
      limitedResources: limited,
      expected: { used: { 'cross-ns': { pods: '1' } } },
    },
    {
      name: 'denies cross-namespace affinity once the covering quota is full',
      object: pod('p', {}, {}, { affinity: affinityTo(['other']) }),
      quotas: [quota('cross-ns', { pods: '1' }, { pods: '1' }, { scopes: ['CrossNamespacePodAffinity'] })],
      limitedResources: limited,
      expected: { denied: 'exceeded quota: cross-ns, requested: pods=1, used: pods=1, limited: pods=1' },
    },
    {
      name: 'admits a pod without cross-namespace affinity when that scope is limited',
      object: pod('p', {}, {}),
      quotas: [],
      limitedResources: limited,
      expected: { used: {} },
    },
  ]);
});

describe('quota admission: in-place pod resize', () => {
  const resized = (cpu: string) => ({ ...pod('p', { cpu }, { cpu }), metadata: { name: 'p', namespace: 'test', resourceVersion: '5' } });

  runCases([
    {
      name: 'charges a resize for the added cpu',
      operation: 'UPDATE',
      subresource: 'resize',
      object: pod('p', { cpu: '2' }, { cpu: '2' }),
      oldObject: resized('1'),
      quotas: [quota('quota', { 'requests.cpu': '4', 'limits.cpu': '4' }, { 'requests.cpu': '1', 'limits.cpu': '1' })],
      expected: { used: { quota: { 'requests.cpu': '2', 'limits.cpu': '2' } } },
    },
    {
      name: 'denies a resize past the quota',
      operation: 'UPDATE',
      subresource: 'resize',
      object: pod('p', { cpu: '5' }, { cpu: '5' }),
      oldObject: resized('1'),
      quotas: [quota('quota', { 'requests.cpu': '4' }, { 'requests.cpu': '1' })],
      expected: { denied: 'exceeded quota: quota, requested: requests.cpu=4, used: requests.cpu=1, limited: requests.cpu=4' },
    },
    {
      name: 'does not charge a plain pod update',
      operation: 'UPDATE',
      object: pod('p', { cpu: '5' }, { cpu: '5' }),
      oldObject: resized('1'),
      quotas: [quota('quota', { 'requests.cpu': '4' }, { 'requests.cpu': '1' })],
      expected: { used: {} },
    },
  ]);
});
