import { LAST_APPLIED_BY_ANNOTATION, MANAGED_BY_ANNOTATION } from '@quota/domain';
import type { ClusterObject, ObjectStatus } from './cluster-object-api.js';

// A cluster object as a ledger definition (its body, labels, annotations and author) and the status
// the sync writes back on it.

/** Annotations of the object never copied into the ledger: ours, and kubectl's copy of the whole object. */
const DROPPED_ANNOTATION = /^quota-ledger\.io\/|^kubectl\.kubernetes\.io\/last-applied-configuration$/;

/** Who a ledger change from the cluster is recorded as. */
export interface Author {
  readonly actor: string;
  readonly onBehalfOf?: string;
}

/** An object's labels and annotations as the ledger keeps them (ledgerMetadata). */
export type LedgerMetadata = ReturnType<typeof ledgerMetadata>;

/** What a status shows of the ledger: the definition's hard and used. */
export interface LedgerTotals {
  readonly hard: Record<string, string>;
  readonly used: Record<string, string>;
}

/** The object as the body of the REST PUT whose command puts it (`apiVersion`, `kind`): its name, its namespace if it has one, its spec. */
export function restBody(object: ClusterObject, apiVersion: string, kind: string): Record<string, unknown> {
  const { name, namespace } = object.metadata;
  return { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) }, spec: object.spec ?? {} };
}

/** The hard and used of a view that has them (a quota's, a shared quota's). */
export const totalsOf = (view: LedgerTotals): LedgerTotals => ({ hard: view.hard, used: view.used });

/** The object's labels and annotations as the ledger keeps them: ours and kubectl's dropped, marked as from the cluster's `managedBy`. */
export function ledgerMetadata(
  object: ClusterObject,
  managedBy: string,
): { labels?: Record<string, string>; annotations: Record<string, string> } {
  const { labels } = object.metadata;
  const kept = Object.entries(object.metadata.annotations ?? {}).filter(([key]) => !DROPPED_ANNOTATION.test(key));
  return { ...(labels ? { labels } : {}), annotations: { ...Object.fromEntries(kept), [MANAGED_BY_ANNOTATION]: managedBy } };
}

/**
 * Who changed the object: the user our mutating webhook stamped (LAST_APPLIED_BY_ANNOTATION, from
 * the kube-apiserver's userInfo), recorded as the reconciler acting on their behalf; without it (an
 * object in a namespace the webhook leaves out, or written before it was registered), the manager
 * of the newest managedFields entry of the main resource (`kubectl-client-side-apply`,
 * `argocd-controller`): the client that wrote, not the user, for managedFields name no user.
 */
export function authorOf(object: ClusterObject, reconciler = 'system:reconciler'): Author {
  const user = object.metadata.annotations?.[LAST_APPLIED_BY_ANNOTATION];
  if (user) return { actor: reconciler, onBehalfOf: user };
  const entries = (object.metadata.managedFields ?? []).filter((e) => e.subresource === undefined || e.subresource === '');
  const newest = entries.reduce<(typeof entries)[number] | undefined>(
    (best, e) => (!best || (e.time ?? '') >= (best.time ?? '') ? e : best),
    undefined,
  );
  return { actor: `kubernetes:${newest?.manager ?? 'unknown'}` };
}

export function generation(object: ClusterObject): { observedGeneration?: number } {
  return object.metadata.generation === undefined ? {} : { observedGeneration: object.metadata.generation };
}

type Condition = NonNullable<ObjectStatus['conditions']>[number];

/** The Synced condition; its transition time moves only when its status does. */
export function condition(object: ClusterObject, status: 'True' | 'False', reason: string, message: string): Condition {
  const before = object.status?.conditions?.find((c) => c.type === 'Synced');
  const lastTransitionTime =
    before?.status === status && before.lastTransitionTime ? before.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { type: 'Synced', status, reason, message: message.slice(0, 1000), lastTransitionTime };
}

export function sameStatus(a: ObjectStatus | undefined, b: ObjectStatus): boolean {
  const canonical = (s: ObjectStatus | undefined) =>
    JSON.stringify({
      hard: sorted(s?.hard),
      used: sorted(s?.used),
      observedGeneration: s?.observedGeneration,
      conditions: (s?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message, c.lastTransitionTime]),
    });
  return canonical(a) === canonical(b);
}

function sorted(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([x], [y]) => x.localeCompare(y));
}
