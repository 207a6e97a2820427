import type { GroupResource, KubeObject, Operation } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { field, FieldReader } from './fields.js';
import { intersection, objectCountName } from './names.js';
import { UnscopedEvaluator } from './evaluator-base.js';
import { selectFields } from '../kube/field-selection.js';
import { SERVICE_FIELDS } from '../kube/fields-read.js';
import type { UsageOptions } from './evaluator.js';

/** How services are charged (pkg/quota/v1/evaluator/core/services.go). */

const SERVICES: GroupResource = { group: '', resource: 'services' };
export const SERVICE_OBJECT_COUNT_NAME = objectCountName(SERVICES);

export const SERVICE_RESOURCE_NAMES: readonly string[] = [
  SERVICE_OBJECT_COUNT_NAME,
  'services',
  'services.nodeports',
  'services.loadbalancers',
];

export class ServiceEvaluator extends UnscopedEvaluator {
  readonly groupResource = SERVICES;

  /** CREATE and UPDATE: an update can change the type, and with it the node ports and load balancers. */
  handles(operation: Operation, _subresource?: string): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  matchingResources(input: readonly string[]): string[] {
    return intersection(input, SERVICE_RESOURCE_NAMES);
  }

  usage(object: KubeObject, options: UsageOptions = {}): ResourceList {
    const read = new FieldReader('service', options.stored);
    // Only what admission reads of a service (kube/fields-read.ts).
    const spec = read.object(field(read.object(selectFields(object, SERVICE_FIELDS), '') ?? {}, 'spec'), 'spec');
    const type = read.string(field(spec, 'type'), 'spec.type');
    const nodePortsAsked = read
      .array(field(spec, 'ports'), 'spec.ports')
      .map((raw, i) => read.optionalInteger(field(read.object(raw, `spec.ports[${i}]`), 'nodePort'), `spec.ports[${i}].nodePort`) ?? 0);
    const allocate = read.optionalBoolean(field(spec, 'allocateLoadBalancerNodePorts'), 'spec.allocateLoadBalancerNodePorts');
    read.done();

    let nodePorts = 0;
    let loadBalancers = 0;
    if (type === 'NodePort') {
      // Every port gets a node port, asked for or allocated.
      nodePorts = nodePortsAsked.length;
    } else if (type === 'LoadBalancer') {
      // Without node-port allocation only the ports that ask for a node port explicitly get one.
      nodePorts = allocate === false ? nodePortsAsked.filter((nodePort) => nodePort !== 0).length : nodePortsAsked.length;
      loadBalancers = 1;
    }
    return Resources.fromEntries([
      [SERVICE_OBJECT_COUNT_NAME, Quantity.fromInt(1n)],
      ['services', Quantity.fromInt(1n)],
      ['services.loadbalancers', Quantity.fromInt(BigInt(loadBalancers))],
      ['services.nodeports', Quantity.fromInt(BigInt(nodePorts))],
    ]);
  }
}
