import { describe, expect, it } from 'vitest';
import type { ResourceQuotaSpec } from '../kube/types.js';
import type { RecordedEvent } from '../events/events.js';
import { fold } from '../events/fold.js';
import * as Resources from '../resources/resource-list.js';
import type { AdmissionView } from './admission-decision.js';
import { denialJson } from '../namespace/answers.js';
import { sharedQuotaKey, type SharedQuotaRef } from '../shared/shared-quota.js';
import { decideResources, defaultPodForAdmission, groupResourceForKind, type ResourceListRequest } from './rest.js';

type Quota = { name: string; spec: ResourceQuotaSpec; used?: Record<string, string> };

const list = (raw: Record<string, string>) => Resources.resourceList(raw);
/** Usage as the ledger's view holds it: an entry, zero or not, for each hard resource. */
const view = (quotas: readonly Quota[]): AdmissionView => ({
  quotas: quotas.map((q) => ({
    name: q.name,
    spec: q.spec,
    used: list({ ...Object.fromEntries(Object.keys(q.spec.hard ?? {}).map((r) => [r, '0'])), ...q.used }),
  })),
  limitRanges: [],
});
const command = (resources: Record<string, string>, extra: Partial<ResourceListRequest> = {}): ResourceListRequest => ({
  namespace: 'ns',
  groupResource: { group: 'example.com', resource: 'widgets' },
  name: 'w1',
  resources: list(resources),
  reservationId: 'r1',
  now: 0,
  ...extra,
});

