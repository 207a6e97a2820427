import type { GroupResource, KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import type { ResourceList } from '../resources/resource-list.js';
import { matchingScopesByFacts, type ScopeFacts } from '../scopes/facts.js';
import type { UsageEvaluator, UsageOptions } from './evaluator.js';

/**
 * What every evaluator shares: scopes are matched through the object's scope facts (so
 * admission and the fold agree), and a limited scope is covered by any matched quota scope
 * of the same name. Each kind states only what it charges and which scopes it knows.
 */
export abstract class EvaluatorBase implements UsageEvaluator {
  abstract readonly groupResource: GroupResource;
  abstract handles(operation: Operation, subresource?: string, object?: KubeObject, oldObject?: KubeObject): boolean;
  abstract matchingResources(input: readonly string[]): string[];
  abstract scopeFacts(object: KubeObject, options?: UsageOptions): ScopeFacts;
  abstract constraints(required: readonly string[], object: KubeObject): string[];
  abstract usage(object: KubeObject, options?: UsageOptions): ResourceList;

  matchingScopes(object: KubeObject, scopes: readonly ScopedResourceSelectorRequirement[]): ScopedResourceSelectorRequirement[] {
    return matchingScopesByFacts(this.scopeFacts(object), scopes);
  }

  /** The limited scopes whose scope name no matched quota scope carries. */
  uncoveredQuotaScopes(
    limitedScopes: readonly ScopedResourceSelectorRequirement[],
    matchedQuotaScopes: readonly ScopedResourceSelectorRequirement[],
  ): ScopedResourceSelectorRequirement[] {
    return limitedScopes.filter((limited) => !matchedQuotaScopes.some((matched) => matched.scopeName === limited.scopeName));
  }
}

/**
 * A kind that quota scopes never apply to and that has no must-specify rule (services,
 * resource claims, object counts), as Kubernetes' generic evaluator: only what is charged differs.
 */
export abstract class UnscopedEvaluator extends EvaluatorBase {
  scopeFacts(_object: KubeObject, _options?: UsageOptions): ScopeFacts {
    return {};
  }

  override matchingScopes(_object: KubeObject, _scopes: readonly ScopedResourceSelectorRequirement[]): ScopedResourceSelectorRequirement[] {
    return [];
  }

  override uncoveredQuotaScopes(
    _limitedScopes: readonly ScopedResourceSelectorRequirement[],
    _matchedQuotaScopes: readonly ScopedResourceSelectorRequirement[],
  ): ScopedResourceSelectorRequirement[] {
    return [];
  }

  constraints(_required: readonly string[], _object: KubeObject): string[] {
    return [];
  }
}
