import type { Random } from './random.js';

/**
 * What both namespaces of one run are given: the same ResourceQuotas and LimitRanges, drawn from
 * the seed (so different seeds try different combinations of resources, scopes and defaults),
 * and the cluster-wide objects pods and claims may name.
 */

export type ResourceList = Record<string, string>;

export interface QuotaDefinition {
  readonly name: string;
  readonly hard: ResourceList;
  readonly scopes?: readonly string[];
  readonly scopeSelector?: { readonly matchExpressions: readonly { scopeName: string; operator: string; values?: string[] }[] };
}

export interface LimitRangeItem {
  readonly type: 'Container' | 'Pod' | 'PersistentVolumeClaim';
  readonly max?: ResourceList;
  readonly min?: ResourceList;
  readonly default?: ResourceList;
  readonly defaultRequest?: ResourceList;
  readonly maxLimitRequestRatio?: ResourceList;
}

export interface Scenario {
  readonly quotas: readonly QuotaDefinition[];
  /** The LimitRange `limits` (absent: none in either namespace). */
  readonly limitRange?: readonly LimitRangeItem[];
  /**
   * Defined only after this many steps, in namespaces that hold objects by then (absent: before
   * the first): Kubernetes' controller counts what exists, the ledger awaits its first count.
   */
  readonly definedAfter?: number;
}

export const EXPANDABLE_CLASS = 'expandable';
export const FIXED_CLASS = 'fixed';
export const HIGH_PRIORITY = 'high';
export const LOW_PRIORITY = 'low';
export const OVERHEAD_RUNTIME = 'with-overhead';

/** Cluster-scoped objects the generated objects refer to, created once per control plane. */
export const CLUSTER_FIXTURES: readonly unknown[] = [
  {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: EXPANDABLE_CLASS },
    provisioner: 'example.com/none',
    allowVolumeExpansion: true,
  },
  { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: FIXED_CLASS }, provisioner: 'example.com/none' },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: HIGH_PRIORITY }, value: 1000 },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: LOW_PRIORITY }, value: 10 },
  {
    apiVersion: 'node.k8s.io/v1',
    kind: 'RuntimeClass',
    metadata: { name: OVERHEAD_RUNTIME },
    handler: 'runc',
    overhead: { podFixed: { cpu: '10m', memory: '16Mi' } },
  },
];

const CPU = ['500m', '1', '1500m', '2', '3'];
const MEMORY = ['256Mi', '512Mi', '768Mi', '1Gi'];
const STORAGE = ['2Gi', '3Gi', '5Gi', '8Gi'];
const EXPANDABLE_STORAGE = `${EXPANDABLE_CLASS}.storageclass.storage.k8s.io/requests.storage`;
const EXPANDABLE_CLAIMS = `${EXPANDABLE_CLASS}.storageclass.storage.k8s.io/persistentvolumeclaims`;

/** Some of `entries`, each kept with probability `p` (at least one). */
function some(random: Random, entries: readonly [string, string][], p: number): ResourceList {
  const kept = entries.filter(() => random.chance(p));
  return Object.fromEntries(kept.length > 0 ? kept : [random.pick(entries)]);
}

function computeQuota(random: Random): QuotaDefinition {
  const entries: [string, string][] = [
    ['pods', String(random.int(3, 6))],
    ['count/pods', String(random.int(4, 8))],
    ['requests.cpu', random.pick(CPU)],
    ['requests.memory', random.pick(MEMORY)],
    ['limits.cpu', random.pick(CPU.slice(1))],
    ['limits.memory', random.pick(MEMORY.slice(1))],
    ['requests.ephemeral-storage', random.pick(['1Gi', '2Gi'])],
    ['limits.ephemeral-storage', random.pick(['2Gi', '4Gi'])],
    ['requests.example.com/gpu', String(random.int(1, 2))],
  ];
  return { name: 'compute', hard: some(random, entries, 0.5) };
}

function objectsQuota(random: Random): QuotaDefinition {
  const entries: [string, string][] = [
    ['services', String(random.int(2, 4))],
    ['count/services', String(random.int(2, 5))],
    ['services.nodeports', String(random.int(1, 4))],
    ['services.loadbalancers', String(random.int(0, 2))],
    ['persistentvolumeclaims', String(random.int(2, 4))],
    ['count/persistentvolumeclaims', String(random.int(2, 5))],
    ['requests.storage', random.pick(STORAGE)],
    [EXPANDABLE_STORAGE, random.pick(STORAGE.slice(0, 3))],
    [EXPANDABLE_CLAIMS, String(random.int(1, 3))],
    ['count/configmaps', String(random.int(1, 3))],
    ['secrets', String(random.int(1, 3))],
  ];
  return { name: 'objects', hard: some(random, entries, 0.5) };
}

