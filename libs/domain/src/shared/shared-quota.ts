import type { ObjectMeta, ResourceQuotaSpec } from '../kube/types.js';
import type { LabelSet } from '../selectors/label-selector.js';
import {
  clusterResourceQuotaSelects,
  hierarchicalResourceQuotaSelects,
  type ClusterResourceQuotaSelector,
  type SelectableNamespace,
} from '../selectors/namespace-selection.js';

/**
 * A quota over several namespaces. OpenShift's ClusterResourceQuota (cluster-scoped,
 * namespaces chosen by label and annotation selectors) and HNC's HierarchicalResourceQuota (a
 * namespace and every namespace below it) are one thing here: a ResourceQuotaSpec over the set
 * of namespaces a selection picks. Each has a stream and a head of its own (its definition, and
 * the usage each selected namespace contributes); each namespace it selects carries it in its
 * own state (SharedQuotaApplied), so that the fold computes that namespace's contribution
 * exactly as it computes a ResourceQuota's usage, and admission in the namespace charges it in
 * the same transaction as the namespace's own quotas.
 */
export type SharedQuotaKind = 'ClusterResourceQuota' | 'HierarchicalResourceQuota';

export interface SharedQuotaRef {
  readonly kind: SharedQuotaKind;
  readonly name: string;
  /** HierarchicalResourceQuota: the namespace it lives in (the root of the subtree it covers). */
  readonly namespace?: string;
}

/** A shared quota as stored: what it limits, and (ClusterResourceQuota) which namespaces it selects. */
export interface SharedQuotaDefinition {
  readonly ref: SharedQuotaRef;
  readonly spec: ResourceQuotaSpec;
  readonly selector?: ClusterResourceQuotaSelector;
  readonly metadata?: Pick<ObjectMeta, 'labels' | 'annotations' | 'uid' | 'creationTimestamp'>;
}

/** The Namespace object as the ledger keeps it: what shared quotas select namespaces by. */
export interface NamespaceDefinition {
  readonly name: string;
  readonly metadata?: Pick<ObjectMeta, 'labels' | 'annotations' | 'uid' | 'creationTimestamp'>;
  readonly spec?: { readonly finalizers?: readonly string[] };
  /**
   * The cluster's `metadata.resourceVersion` of the stored Namespace this record was taken from
   * (the reconciler's listing): a listing older than it changes nothing. Absent for records from
   * the REST API or a review (labels from an older listing must not undo a newer relabel).
   */
  readonly observedVersion?: string;
}

/**
 * Whether a Kubernetes resourceVersion is newer than another. Kubernetes calls them opaque, but
 * etcd's are decimal revisions that only grow (what every kube-apiserver serves): those are
 * compared as numbers; any other pair can only be told apart, and the newer write is taken.
 */
export function isNewerVersion(candidate: string, than: string): boolean {
  if (/^\d{1,30}$/.test(candidate) && /^\d{1,30}$/.test(than)) return BigInt(candidate) > BigInt(than);
  return candidate !== than;
}

const PLURAL: Readonly<Record<SharedQuotaKind, string>> = {
  ClusterResourceQuota: 'clusterresourcequotas',
  HierarchicalResourceQuota: 'hierarchicalresourcequotas',
};

/**
 * The key of a shared quota: its stream, its head, its entry in a namespace's state. It holds a
 * '/', which no namespace name can, so a shared quota's stream never collides with a namespace's.
 */
export function sharedQuotaKey(ref: SharedQuotaRef): string {
  return ref.kind === 'HierarchicalResourceQuota'
    ? `${PLURAL[ref.kind]}/${ref.namespace ?? ''}/${ref.name}`
    : `${PLURAL[ref.kind]}/${ref.name}`;
}

/** Whether a stream key is a shared quota's (not a namespace's). */
export function isSharedQuotaKey(key: string): boolean {
  return key.includes('/');
}

/** How a person names it: `clusterresourcequota "team"`, `hierarchicalresourcequota "parent/team"`. */
export function sharedQuotaTitle(ref: SharedQuotaRef): string {
  return ref.kind === 'HierarchicalResourceQuota'
    ? `hierarchicalresourcequota "${ref.namespace ?? ''}/${ref.name}"`
    : `clusterresourcequota "${ref.name}"`;
}

/** A namespace as a selection sees it, from its Namespace object (none: no labels, no annotations). */
export function selectableOf(name: string, definition: NamespaceDefinition | undefined): SelectableNamespace {
  const labels: LabelSet = definition?.metadata?.labels ?? {};
  const annotations: LabelSet = definition?.metadata?.annotations ?? {};
  return { name, labels, annotations };
}

/** Whether a shared quota covers a namespace. */
export function sharedQuotaSelects(definition: SharedQuotaDefinition, namespace: SelectableNamespace): boolean {
  if (definition.ref.kind === 'HierarchicalResourceQuota')
    return hierarchicalResourceQuotaSelects(definition.ref.namespace ?? '', namespace);
  return definition.selector !== undefined && clusterResourceQuotaSelects(definition.selector, namespace);
}

/** The same limits and scopes: a namespace's copy of the quota need not change. */
export function sameSharedSpec(a: ResourceQuotaSpec, b: ResourceQuotaSpec): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
