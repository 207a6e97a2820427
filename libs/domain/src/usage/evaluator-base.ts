import type { GroupResource, KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { ScopeFacts } from '../scopes/facts.js';
import type { UsageEvaluator, UsageOptions } from './evaluator.js';

/**
 * An evaluator for a kind that quota scopes never apply to and that has no must-specify rule
 * (services, resource claims, object counts): only what is charged differs between them.
 */
export abstract class UnscopedEvaluator implements UsageEvaluator {
  abstract readonly groupResource: GroupResource;
  abstract handles(operation: Operation, subresource?: string, object?: KubeObject, oldObject?: KubeObject): boolean;
  abstract matchingResources(input: readonly string[]): string[];
  abstract usage(object: KubeObject, options?: UsageOptions): ResourceList;

  scopeFacts(_object: KubeObject): ScopeFacts {
    return {};
  }

  matchingScopes(_object: KubeObject, _scopes: readonly ScopedResourceSelectorRequirement[]): ScopedResourceSelectorRequirement[] {
    return [];
  }

  uncoveredQuotaScopes(
    _limitedScopes: readonly ScopedResourceSelectorRequirement[],
    _matchedQuotaScopes: readonly ScopedResourceSelectorRequirement[],
  ): ScopedResourceSelectorRequirement[] {
    return [];
  }

  constraints(_required: readonly string[], _object: KubeObject): string[] {
    return [];
  }
}
