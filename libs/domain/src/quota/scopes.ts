import type { KubeObject, ScopedResourceSelectorRequirement } from '../kube/types.js';
import type { UsageEvaluator } from '../usage/evaluator.js';

/**
 * Whether the object satisfies every requirement (an empty list always matches). Each
 * requirement is asked of the evaluator on its own, so duplicates in the list cannot make
 * a partial match look complete.
 */
export function matchesAllScopes(
  evaluator: UsageEvaluator,
  object: KubeObject,
  requirements: readonly ScopedResourceSelectorRequirement[],
): boolean {
  return requirements.every((requirement) => evaluator.matchingScopes(object, [requirement]).length > 0);
}

/**
 * Kubernetes' generic `Matches`: a quota applies to an object when the evaluator charges at
 * least one of the quota's hard resource names and the object satisfies all of the quota's
 * scope requirements.
 */
export function quotaMatchesObject(
  evaluator: UsageEvaluator,
  hardNames: readonly string[],
  requirements: readonly ScopedResourceSelectorRequirement[],
  object: KubeObject,
): boolean {
  return evaluator.matchingResources(hardNames).length > 0 && matchesAllScopes(evaluator, object, requirements);
}
