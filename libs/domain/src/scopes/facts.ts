import type { ResourceQuotaSpec, ScopedResourceSelectorRequirement } from '../kube/types.js';
import { scopeValueMatcher } from './selector.js';

/**
 * What a quota's scopes can ask of an object, captured once at admission and stored with the
 * reservation. A quota defined or changed later is matched against these facts, so the ledger
 * never needs the whole object to know which quotas an old reservation counts toward, and
 * admission and the fold cannot disagree: both match through `factsMatchRequirement`.
 *
 * A boolean fact answers a yes/no scope (Terminating, BestEffort, CrossNamespacePodAffinity …);
 * a list answers a value scope a selector tests (PriorityClass: the pod's class, if any;
 * VolumeAttributesClass: every class a claim refers to while it moves between them). A scope
 * missing from the facts does not apply to that kind of object and never matches it.
 */
export type ScopeFacts = Readonly<Record<string, boolean | readonly string[]>>;

/** Whether an object with these facts satisfies one scope requirement (Kubernetes' semantics). */
export function factsMatchRequirement(facts: ScopeFacts, requirement: ScopedResourceSelectorRequirement): boolean {
  if (!Object.prototype.hasOwnProperty.call(facts, requirement.scopeName)) return false;
  const fact = facts[requirement.scopeName] as boolean | readonly string[];
  // Yes/no scopes ignore the operator: validation only admits Exists for them.
  if (typeof fact === 'boolean') return fact;
  // Exists is answered without building a selector, as Kubernetes does (values unchecked).
  if (requirement.operator === 'Exists') return fact.length > 0;
  const matcher = scopeValueMatcher(requirement);
  if (fact.length === 0) return matcher.matches(undefined);
  // An object carrying several values matches a selector that any of them satisfies.
  return fact.some((value) => matcher.matches(value));
}

/** Whether the facts satisfy every requirement (an empty list always matches). */
export function factsMatchAll(facts: ScopeFacts, requirements: readonly ScopedResourceSelectorRequirement[]): boolean {
  return requirements.every((requirement) => factsMatchRequirement(facts, requirement));
}

/** The requirements, out of `scopes`, that an object with these facts satisfies. */
export function matchingScopesByFacts(
  facts: ScopeFacts,
  scopes: readonly ScopedResourceSelectorRequirement[],
): ScopedResourceSelectorRequirement[] {
  return scopes.filter((scope) => factsMatchRequirement(facts, scope));
}

/**
 * A quota's scopes as one list of requirements: each `spec.scopes` entry becomes an `Exists`
 * requirement, followed by `spec.scopeSelector.matchExpressions` (Kubernetes'
 * getScopeSelectorsFromQuota).
 */
export function quotaScopeRequirements(spec: ResourceQuotaSpec | undefined): ScopedResourceSelectorRequirement[] {
  const fromScopes = (spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: 'Exists' }));
  return [...fromScopes, ...(spec?.scopeSelector?.matchExpressions ?? [])];
}