describe('decideResources (a REST reservation of a plain resource list)', () => {
  it.each<[string, Record<string, string>, Quota[], Record<string, Record<string, string>>]>([
    [
      'charges an unscoped quota on a resource of any name',
      { 'example.com/gpu': '2' },
      [{ name: 'gpus', spec: { hard: { 'example.com/gpu': '4' } }, used: { 'example.com/gpu': '1' } }],
      { gpus: { 'example.com/gpu': '3' } },
    ],
    [
      'charges only the resources each quota limits',
      { 'requests.cpu': '500m', pods: '1' },
      [
        { name: 'cpu', spec: { hard: { 'requests.cpu': '2' } } },
        { name: 'count', spec: { hard: { pods: '5', services: '1' } } },
      ],
      { cpu: { 'requests.cpu': '500m' }, count: { pods: '1', services: '0' } },
    ],
    [
      'fills a quota up to its limit exactly',
      { 'requests.memory': '1Gi' },
      [{ name: 'mem', spec: { hard: { 'requests.memory': '2Gi' } }, used: { 'requests.memory': '1Gi' } }],
      { mem: { 'requests.memory': '2Gi' } },
    ],
    [
      'skips a quota that limits none of the resources',
      { 'example.com/gpu': '1' },
      [{ name: 'cpu', spec: { hard: { 'requests.cpu': '1' } } }],
      {},
    ],
    [
      'skips scoped quotas, even ones it would exceed',
      { pods: '1' },
      [
        { name: 'be', spec: { hard: { pods: '0' }, scopes: ['BestEffort'] } },
        {
          name: 'pc',
          spec: { hard: { pods: '0' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'DoesNotExist' }] } },
        },
      ],
      {},
    ],
    ['allows with no quota at all', { pods: '1' }, [], {}],
  ])('%s', (_case, resources, quotas, usedAfter) => {
    const decision = decideResources(command(resources), view(quotas));
    if (!decision.allowed) throw new Error(`expected allowed, got: ${decision.message}`);
    expect(Object.fromEntries(decision.charges.map((c) => [c.quota, Resources.canonicalResourceList(c.used)]))).toEqual(usedAfter);
    expect(decision.patch).toEqual([]);
  });

  it.each<[string, Record<string, string>, Quota[], string, Record<string, unknown>]>([
    [
      'the first quota in name order that would be exceeded',
      { 'example.com/gpu': '2' },
      [
        { name: 'b', spec: { hard: { 'example.com/gpu': '2' } }, used: { 'example.com/gpu': '1' } },
        { name: 'a', spec: { hard: { 'example.com/gpu': '10' } }, used: { 'example.com/gpu': '9' } },
      ],
      'widgets.example.com "w1" is forbidden: exceeded quota: a, requested: example.com/gpu=2, used: example.com/gpu=9, limited: example.com/gpu=10',
      { kind: 'Exceeded', quota: 'a' },
    ],
    [
      'every exceeded resource of that quota, sorted',
      { 'requests.cpu': '2', pods: '3', 'requests.memory': '1Gi' },
      [{ name: 'compute', spec: { hard: { 'requests.cpu': '1', pods: '2', 'requests.memory': '4Gi' } }, used: { pods: '1' } }],
      'widgets.example.com "w1" is forbidden: exceeded quota: compute, requested: pods=3,requests.cpu=2, used: pods=1,requests.cpu=0, limited: pods=2,requests.cpu=1',
      { kind: 'Exceeded', quota: 'compute' },
    ],
    [
      'a quota lowered below its usage, by any request for that resource',
      { pods: '1' },
      [{ name: 'count', spec: { hard: { pods: '1' } }, used: { pods: '3' } }],
      'widgets.example.com "w1" is forbidden: exceeded quota: count, requested: pods=1, used: pods=3, limited: pods=1',
      { kind: 'Exceeded', quota: 'count' },
    ],
    [
      'a negative quantity, before any quota',
      { 'example.com/gpu': '-1', pods: '1' },
      [],
      'widgets.example.com "w1" is forbidden: quota usage is negative for resource(s): example.com/gpu',
      { kind: 'NegativeUsage', resources: ['example.com/gpu'] },
    ],
  ])('denies, naming %s', (_case, resources, quotas, message, denial) => {
    const decision = decideResources(command(resources), view(quotas));
    expect(decision).toMatchObject({ allowed: false, code: 403, stage: 'ResourceQuota', message, denial });
  });

  it('words a denial without a name as apierrors.NewForbidden does (no quoted name)', () => {
    const decision = decideResources(
      command({ pods: '1' }, { name: undefined, groupResource: { group: '', resource: 'pods' } }),
      view([{ name: 'q', spec: { hard: { pods: '0' } } }]),
    );
    expect(decision).toMatchObject({
      allowed: false,
      message: 'pods is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0',
    });
  });

  // A plain list refused by a shared quota used to be named by the quota's internal key
  // ("exceeded quota: clusterresourcequotas/acme") and its denial had no quotaKind.
  it.each<[string, SharedQuotaRef, string, Record<string, unknown>]>([
    [
      'a ClusterResourceQuota as OpenShift does',
      { kind: 'ClusterResourceQuota', name: 'acme' },
      'exceeded cluster quota: acme,',
      { quota: 'acme', quotaKind: 'ClusterResourceQuota' },
    ],
    [
      'a HierarchicalResourceQuota as HNC does',
      { kind: 'HierarchicalResourceQuota', name: 'sub', namespace: 'team-a' },
      'exceeded hierarchical quota in namespace "team-a": "sub",',
      { quota: 'sub', quotaKind: 'HierarchicalResourceQuota', quotaNamespace: 'team-a' },
    ],
  ])('names %s, as an object denial names it', (_case, shared, words, named) => {
    const quotas = view([{ name: 'q', spec: { hard: { pods: '1' } }, used: { pods: '1' } }]).quotas.map((q) => ({
      ...q,
      name: sharedQuotaKey(shared),
      shared,
    }));
    const decision = decideResources(command({ pods: '1' }), { quotas, limitRanges: [] });
    if (decision.allowed || !decision.denial) throw new Error('expected a denial');
    expect(decision.message).toBe(`widgets.example.com "w1" is forbidden: ${words} requested: pods=1, used: pods=1, limited: pods=1`);
    expect(denialJson(decision.denial)).toMatchObject({ kind: 'Exceeded', ...named, resource: 'pods' });
  });

  // A shared quota with no usage figure yet used to refuse a plain list naming its internal key
  // ('status unknown for quota: clusterresourcequotas/acme'), so its page, which finds its denials
  // by kind and name, missed them.
  it('names a ClusterResourceQuota whose usage is unknown by its kind and name, as an object denial does', () => {
    const shared: SharedQuotaRef = { kind: 'ClusterResourceQuota', name: 'acme' };
    const quotas = view([{ name: 'q', spec: { hard: { pods: '1' } } }]).quotas.map((q) => ({
      ...q,
      name: sharedQuotaKey(shared),
      shared,
      used: list({}),
    }));
    const decision = decideResources(command({ pods: '1' }), { quotas, limitRanges: [] });
    if (decision.allowed || !decision.denial) throw new Error('expected a denial');
    expect(decision.message).toBe('widgets.example.com "w1" is forbidden: status unknown for cluster quota: acme, resources: pods');
    expect(denialJson(decision.denial)).toEqual({
      kind: 'StatusUnknown',
      quota: 'acme',
      quotaKind: 'ClusterResourceQuota',
      resources: ['pods'],
    });
  });

  it('reserves the whole list, canonical, for the object it names, with its expiry', () => {
    const decision = decideResources(
      command({ 'requests.memory': '1.5Gi', 'example.com/gpu': '1000m' }, { kind: 'Widget', expiresAt: Date.UTC(2030, 0, 2, 3, 4, 5) }),
      view([]),
    );
    if (!decision.allowed) throw new Error('expected allowed');
    expect(decision.reservation).toEqual({
      type: 'Reserved',
      data: {
        reservationId: 'r1',
        object: { group: 'example.com', resource: 'widgets', kind: 'Widget', name: 'w1' },
        operation: 'CREATE',
        charged: { 'requests.memory': '1536Mi', 'example.com/gpu': '1' },
        scopeFacts: {},
        expiresAt: '2030-01-02T03:04:05.000Z',
        source: 'rest',
      },
    });
  });

  // The ledger folds the Reserved event back into usage: a reservation without scope facts
  // must count exactly where decideResources checked it, never toward a scoped quota.
  it.each<[string, ResourceQuotaSpec, string]>([
    ['an unscoped quota', { hard: { pods: '5' } }, '1'],
    ['a Terminating quota', { hard: { pods: '5' }, scopes: ['Terminating'] }, '0'],
    ['a NotTerminating quota', { hard: { pods: '5' }, scopes: ['NotTerminating'] }, '0'],
    ['a BestEffort quota', { hard: { pods: '5' }, scopes: ['BestEffort'] }, '0'],
    ['a NotBestEffort quota', { hard: { pods: '5' }, scopes: ['NotBestEffort'] }, '0'],
    [
      'a PriorityClass NotIn quota',
      { hard: { pods: '5' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }] } },
      '0',
    ],
    [
      'a PriorityClass DoesNotExist quota',
      { hard: { pods: '5' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'DoesNotExist' }] } },
      '0',
    ],
    ['a CrossNamespacePodAffinity quota', { hard: { pods: '5' }, scopes: ['CrossNamespacePodAffinity'] }, '0'],
  ])('a folded reservation of a plain list counts toward %s: %s', (_case, spec, used) => {
    const decision = decideResources(command({ pods: '1' }), view([]));
    if (!decision.allowed || !decision.reservation) throw new Error('expected a reservation');
    const events: RecordedEvent[] = [
      { type: 'QuotaDefined', data: { name: 'q', spec }, version: 1, at: 0 },
      { ...decision.reservation, version: 2, at: 0 },
    ];
    expect(Resources.canonicalResourceList(fold(events).used.get('q') ?? {})).toEqual({ pods: used });
  });
});

