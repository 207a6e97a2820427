import type { GroupResource, ResourceQuotaSpec } from '../kube/types.js';
import { quotaScopeRequirements } from '../scopes/facts.js';
import { evaluatorFor } from '../usage/registry.js';

/** ResourceQuota objects, as quota counts them. */
export const RESOURCE_QUOTAS: GroupResource = { group: '', resource: 'resourcequotas' };

/**
 * What a quota has used of `count/resourcequotas` and `resourcequotas` (Kubernetes' object-count
 * evaluator of ResourceQuotas, under its count name and its legacy one): the number of
 * ResourceQuotas in the namespace, for each of the two names it limits. Kubernetes' quota
 * controller counts them by listing the namespace; here quotas are the ledger's definitions, not
 * reserved objects, so the count comes from the definitions and replaces what reservations say.
 * A scoped quota counts none (the object-count evaluator matches no scope): nothing is added.
 */
export function quotaObjectUsage(spec: ResourceQuotaSpec, quotaCount: number): Record<string, string> {
  return Object.fromEntries(quotaObjectCountNames(spec).map((name) => [name, String(quotaCount)]));
}

/** The hard resources of a quota that count ResourceQuotas (none for a scoped quota). */
export function quotaObjectCountNames(spec: ResourceQuotaSpec): string[] {
  if (quotaScopeRequirements(spec).length > 0) return [];
  return evaluatorFor(RESOURCE_QUOTAS).matchingResources(Object.keys(spec.hard ?? {}));
}
