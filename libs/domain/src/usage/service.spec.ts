import { describe, expect, it } from 'vitest';
import type { KubeObject, Operation } from '../kube/types.js';
import { ServiceEvaluator } from './service.js';
import { type Amounts, values } from './spec-support.js';

// Ported from pkg/quota/v1/evaluator/core/services_test.go, with the
// allocateLoadBalancerNodePorts rule of services.go added.

const evaluator = new ServiceEvaluator();

const service = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec });
const base = { 'count/services': '1', services: '1' };

describe('quota names a service is charged for', () => {
  it('keeps only the service names, sorted', () => {
    expect(evaluator.matchingResources(['configmaps', 'cpu', 'services', 'services.nodeports', 'services.loadbalancers'])).toEqual([
      'services',
      'services.loadbalancers',
      'services.nodeports',
    ]);
  });

  it('includes the object count', () => {
    expect(evaluator.matchingResources(['count/services', 'count/pods'])).toEqual(['count/services']);
  });
});

describe('service usage', () => {
  it.each<[string, Record<string, unknown>, Amounts]>([
    ['a load balancer without ports', { type: 'LoadBalancer' }, { ...base, 'services.nodeports': '0', 'services.loadbalancers': '1' }],
    [
      'a load balancer charges a node port per port',
      { type: 'LoadBalancer', ports: [{ port: 27443 }] },
      { ...base, 'services.nodeports': '1', 'services.loadbalancers': '1' },
    ],
    ['a cluster IP service charges neither', { type: 'ClusterIP' }, { ...base, 'services.nodeports': '0', 'services.loadbalancers': '0' }],
    [
      'a node port service charges a node port per port',
      { type: 'NodePort', ports: [{ port: 27443 }] },
      { ...base, 'services.nodeports': '1', 'services.loadbalancers': '0' },
    ],
    [
      'a node port service with two ports charges two',
      { type: 'NodePort', ports: [{ port: 27443 }, { port: 27444 }] },
      { ...base, 'services.nodeports': '2', 'services.loadbalancers': '0' },
    ],
    [
      'a load balancer without node-port allocation charges only explicit node ports',
      {
        type: 'LoadBalancer',
        allocateLoadBalancerNodePorts: false,
        ports: [{ port: 27443, nodePort: 30001 }, { port: 27444 }, { port: 27445, nodePort: 0 }],
      },
      { ...base, 'services.nodeports': '1', 'services.loadbalancers': '1' },
    ],
    [
      'a load balancer that allocates node ports charges every port',
      { type: 'LoadBalancer', allocateLoadBalancerNodePorts: true, ports: [{ port: 27443, nodePort: 30001 }, { port: 27444 }] },
      { ...base, 'services.nodeports': '2', 'services.loadbalancers': '1' },
    ],
    [
      'an external name service charges neither',
      { type: 'ExternalName', externalName: 'example.com', ports: [{ port: 80 }] },
      { ...base, 'services.nodeports': '0', 'services.loadbalancers': '0' },
    ],
    [
      'a service without a type charges neither',
      { ports: [{ port: 80 }] },
      { ...base, 'services.nodeports': '0', 'services.loadbalancers': '0' },
    ],
  ])('%s', (_name, spec, expected) => {
    expect(values(evaluator.usage(service(spec)))).toEqual(values(expected));
  });

  it('rejects ports that are not a list', () => {
    expect(() => evaluator.usage(service({ type: 'NodePort', ports: 3 }))).toThrow(
      expect.objectContaining({ code: 'ObjectInvalid', causes: [expect.objectContaining({ field: 'spec.ports' })] }),
    );
  });
});

describe('the must-specify rule for services', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['a load balancer', { type: 'LoadBalancer' }, ['services.loadbalancers']],
    ['a cluster IP service', { type: 'ClusterIP' }, ['services.loadbalancers', 'services']],
    ['a node port service', { type: 'NodePort', ports: [{ port: 27443 }] }, ['services.nodeports']],
    ['a node port service with two ports', { type: 'NodePort', ports: [{ port: 27443 }, { port: 27444 }] }, ['services.nodeports']],
  ])('never applies: %s', (_name, spec, required) => {
    expect(evaluator.constraints(required, service(spec))).toEqual([]);
  });
});

describe('which service operations are charged', () => {
  it.each<[Operation, boolean]>([
    ['CREATE', true],
    ['UPDATE', true],
    ['DELETE', false],
    ['CONNECT', false],
  ])('%s: %s', (operation, expected) => {
    expect(evaluator.handles(operation)).toBe(expected);
  });

  it('has no scopes', () => {
    const scope = { scopeName: 'BestEffort', operator: 'Exists' };
    expect(evaluator.matchingScopes(service({}), [scope])).toEqual([]);
    expect(evaluator.uncoveredQuotaScopes([scope], [])).toEqual([]);
  });
});
