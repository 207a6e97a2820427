import { type Quantity } from '../quantity/quantity.js';
import { type FieldError, invalid, json, str } from './field.js';
import { isQualifiedName } from './names.js';

/**
 * Resource names, quota scopes and limit types as Kubernetes classifies them
 * (pkg/apis/core/helper) and validates them (pkg/apis/core/validation).
 */

const HUGEPAGES_PREFIX = 'hugepages-';
const REQUESTS_HUGEPAGES_PREFIX = 'requests.hugepages-';
const DEFAULT_NAMESPACE_PREFIX = 'kubernetes.io/';
const REQUESTS_PREFIX = 'requests.';

/** The resource names the quota system knows (hugepages names are also accepted, by prefix). */
export const STANDARD_QUOTA_RESOURCE_NAMES = [
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
] as const;

/** Resource names that are object counts: their quantities must be whole numbers. */
export const INTEGER_RESOURCE_NAMES = [
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
] as const;

/** Names known to the system at all (`IsStandardResourceName`): the quota names plus `storage`. */
const STANDARD_RESOURCE_NAMES: ReadonlySet<string> = new Set([...STANDARD_QUOTA_RESOURCE_NAMES, 'storage']);

const STANDARD_CONTAINER_RESOURCES: ReadonlySet<string> = new Set(['cpu', 'memory', 'ephemeral-storage']);
const quotaNames: ReadonlySet<string> = new Set(STANDARD_QUOTA_RESOURCE_NAMES);
const integerNames: ReadonlySet<string> = new Set(INTEGER_RESOURCE_NAMES);

export function isHugePageResourceName(name: string): boolean {
  return name.startsWith(HUGEPAGES_PREFIX);
}

export function isQuotaHugePageResourceName(name: string): boolean {
  return name.startsWith(HUGEPAGES_PREFIX) || name.startsWith(REQUESTS_HUGEPAGES_PREFIX);
}

/** Whether the quota system tracks this name (`IsStandardQuotaResourceName`). */
export function isStandardQuotaResourceName(name: string): boolean {
  return quotaNames.has(name) || isQuotaHugePageResourceName(name);
}

export function isStandardResourceName(name: string): boolean {
  return STANDARD_RESOURCE_NAMES.has(name) || isQuotaHugePageResourceName(name);
}

export function isStandardContainerResourceName(name: string): boolean {
  return STANDARD_CONTAINER_RESOURCES.has(name) || isHugePageResourceName(name);
}

/** Unprefixed names and `*kubernetes.io/` names are native. */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes(DEFAULT_NAMESPACE_PREFIX);
}

/**
 * An extended resource (e.g. `example.com/gpu`): not native, not `requests.`-prefixed, and
 * still a qualified name once `requests.` is put in front (how quota names it).
 */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith(REQUESTS_PREFIX)) return false;
  return isQualifiedName(`${REQUESTS_PREFIX}${name}`).length === 0;
}

/** Whether quantities of this resource must be whole numbers (`IsIntegerResourceName`). */
export function isIntegerResourceName(name: string): boolean {
  return integerNames.has(name) || isExtendedResourceName(name);
}

/** Native and not hugepages: requests may be below limits. */
export function isOvercommitAllowed(name: string): boolean {
  return isNativeResource(name) && !isHugePageResourceName(name);
}

// ---- quota scopes ----

/**
 * The scopes a quota may name. `VolumeAttributesClass` is the PVC scope added in
 * Kubernetes 1.33 (feature VolumeAttributesClass, GA since 1.34).
 */
export const STANDARD_RESOURCE_QUOTA_SCOPES = [
  'Terminating',
  'NotTerminating',
  'BestEffort',
  'NotBestEffort',
  'PriorityClass',
  'CrossNamespacePodAffinity',
  'VolumeAttributesClass',
] as const;
export type ResourceQuotaScope = (typeof STANDARD_RESOURCE_QUOTA_SCOPES)[number];

const scopes: ReadonlySet<string> = new Set(STANDARD_RESOURCE_QUOTA_SCOPES);

export function isStandardResourceQuotaScope(scope: string): scope is ResourceQuotaScope {
  return scopes.has(scope);
}

/** Scopes whose selector requirement can only be `Exists` (they are yes/no properties). */
export const EXISTS_ONLY_SCOPES: readonly ResourceQuotaScope[] = [
  'BestEffort',
  'NotBestEffort',
  'Terminating',
  'NotTerminating',
  'CrossNamespacePodAffinity',
];

/** Scopes that may not be combined in one quota. */
export const CONFLICTING_SCOPE_PAIRS: readonly (readonly [ResourceQuotaScope, ResourceQuotaScope])[] = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];