/** Quotas of one scope each (what Kubernetes allows a scope to track). */
function scopedQuotas(random: Random): QuotaDefinition[] {
  const candidates: QuotaDefinition[] = [
    { name: 'best-effort', scopes: ['BestEffort'], hard: { pods: String(random.int(1, 3)) } },
    {
      name: 'not-best-effort',
      scopes: ['NotBestEffort'],
      hard: some(
        random,
        [
          ['pods', String(random.int(2, 5))],
          ['limits.cpu', random.pick(CPU)],
        ],
        0.7,
      ),
    },
    {
      name: 'terminating',
      scopes: ['Terminating'],
      hard: some(
        random,
        [
          ['pods', String(random.int(1, 3))],
          ['requests.cpu', random.pick(CPU)],
        ],
        0.7,
      ),
    },
    {
      name: 'not-terminating',
      scopes: ['NotTerminating'],
      hard: some(
        random,
        [
          ['pods', String(random.int(2, 5))],
          ['requests.memory', random.pick(MEMORY)],
        ],
        0.7,
      ),
    },
    {
      name: 'high-priority',
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [HIGH_PRIORITY] }] },
      hard: some(
        random,
        [
          ['pods', String(random.int(1, 3))],
          ['requests.cpu', random.pick(CPU)],
        ],
        0.7,
      ),
    },
    { name: 'cross-namespace', scopes: ['CrossNamespacePodAffinity'], hard: { pods: String(random.int(0, 1)) } },
  ];
  return candidates.filter(() => random.chance(0.3));
}

/** A Container item whose values Kubernetes accepts: min <= defaultRequest <= default <= max. */
function containerItem(random: Random): LimitRangeItem {
  const item: Record<string, ResourceList> = { max: {}, min: {}, default: {}, defaultRequest: {}, maxLimitRequestRatio: {} };
  if (random.chance(0.7)) {
    item.default!.cpu = random.pick(['200m', '500m']);
    if (random.chance(0.8)) item.defaultRequest!.cpu = random.pick(['100m', '200m']);
  }
  if (random.chance(0.6)) {
    item.default!.memory = random.pick(['128Mi', '256Mi']);
    if (random.chance(0.8)) item.defaultRequest!.memory = random.pick(['64Mi', '128Mi']);
  }
  if (random.chance(0.5)) item.max!.cpu = random.pick(['1', '1500m']);
  if (random.chance(0.4)) item.max!.memory = random.pick(['512Mi', '1Gi']);
  if (random.chance(0.3)) item.min!.cpu = '50m';
  if (random.chance(0.25)) item.maxLimitRequestRatio!.cpu = random.pick(['2', '4']);
  if (random.chance(0.2)) item.default!['ephemeral-storage'] = '1Gi';
  return { type: 'Container', ...Object.fromEntries(Object.entries(item).filter(([, list]) => Object.keys(list).length > 0)) };
}

function limitRange(random: Random): LimitRangeItem[] | undefined {
  if (random.chance(0.15)) return undefined;
  const items: LimitRangeItem[] = [containerItem(random)];
  if (random.chance(0.3)) items.push({ type: 'Pod', max: { cpu: random.pick(['2', '3']), memory: '1536Mi' } });
  if (random.chance(0.4))
    items.push({ type: 'PersistentVolumeClaim', min: { storage: '256Mi' }, max: { storage: random.pick(['2Gi', '3Gi']) } });
  return items;
}

export function scenario(random: Random): Scenario {
  const quotas = [computeQuota(random), objectsQuota(random), ...scopedQuotas(random)];
  const limits = limitRange(random);
  const definedAfter = random.chance(0.3) ? random.int(4, 12) : undefined;
  return { quotas, ...(limits ? { limitRange: limits } : {}), ...(definedAfter === undefined ? {} : { definedAfter }) };
}

/** Values a resource may be set to by a quota change in the middle of a run. */
export function hardValueFor(random: Random, resource: string): string {
  if (resource.endsWith('cpu')) return random.pick(['0', ...CPU]);
  if (resource.endsWith('memory')) return random.pick(['0', ...MEMORY]);
  if (resource.endsWith('storage')) return random.pick(['0', ...STORAGE]);
  return String(random.int(0, 6));
}

/** Resources a quota change may add to a quota that lacks them (what its scope allows). */
export function addableResources(quota: QuotaDefinition): string[] {
  const scoped = quota.scopes?.length || quota.scopeSelector;
  if (quota.scopes?.includes('BestEffort')) return ['pods'];
  const compute = ['pods', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];
  if (scoped) return compute;
  if (quota.name === 'compute')
    return [...compute, 'count/pods', 'requests.ephemeral-storage', 'limits.ephemeral-storage', 'requests.example.com/gpu'];
  return [
    'services',
    'services.nodeports',
    'services.loadbalancers',
    'persistentvolumeclaims',
    'requests.storage',
    EXPANDABLE_STORAGE,
    EXPANDABLE_CLAIMS,
    'count/services',
    'count/configmaps',
    'configmaps',
    'count/secrets',
    'secrets',
  ];
}

/** A ResourceQuota object of `definition`, with `extra` hard entries (Kubernetes' side only). */
export function quotaObject(definition: QuotaDefinition, namespace: string, extra: ResourceList = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: definition.name, namespace },
    spec: {
      hard: { ...definition.hard, ...extra },
      ...(definition.scopes ? { scopes: definition.scopes } : {}),
      ...(definition.scopeSelector ? { scopeSelector: definition.scopeSelector } : {}),
    },
  };
}

export function limitRangeObject(items: readonly LimitRangeItem[], namespace: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits', namespace }, spec: { limits: items } };
}
