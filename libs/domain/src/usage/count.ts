import type { ScopeFacts } from '../scopes/facts.js';
import type { GroupResource, KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { UsageEvaluator } from './evaluator.js';
import { intersection, objectCountName } from './names.js';

/**
 * Kubernetes' generic object-count evaluator (apiserver quota/v1/generic): every object of
 * the kind is one `count/<resource>[.<group>]`, plus one of its legacy alias if it has one.
 */
export class ObjectCountEvaluator implements UsageEvaluator {
  /** The names one object is charged for: the count name, then the alias. */
  readonly resourceNames: readonly string[];

  constructor(
    readonly groupResource: GroupResource,
    alias?: string,
  ) {
    this.resourceNames = alias ? [objectCountName(groupResource), alias] : [objectCountName(groupResource)];
  }

  /** Counting changes only when an object is created. */
  handles(operation: Operation, _subresource?: string): boolean {
    return operation === 'CREATE';
  }

  matchingResources(input: readonly string[]): string[] {
    return intersection(input, this.resourceNames);
  }

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

  usage(_object: KubeObject): ResourceList {
    return Resources.fromEntries(this.resourceNames.map((name) => [name, Quantity.fromInt(1n)] as const));
  }
}
