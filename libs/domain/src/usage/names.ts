import type { GroupResource } from '../kube/types.js';
import { isQualifiedName as qualifiedNameProblems, isValidLabelValue as labelValueProblems } from '../validation/names.js';

/**
 * Resource-name rules the evaluators share: Kubernetes' k8s.io/api core/v1 constants and the
 * predicates of pkg/apis/core/v1/helper and the quota evaluators.
 */

export const REQUESTS_PREFIX = 'requests.';
export const LIMITS_PREFIX = 'limits.';
export const HUGEPAGES_PREFIX = 'hugepages-';
export const REQUESTS_HUGEPAGES_PREFIX = 'requests.hugepages-';
/** Names in this namespace (and unprefixed names) are Kubernetes' own. */
export const DEFAULT_NAMESPACE_PREFIX = 'kubernetes.io/';
/** DRA's implicit extended resources: `deviceclass.resource.kubernetes.io/<device class>`. */
export const DEVICE_CLASS_PREFIX = 'deviceclass.resource.kubernetes.io/';

/** The `count/<resource>[.<group>]` name of a group/resource (ObjectCountQuotaResourceNameFor). */
export function objectCountName(groupResource: GroupResource): string {
  return groupResource.group === '' ? `count/${groupResource.resource}` : `count/${groupResource.resource}.${groupResource.group}`;
}

export function isPrefixedNativeResource(name: string): boolean {
  return name.includes(DEFAULT_NAMESPACE_PREFIX);
}

/** Unprefixed names are implicitly in the kubernetes.io namespace. */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || isPrefixedNativeResource(name);
}

export function isHugePageResourceName(name: string): boolean {
  return name.startsWith(HUGEPAGES_PREFIX);
}

/**
 * A resource outside kubernetes.io, not itself `requests.`-prefixed, whose quota name
 * `requests.<name>` is a qualified name.
 */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith(REQUESTS_PREFIX)) return false;
  return isQualifiedName(`${REQUESTS_PREFIX}${name}`);
}

/** An extended resource, or a DRA device-class resource (scheduler util IsDRAExtendedResourceName). */
export function isDRAExtendedResourceName(name: string): boolean {
  return isExtendedResourceName(name) || name.startsWith(DEVICE_CLASS_PREFIX);
}

/**
 * Whether a quota name charges an extended resource. Extended resources cannot be
 * overcommitted, so only the `requests.` form exists.
 */
export function isExtendedResourceNameForQuota(name: string): boolean {
  const nonNative = !isNativeResource(name);
  const implicitDeviceClass = name.startsWith(`${REQUESTS_PREFIX}${DEVICE_CLASS_PREFIX}`);
  return (nonNative || implicitDeviceClass) && name.startsWith(REQUESTS_PREFIX);
}

/** apimachinery's IsQualifiedName: `[prefix/]name`, prefix a DNS subdomain, name ≤ 63 chars. */
export function isQualifiedName(value: string): boolean {
  return qualifiedNameProblems(value).length === 0;
}

/** apimachinery's IsValidLabelValue (the empty value is valid). */
export function isValidLabelValue(value: string): boolean {
  return labelValueProblems(value).length === 0;
}

/** Deduplicated, in first-seen order. */
export function unique(names: Iterable<string>): string[] {
  return [...new Set(names)];
}

/** Kubernetes' quota.Intersection: the names of `input` that `known` has, deduplicated and sorted. */
export function intersection(input: readonly string[], known: readonly string[]): string[] {
  const set = new Set(known);
  return unique(input.filter((name) => set.has(name))).sort(compareStrings);
}

/** Byte-wise string order, as Go's sort.Strings. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
