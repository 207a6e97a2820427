import type { GroupResource } from '../kube/types.js';
import { evaluatorFor, isIgnoredResource } from '../usage/registry.js';
import { decideQuota, type QuotaCheckInput, type QuotaDecision } from './check.js';

/**
 * The subresource writes quota admission looks at: an in-place pod resize and a claim's
 * status (allocated storage). Kubernetes' object-count and service evaluators count writes
 * to the object itself only, so every other subresource (`serviceaccounts/token`,
 * `services/status`, `deployments/scale`, …) is admitted without a look.
 */
const EVALUATED_SUBRESOURCES: readonly (GroupResource & { readonly subresource: string })[] = [
  { group: '', resource: 'pods', subresource: 'resize' },
  { group: '', resource: 'persistentvolumeclaims', subresource: 'status' },
];

function isEvaluatedSubresource(groupResource: GroupResource, subresource: string): boolean {
  return EVALUATED_SUBRESOURCES.some(
    (s) => s.group === groupResource.group && s.resource === groupResource.resource && s.subresource === subresource,
  );
}

const allowed = (): QuotaDecision => ({ allowed: true, charges: [] });

/**
 * Decides one admission request against the namespace's quotas with the registered usage
 * evaluator for its group/resource (see `decideQuota`), after the gates of Kubernetes'
 * ResourceQuota plugin: requests without a namespace (cluster-scoped objects), the creation
 * of a namespace, subresources other than the ones above, and resources quota never
 * charges (events, review APIs, …) are allowed without a look.
 *
 * `namespace` is the request's namespace: absent or empty means a cluster-scoped request.
 */
export function checkQuota(input: QuotaCheckInput): QuotaDecision {
  if (!input.namespace) return allowed();
  const { groupResource } = input;
  if (input.operation === 'CREATE' && groupResource.group === '' && groupResource.resource === 'namespaces') return allowed();
  if (input.subresource && !isEvaluatedSubresource(groupResource, input.subresource)) return allowed();
  if (isIgnoredResource(groupResource)) return allowed();
  return decideQuota(input, evaluatorFor(groupResource));
}