describe('defaultPodForAdmission (SetDefaults_Pod: requests from limits)', () => {
  it.each([
    ['limits only: requests become the limits', { limits: { cpu: '1' } }, { limits: { cpu: '1' }, requests: { cpu: '1' } }],
    [
      'a request already set is kept, the missing one copied',
      { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } },
      { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } },
    ],
    [
      'an extended resource is copied too',
      { limits: { 'example.com/gpu': '2' } },
      { limits: { 'example.com/gpu': '2' }, requests: { 'example.com/gpu': '2' } },
    ],
    ['requests only: unchanged', { requests: { cpu: '100m' } }, { requests: { cpu: '100m' } }],
    ['no resources: unchanged', undefined, undefined],
  ])('%s', (_case, resources, expected) => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: {
        containers: [{ name: 'c', ...(resources ? { resources } : {}) }],
        initContainers: [{ name: 'i', ...(resources ? { resources } : {}) }],
      },
    };
    const before = structuredClone(pod);
    const defaulted = defaultPodForAdmission(pod);
    expect(defaulted.spec?.containers?.[0]?.resources).toEqual(expected);
    expect(defaulted.spec?.initContainers?.[0]?.resources).toEqual(expected);
    expect(pod).toEqual(before);
  });

  it('leaves a pod without a spec as it is', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
    expect(defaultPodForAdmission(pod)).toEqual(pod);
  });
});

describe('groupResourceForKind', () => {
  it.each([
    ['Pod', undefined, { group: '', resource: 'pods' }],
    ['Pod', 'v1', { group: '', resource: 'pods' }],
    ['Service', undefined, { group: '', resource: 'services' }],
    ['PersistentVolumeClaim', 'v1', { group: '', resource: 'persistentvolumeclaims' }],
    ['ConfigMap', undefined, { group: '', resource: 'configmaps' }],
    ['Secret', undefined, { group: '', resource: 'secrets' }],
    ['ReplicationController', undefined, { group: '', resource: 'replicationcontrollers' }],
    ['ResourceQuota', undefined, { group: '', resource: 'resourcequotas' }],
    ['ResourceClaim', 'resource.k8s.io/v1', { group: 'resource.k8s.io', resource: 'resourceclaims' }],
    ['Deployment', 'apps/v1', { group: 'apps', resource: 'deployments' }],
    ['StatefulSet', undefined, { group: 'apps', resource: 'statefulsets' }],
    ['DaemonSet', undefined, { group: 'apps', resource: 'daemonsets' }],
    ['ReplicaSet', undefined, { group: 'apps', resource: 'replicasets' }],
    ['Job', 'batch/v1', { group: 'batch', resource: 'jobs' }],
    ['CronJob', undefined, { group: 'batch', resource: 'cronjobs' }],
    ['Job', 'example.com/v1', undefined],
    ['Pod', 'apps/v1', undefined],
    ['Widget', undefined, undefined],
    ['pod', undefined, undefined],
    ['toString', undefined, undefined],
    ['__proto__', undefined, undefined],
  ])('%s %s', (kind, apiVersion, expected) => expect(groupResourceForKind(kind, apiVersion)).toEqual(expected));
});