const POD_COUNT_RESOURCES: ReadonlySet<string> = new Set(['pods']);
const POD_COMPUTE_RESOURCES: ReadonlySet<string> = new Set([
  'cpu',
  'memory',
  'limits.cpu',
  'limits.memory',
  'requests.cpu',
  'requests.memory',
]);
const PVC_RESOURCES: ReadonlySet<string> = new Set(['persistentvolumeclaims', 'requests.storage']);

/** Whether a quota with this scope may limit this (standard) resource. */
export function isResourceQuotaScopeValidForResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return POD_COUNT_RESOURCES.has(resource) || POD_COMPUTE_RESOURCES.has(resource);
    case 'BestEffort':
      return POD_COUNT_RESOURCES.has(resource);
    case 'VolumeAttributesClass':
      return PVC_RESOURCES.has(resource);
    default:
      return true;
  }
}

// ---- limit types ----

export const STANDARD_LIMIT_TYPES = ['Pod', 'Container', 'PersistentVolumeClaim'] as const;
export type LimitType = (typeof STANDARD_LIMIT_TYPES)[number];
const limitTypes: ReadonlySet<string> = new Set(STANDARD_LIMIT_TYPES);

export function isStandardLimitRangeType(type: string): type is LimitType {
  return limitTypes.has(type);
}

// ---- validators (each returns Kubernetes' field errors) ----

const IS_INVALID_QUOTA_RESOURCE = 'must be a standard resource for quota';
export const IS_NEGATIVE_ERROR_MSG = 'must be greater than or equal to 0';
export const IS_NOT_INTEGER_ERROR_MSG = 'must be an integer';

const unprefixed = (name: string): boolean => !name.includes('/');

/** A qualified name; unprefixed names must be standard (`validateResourceName`). */
export function validateResourceName(name: string, field: string): FieldError[] {
  // Resource names are a named string type upstream, so they print as JSON.
  const errs = isQualifiedName(name).map((msg) => invalid(field, json(name), msg));
  if (errs.length > 0) return errs;
  if (unprefixed(name) && !isStandardResourceName(name)) {
    errs.push(invalid(field, json(name), 'must be a standard resource type or fully qualified'));
  }
  return errs;
}

/** What a container (or a Pod/Container LimitRange) may name (`validateContainerResourceName`). */
export function validateContainerResourceName(name: string, field: string): FieldError[] {
  const errs = validateResourceName(name, field);
  if (unprefixed(name)) {
    if (!isStandardContainerResourceName(name)) errs.push(invalid(field, json(name), 'must be a standard resource for containers'));
  } else if (!isNativeResource(name) && !isExtendedResourceName(name)) {
    errs.push(invalid(field, json(name), "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** What a quota's `hard`/`used` may name (`ValidateResourceQuotaResourceName`). */
export function validateResourceQuotaResourceName(name: string, field: string): FieldError[] {
  const errs = validateResourceName(name, field);
  if (unprefixed(name) && !isStandardQuotaResourceName(name)) errs.push(invalid(field, json(name), IS_INVALID_QUOTA_RESOURCE));
  return errs;
}

/** A quantity may not be negative (`ValidateNonnegativeQuantity`). */
export function validateNonnegativeQuantity(value: Quantity, field: string): FieldError[] {
  return value.sign() < 0 ? [invalid(field, str(value.toString()), IS_NEGATIVE_ERROR_MSG)] : [];
}

/** Non-negative, and whole for object counts and extended resources (`ValidateResourceQuantityValue`). */
export function validateResourceQuantityValue(resource: string, value: Quantity, field: string): FieldError[] {
  const errs = validateNonnegativeQuantity(value, field);
  if (isIntegerResourceName(resource) && value.milliValue() % 1000n !== 0n) {
    errs.push(invalid(field, json(value.toString()), IS_NOT_INTEGER_ERROR_MSG));
  }
  return errs;
}

/** A LimitRange type: a qualified name, and if unprefixed one of Pod/Container/PVC. */
export function validateLimitRangeTypeName(type: string, field: string): FieldError[] {
  const errs = isQualifiedName(type).map((msg) => invalid(field, json(type), msg));
  if (errs.length > 0) return errs;
  if (unprefixed(type) && !isStandardLimitRangeType(type)) {
    errs.push(invalid(field, json(type), 'must be a standard limit type or fully qualified'));
  }
  return errs;
}

/** Pod and Container limits name container resources; other types may name storage too. */
export function validateLimitRangeResourceName(type: string, name: string, field: string): FieldError[] {
  return type === 'Pod' || type === 'Container' ? validateContainerResourceName(name, field) : validateResourceName(name, field);
}
