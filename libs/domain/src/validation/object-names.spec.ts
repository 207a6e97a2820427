import { describe, expect, it } from 'vitest';
import { metadataNameProblem, nameRuleFor, OBJECT_UID_MAX_BYTES } from './object-names.js';
import { objectShapeProblem } from './shape.js';

const pods = { group: '', resource: 'pods' };
const services = { group: '', resource: 'services' };
const namespaces = { group: '', resource: 'namespaces' };
const roles = { group: 'rbac.authorization.k8s.io', resource: 'roles' };
const widgets = { group: 'example.com', resource: 'widgets' };

describe('the name rule of a resource, as Kubernetes has it', () => {
  it.each([
    ['a pod name is a DNS-1123 subdomain', pods, 'web-1.example', true],
    ['a pod name of 254 characters is too long', pods, 'a'.repeat(254), false],
    ['a pod name with upper case is refused', pods, 'Web', false],
    ['a Service name is a DNS-1035 label: no dots', services, 'web.example', false],
    ['a Service name starts with a letter', services, '1web', false],
    ['a Service name of 64 characters is too long', services, 's'.repeat(64), false],
    ['a Namespace name is a DNS-1123 label', namespaces, 'team-a', true],
    ['a Role may be named with colons (a path segment)', roles, 'system:controller:bootstrap-signer', true],
    ['a Role may not be named with a slash', roles, 'a/b', false],
    ['a custom resource name is a DNS-1123 subdomain', widgets, 'w1', true],
  ])('%s', (_case, groupResource, name, valid) => {
    expect(nameRuleFor(groupResource)(name, false).length === 0).toBe(valid);
  });

  it('allows a generateName ending in a dash (a suffix completes it)', () => {
    expect(nameRuleFor(services)('web-', true)).toEqual([]);
  });
});

describe('the names of an admitted object', () => {
  it('refuses a 3 MB name at once, naming the field and the limit, printing only the start of the value', () => {
    const name = 'a'.repeat(3_000_000);
    const started = performance.now();
    const problem = metadataNameProblem(pods, { name }, 'object.metadata');
    expect(performance.now() - started).toBeLessThan(500);
    expect(problem?.field).toBe('object.metadata.name');
    expect(problem?.message).toBe(`Invalid value: "${'a'.repeat(256)}"... (3000000 characters): must be no more than 253 characters`);
    expect(problem?.message.length).toBeLessThan(1024);
  });

  it.each([
    ['generateName', { generateName: 'Web-' }, 'object.metadata.generateName'],
    ['namespace', { name: 'web', namespace: 'a.b' }, 'object.metadata.namespace'],
    ['uid', { name: 'web', uid: 'u'.repeat(OBJECT_UID_MAX_BYTES + 1) }, 'object.metadata.uid'],
  ])('refuses a bad %s', (_case, metadata, field) => {
    expect(metadataNameProblem(pods, metadata, 'object.metadata')?.field).toBe(field);
  });

  it('checks them in the shape check both admission routes run first', () => {
    expect(objectShapeProblem(services, { metadata: { name: 'web.example' } })).toMatchObject({ field: 'object.metadata.name' });
    expect(objectShapeProblem(pods, { metadata: { name: 'web', uid: '0d6e2f0a-6bd2-4cbb-8e68-3c0e1f4d2a77' } })).toBeUndefined();
  });
});
