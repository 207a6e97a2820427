import type { GroupResource, KubeObject, Operation } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { intersection, objectCountName } from './names.js';
import { UnscopedEvaluator } from './evaluator-base.js';

/**
 * Kubernetes' generic object-count evaluator (apiserver quota/v1/generic): every object of
 * the kind is one `count/<resource>[.<group>]`, plus one of its legacy alias if it has one.
 */
export class ObjectCountEvaluator extends UnscopedEvaluator {
  /** The names one object is charged for: the count name, then the alias. */
  readonly resourceNames: readonly string[];

  constructor(
    readonly groupResource: GroupResource,
    alias?: string,
  ) {
    super();
    this.resourceNames = alias ? [objectCountName(groupResource), alias] : [objectCountName(groupResource)];
  }

  /** Counting changes only when an object is created. */
  handles(operation: Operation, _subresource?: string): boolean {
    return operation === 'CREATE';
  }

  matchingResources(input: readonly string[]): string[] {
    return intersection(input, this.resourceNames);
  }

  usage(_object: KubeObject): ResourceList {
    return Resources.fromEntries(this.resourceNames.map((name) => [name, Quantity.fromInt(1n)] as const));
  }
}
