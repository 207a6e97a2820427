export { checkQuota } from './resource-quota-plugin.js';
export { decideQuota } from './check.js';
export type { LimitedResource, QuotaCharge, QuotaCheckInput, QuotaDecision, QuotaSnapshot } from './check.js';
export {
  admissionObjectName,
  forbiddenMessage,
  formatScopeRequirements,
  groupResourceString,
  isForbidden,
  renderDenial,
} from './denial.js';
export type { ExceededResource, QuotaDenial } from './denial.js';
export { matchesAllScopes, quotaMatchesObject } from './scopes.js';
export { quotaObjectCountNames, RESOURCE_QUOTAS } from './quota-objects.js';
export { WARNINGS_MAX } from './warnings.js';
export { nearestResourceName, OBJECT_COUNT_NAMES } from './resource-name-hints.js';
export {
  clusterManager,
  LAST_APPLIED_BY_ANNOTATION,
  managedByCluster,
  MANAGED_BY_ANNOTATION,
  MANAGED_BY_CLUSTER,
  MANAGED_BY_CLUSTER_QUOTA,
  MANAGED_BY_HIERARCHICAL_QUOTA,
  MANAGED_BY_LIMIT_RANGE,
} from './managed-by.js';
export { unroutedCounts, unroutedCountWarnings, type RegisteredRule } from './unrouted-counts.js';
