import { describe, expect, it } from 'vitest';
import type { KubeObject, Operation } from '../kube/types.js';
import { ServiceEvaluator } from './service.js';
import { type Amounts, values } from './spec-support.js';

// Cases beyond the ported tables, each answered from pkg/quota/v1/evaluator/core/services.go
// (master): Usage counts node ports by type and, for a load balancer that allocates none,
// by the ports that name one; Handles charges CREATE and UPDATE whatever the subresource.

const evaluator = new ServiceEvaluator();
const service = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec });
const charged = (nodePorts: string, loadBalancers: string): Amounts => ({
  'count/services': '1',
  services: '1',
  'services.nodeports': nodePorts,
  'services.loadbalancers': loadBalancers,
});

describe('service usage (Kubernetes cases)', () => {
  it.each<[string, Record<string, unknown>, Amounts]>([
    ['a node port service without ports charges no node port', { type: 'NodePort' }, charged('0', '0')],
    [
      'a node port service charges every port, TCP and UDP, named node port or not',
      {
        type: 'NodePort',
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP', nodePort: 30053 },
          { port: 80, nodePort: 0 },
        ],
      },
      charged('3', '0'),
    ],
    [
      'a load balancer leaving node-port allocation unset charges every port',
      { type: 'LoadBalancer', ports: [{ port: 80 }, { port: 443, nodePort: 30443 }] },
      charged('2', '1'),
    ],
    [
      'a load balancer allocating no node ports, none named, charges none',
      { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80 }, { port: 443, nodePort: 0 }] },
      charged('0', '1'),
    ],
    [
      'a load balancer allocating no node ports charges each named one, mixed protocols alike',
      {
        type: 'LoadBalancer',
        allocateLoadBalancerNodePorts: false,
        ports: [
          { port: 53, protocol: 'UDP', nodePort: 30053 },
          { port: 53, protocol: 'TCP', nodePort: 30054 },
        ],
      },
      charged('2', '1'),
    ],
    [
      'a cluster IP service naming a node port charges none',
      { type: 'ClusterIP', ports: [{ port: 80, nodePort: 30080 }] },
      charged('0', '0'),
    ],
    [
      'a type Kubernetes does not know charges no node port nor load balancer',
      { type: 'Headless', ports: [{ port: 80 }] },
      charged('0', '0'),
    ],
    ['a lower-case type is not NodePort', { type: 'nodeport', ports: [{ port: 80 }] }, charged('0', '0')],
  ])('%s', (_name, spec, expected) => {
    expect(values(evaluator.usage(service(spec)))).toEqual(values(expected));
  });

  it('refuses allocateLoadBalancerNodePorts that is not a boolean, as decoding would', () => {
    expect(() => evaluator.usage(service({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: 'false', ports: [{ port: 80 }] }))).toThrow(
      expect.objectContaining({
        code: 'ObjectInvalid',
        causes: [expect.objectContaining({ field: 'spec.allocateLoadBalancerNodePorts' })],
      }),
    );
  });
});

describe('which service operations are charged (Kubernetes cases)', () => {
  it.each<[string, Operation, string, boolean]>([
    ['an update of the status is charged (the subresource is not looked at)', 'UPDATE', 'status', true],
    ['a create through a subresource is charged', 'CREATE', 'status', true],
    ['a delete is never charged', 'DELETE', '', false],
  ])('%s', (_name, operation, subresource, expected) => {
    expect(evaluator.handles(operation, subresource)).toBe(expected);
  });

  it('matches its names sorted and once each, whatever the input order', () => {
    expect(
      evaluator.matchingResources(['services.nodeports', 'services', 'count/services', 'services', 'services.loadbalancers', 'pods']),
    ).toEqual(['count/services', 'services', 'services.loadbalancers', 'services.nodeports']);
  });
});
