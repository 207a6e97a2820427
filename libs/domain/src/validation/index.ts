// Generic name helpers (qualified names, hugepages/extended/native resource tests) stay
// internal: usage/names.ts has its own, and both at the root index would be ambiguous.
export { validateResourceQuota } from './resource-quota.js';
export { prepareLimitRangeForStorage, validateLimitRange } from './limit-range.js';
export { METADATA_LIST_MAX, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES, TOTAL_LABEL_SIZE_LIMIT_BYTES } from './object-meta.js';
export {
  assertDefinitionSize,
  clusterResourceQuotaSizeErrors,
  DEFINITION_LIST_MAX,
  limitRangeSizeErrors,
  RESOURCE_LIST_MAX,
  resourceQuotaSizeErrors,
} from './sizes.js';
export {
  STANDARD_QUOTA_RESOURCE_NAMES,
  INTEGER_RESOURCE_NAMES,
  STANDARD_RESOURCE_QUOTA_SCOPES,
  STANDARD_LIMIT_TYPES,
  EXISTS_ONLY_SCOPES,
  CONFLICTING_SCOPE_PAIRS,
  type ResourceQuotaScope,
  type LimitType,
  isStandardQuotaResourceName,
  isStandardResourceName,
  isStandardContainerResourceName,
  isIntegerResourceName,
  isOvercommitAllowed,
  isStandardResourceQuotaScope,
  isResourceQuotaScopeValidForResource,
  isStandardLimitRangeType,
  validateResourceName,
  validateContainerResourceName,
  validateResourceQuotaResourceName,
  validateResourceQuantityValue,
  validateNonnegativeQuantity,
  validateLimitRangeTypeName,
  validateLimitRangeResourceName,
} from './resource-names.js';
export { cutText, type FieldError, type FieldReason, FIELD_ERRORS_MAX, invalidObject } from './field.js';
export type { FullObjectMeta, OwnerReference, ManagedFieldsEntry } from './object-meta.js';
export { isDNS1123Label, isDNS1123Subdomain, isQualifiedName } from './names.js';
