import { DomainError, validateClusterResourceQuota, validateHierarchicalResourceQuota, validateResourceQuota } from '@quota/domain';
import type { AdmissionReviewRequest } from './admission-review.js';

/** Each quota kind of ours, as the REST API's kind validates it (the reconciler's sync validates them so too). */
const VALIDATED: Readonly<
  Record<string, { kind: string; as: { apiVersion: string; kind: string }; validate: (body: unknown) => unknown }>
> = {
  ledgerquotas: { kind: 'LedgerQuota', as: { apiVersion: 'v1', kind: 'ResourceQuota' }, validate: validateResourceQuota },
  ledgerclusterquotas: {
    kind: 'LedgerClusterQuota',
    as: { apiVersion: 'quota.openshift.io/v1', kind: 'ClusterResourceQuota' },
    validate: validateClusterResourceQuota,
  },
  ledgerhierarchicalquotas: {
    kind: 'LedgerHierarchicalQuota',
    as: { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'HierarchicalResourceQuota' },
    validate: validateHierarchicalResourceQuota,
  },
};

/** Why a definition review is refused: its HTTP code and Kubernetes' message. */
export interface DefinitionRefusal {
  readonly code: 400 | 422;
  readonly message: string;
}

/**
 * A CREATE or UPDATE of a LedgerQuota, LedgerClusterQuota or LedgerHierarchicalQuota whose spec the
 * REST API would refuse (the ResourceQuota, ClusterResourceQuota or HierarchicalResourceQuota it
 * stands for, validated as Kubernetes validates it: a scope with a resource it does not allow, a
 * scope selector `In` without values, …): refused at admission with Kubernetes' field errors, the
 * kind named as the kube-apiserver names a custom resource's (`LedgerQuota.quota-ledger.io "x" is
 * invalid: …`), so that `kubectl apply` fails as it fails for a ResourceQuota instead of storing
 * an object the ledger never applies. Undefined: nothing to refuse.
 */
export function definitionRefusal(review: AdmissionReviewRequest): DefinitionRefusal | undefined {
  const validated = review.resource.group === 'quota-ledger.io' ? VALIDATED[review.resource.resource] : undefined;
  if (!validated || !review.object || (review.operation !== 'CREATE' && review.operation !== 'UPDATE')) return undefined;
  const object = review.object as { metadata?: { name?: unknown; namespace?: unknown }; spec?: unknown };
  const name = typeof object.metadata?.name === 'string' ? object.metadata.name : review.name;
  const namespace = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : review.namespace;
  try {
    validated.validate({ ...validated.as, metadata: { name, ...(namespace ? { namespace } : {}) }, spec: object.spec ?? {} });
    return undefined;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const named = error.message.startsWith(`${validated.as.kind} `)
      ? `${validated.kind}.quota-ledger.io ${error.message.slice(validated.as.kind.length + 1)}`
      : error.message;
    return { code: error.code === 'ObjectMalformed' ? 400 : 422, message: named };
  }
}
