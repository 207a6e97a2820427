import { describe, expect, it } from 'vitest';
import { objectShapeProblem, POD_CONTAINERS_MAX } from './shape.js';

const pods = { group: '', resource: 'pods' };
const pvcs = { group: '', resource: 'persistentvolumeclaims' };
const services = { group: '', resource: 'services' };
const container = { name: 'app', image: 'x', resources: { requests: { cpu: '1' } } };

describe('objectShapeProblem', () => {
  it.each([
    ['a well-formed pod', pods, { metadata: { name: 'p', uid: 'u' }, spec: { containers: [container] } }, undefined],
    ['a pod without a spec', pods, { metadata: { name: 'p' } }, undefined],
    ['a uid that is not a string', pods, { metadata: { uid: [[1]] } }, 'object.metadata.uid'],
    ['metadata that is a list', pods, { metadata: [] }, 'object.metadata'],
    ['a null container', pods, { spec: { containers: [null] } }, 'object.spec.containers[0]'],
    ['containers that are a string', pods, { spec: { containers: 'x' } }, 'object.spec.containers'],
    [
      'an init container with a list for resources',
      pods,
      { spec: { initContainers: [{ name: 'i', resources: [] }] } },
      'object.spec.initContainers[0].resources',
    ],
    [
      'a request that is an object',
      pods,
      { spec: { containers: [{ name: 'a', resources: { limits: { cpu: { m: 1 } } } }] } },
      'object.spec.containers[0].resources.limits.cpu',
    ],
    ['overhead that is a string', pods, { spec: { overhead: 'x' } }, 'object.spec.overhead'],
    ['a claim whose requests are a list', pvcs, { spec: { resources: { requests: [] } } }, 'object.spec.resources.requests'],
    ['a service with a null port', services, { spec: { ports: [null] } }, 'object.spec.ports[0]'],
    ['a service whose type is a number', services, { spec: { type: 1 } }, 'object.spec.type'],
    ['not an object at all', pods, 'pod', 'object'],
  ])('%s', (_case, groupResource, object, field) => {
    expect(objectShapeProblem(groupResource, object)?.field).toBe(field);
  });

  it(`refuses a pod with more than ${POD_CONTAINERS_MAX} containers in all, naming the limit`, () => {
    const half = Array.from({ length: POD_CONTAINERS_MAX / 2 + 1 }, () => container);
    const problem = objectShapeProblem(pods, { spec: { containers: half, initContainers: half } });
    expect(problem).toEqual({
      field: 'object.spec.containers',
      message: `Too many: ${POD_CONTAINERS_MAX + 2}: must have at most ${POD_CONTAINERS_MAX} containers, init containers and ephemeral containers in all`,
    });
    expect(objectShapeProblem(pods, { spec: { containers: half.slice(1), initContainers: half.slice(1) } })).toBeUndefined();
  });
});
