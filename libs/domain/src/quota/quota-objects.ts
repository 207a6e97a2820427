import type { GroupResource, ResourceQuotaSpec } from '../kube/types.js';
import { quotaScopeRequirements } from '../scopes/facts.js';
import { evaluatorFor } from '../usage/registry.js';

/** ResourceQuota objects, as quota counts them. */
export const RESOURCE_QUOTAS: GroupResource = { group: '', resource: 'resourcequotas' };

/** The hard resources of a quota that count ResourceQuotas (none for a scoped quota). */
export function quotaObjectCountNames(spec: ResourceQuotaSpec): string[] {
  if (quotaScopeRequirements(spec).length > 0) return [];
  return evaluatorFor(RESOURCE_QUOTAS).matchingResources(Object.keys(spec.hard ?? {}));
}
