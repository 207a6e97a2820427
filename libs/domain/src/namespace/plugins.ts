import type { NamespaceState } from '../events/fold.js';
import { forbiddenText } from '../kube/forbidden.js';
import type { GroupResource, Operation } from '../kube/types.js';

/**
 * The admission plugins the service runs, named as kube-apiserver names them, in the order it
 * runs them whatever order they were enabled in (kube-apiserver's fixed order; the mutating
 * step of each before any validating one): NamespaceLifecycle, LimitRanger (defaults, then
 * validation), ResourceQuota, AlwaysDeny last.
 */
export const ADMISSION_PLUGINS = ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota', 'AlwaysDeny'] as const;

export type AdmissionPlugin = (typeof ADMISSION_PLUGINS)[number];

/** What runs when nothing is enabled or disabled (kube-apiserver enables these three by default too). */
export const DEFAULT_ADMISSION_PLUGINS: readonly AdmissionPlugin[] = ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota'];

/** Whether a plugin runs; `enabled` absent means the defaults. */
export function pluginEnabled(enabled: readonly AdmissionPlugin[] | undefined, plugin: AdmissionPlugin): boolean {
  return (enabled ?? DEFAULT_ADMISSION_PLUGINS).includes(plugin);
}

/** Namespaces kube-apiserver never deletes (NamespaceLifecycle's immortal namespaces). */
export const IMMORTAL_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public'];

const NAMESPACES: GroupResource = { group: '', resource: 'namespaces' };

/** NamespaceLifecycle on a Namespace's own DELETE: the refusal for an immortal namespace, else undefined. */
export function namespaceDeletionRefusal(name: string, enabled: readonly AdmissionPlugin[] | undefined): string | undefined {
  if (!pluginEnabled(enabled, 'NamespaceLifecycle') || !IMMORTAL_NAMESPACES.includes(name)) return undefined;
  return forbiddenText(NAMESPACES, name, 'this namespace may not be deleted');
}

/** AlwaysDeny's answer to every request (kube-apiserver's words), else undefined when it is not enabled. */
export function alwaysDenyRefusal(
  enabled: readonly AdmissionPlugin[] | undefined,
  resource: GroupResource,
  name: string,
): string | undefined {
  if (!pluginEnabled(enabled, 'AlwaysDeny')) return undefined;
  return forbiddenText(resource, name, 'admission control is denying all modifications');
}

/**
 * The namespace's Namespace object was recorded and then deleted (a Namespace DELETE reviewed,
 * removed through the admin API, or gone from the cluster's listing), and no new one since: the
 * ledger knows it as an object that no longer exists, whether or not the namespace has quotas.
 */
export function namespaceObjectRemoved(state: NamespaceState): boolean {
  // A stream of nothing but Namespace events without an object was removed too (heads written
  // before objectRemovedAt was kept say only that).
  return state.object === undefined && (state.objectRemovedAt !== undefined || state.objectOnly === true);
}

/**
 * NamespaceLifecycle on a request in a namespace: a CREATE in a namespace whose object the ledger
 * recorded as deleted is refused as kube-apiserver refuses new content in a terminating namespace
 * (the ledger cannot tell "terminating" from "gone"; a request for a gone namespace never reaches a
 * webhook, so this is the answer that can apply). Updates and deletes pass, as in Kubernetes,
 * where they go on while a namespace terminates (its objects' finalizers are removed by updates).
 */
export function namespaceLifecycleRefusal(
  enabled: readonly AdmissionPlugin[] | undefined,
  request: { readonly operation: Operation; readonly resource: GroupResource; readonly name: string; readonly namespace: string },
  state: NamespaceState,
): string | undefined {
  if (!pluginEnabled(enabled, 'NamespaceLifecycle') || request.operation !== 'CREATE' || !namespaceObjectRemoved(state)) return undefined;
  return forbiddenText(
    request.resource,
    request.name,
    `unable to create new content in namespace ${request.namespace} because it is being terminated`,
  );
}
