import type { ObjectMeta } from '@quota/domain';
import type { NamespaceView, SharedQuotaView } from '@quota/ledger';
import { renderMetadata } from '../common/kube/kube-object.js';

/**
 * Namespaces and the quotas over several namespaces as their own API servers show them: a
 * core/v1 Namespace, OpenShift's ClusterResourceQuota and AppliedClusterResourceQuota
 * (quota.openshift.io/v1), and HNC's HierarchicalResourceQuota (hnc.x-k8s.io/v1alpha2), with
 * the status the ledger computes.
 */
function clusterMetadata(name: string, version: number, createdAt: string, metadata: NamespaceView['definition']['metadata']): ObjectMeta {
  const { namespace: _namespace, ...rest } = renderMetadata({ name, namespace: '', version, createdAt, ...(metadata ? { metadata } : {}) });
  return rest;
}

export function renderNamespace(view: NamespaceView) {
  return {
    apiVersion: 'v1' as const,
    kind: 'Namespace' as const,
    metadata: clusterMetadata(view.name, view.version, view.createdAt, view.definition.metadata),
    spec: view.definition.spec ?? {},
    status: { phase: 'Active' },
  };
}

export function renderClusterResourceQuota(view: SharedQuotaView) {
  const { definition } = view;
  return {
    apiVersion: 'quota.openshift.io/v1' as const,
    kind: 'ClusterResourceQuota' as const,
    metadata: clusterMetadata(definition.ref.name, view.version, view.createdAt, definition.metadata),
    spec: {
      selector: { labels: definition.selector?.labels ?? null, annotations: definition.selector?.annotations ?? null },
      quota: definition.spec,
    },
    status: {
      total: { hard: view.hard, used: view.used },
      namespaces: view.namespaces.map((n) => ({ namespace: n.namespace, status: { hard: view.hard, used: n.used } })),
    },
  };
}

/** What applies to one namespace: the cluster quota, named in that namespace (OpenShift's AppliedClusterResourceQuota). */
export function renderAppliedClusterResourceQuota(view: SharedQuotaView, namespace: string) {
  const quota = renderClusterResourceQuota(view);
  return { ...quota, kind: 'AppliedClusterResourceQuota' as const, metadata: { ...quota.metadata, namespace } };
}

export function renderHierarchicalResourceQuota(view: SharedQuotaView) {
  const { definition } = view;
  return {
    apiVersion: 'hnc.x-k8s.io/v1alpha2' as const,
    kind: 'HierarchicalResourceQuota' as const,
    metadata: renderMetadata({
      name: definition.ref.name,
      namespace: definition.ref.namespace ?? '',
      version: view.version,
      createdAt: view.createdAt,
      ...(definition.metadata ? { metadata: definition.metadata } : {}),
    }),
    spec: { hard: definition.spec.hard ?? {} },
    status: { hard: view.hard, used: view.used },
  };
}
