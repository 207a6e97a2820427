import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkResources,
  DEFAULT_RESOURCES,
  formatResource,
  groupOfApiVersion,
  KNOWN_KINDS,
  kindsWith,
  knownKindOf,
  resourceOfKind,
} from './kinds.js';

describe('the well-known kinds every source maps through', () => {
  it.each([
    ['Pod', 'v1', { group: '', resource: 'pods' }],
    ['PersistentVolumeClaim', 'v1', { group: '', resource: 'persistentvolumeclaims' }],
    ['Service', 'v1', { group: '', resource: 'services' }],
    ['ConfigMap', 'v1', { group: '', resource: 'configmaps' }],
    ['Secret', 'v1', { group: '', resource: 'secrets' }],
    ['ReplicationController', 'v1', { group: '', resource: 'replicationcontrollers' }],
    ['ResourceQuota', 'v1', { group: '', resource: 'resourcequotas' }],
    ['Job', 'batch/v1', { group: 'batch', resource: 'jobs' }],
    ['CronJob', 'batch/v1', { group: 'batch', resource: 'cronjobs' }],
    ['Deployment', 'apps/v1', { group: 'apps', resource: 'deployments' }],
    ['ReplicaSet', 'apps/v1', { group: 'apps', resource: 'replicasets' }],
    ['StatefulSet', 'apps/v1', { group: 'apps', resource: 'statefulsets' }],
    ['DaemonSet', 'apps/v1', { group: 'apps', resource: 'daemonsets' }],
    ['ResourceClaim', 'resource.k8s.io/v1', { group: 'resource.k8s.io', resource: 'resourceclaims' }],
  ])('maps a %s of %s to its resource and back', (kind, apiVersion, groupResource) => {
    expect(resourceOfKind(kind, apiVersion)).toEqual(groupResource);
    expect(knownKindOf(groupResource)).toMatchObject({ kind, apiVersion, groupResource });
  });

  it('covers by default exactly the known kinds, each once', () => {
    expect(DEFAULT_RESOURCES).toHaveLength(15);
    expect(new Set(DEFAULT_RESOURCES.map(formatResource)).size).toBe(15);
    expect(new Set(KNOWN_KINDS.map((k) => k.kind)).size).toBe(15);
  });

  it.each([
    ['a kind of the right name in another group (a custom resource)', 'Job', 'example.com/v1'],
    ['a core kind under a group', 'Pod', 'apps/v1'],
    ['a group kind in the core group', 'Deployment', 'v1'],
    ['an unknown kind', 'Widget', 'v1'],
    ['a kind spelled in another case', 'pod', 'v1'],
  ])('does not map %s', (_case, kind, apiVersion) => {
    expect(resourceOfKind(kind, apiVersion)).toBeUndefined();
  });

  it('maps a known kind in any version of its group (the group decides, not the version)', () => {
    const version = fc.stringMatching(/^v[1-9][0-9]?((alpha|beta)[1-9])?$/);
    fc.assert(
      fc.property(fc.constantFrom(...KNOWN_KINDS), version, (known, v) => {
        const group = known.groupResource.group;
        expect(resourceOfKind(known.kind, group === '' ? v : `${group}/${v}`)).toEqual(known.groupResource);
        expect(knownKindOf(resourceOfKind(known.kind, known.apiVersion) ?? { group: '?', resource: '?' })?.kind).toBe(known.kind);
      }),
    );
  });

  it.each([
    ['v1', ''],
    ['apps/v1', 'apps'],
    ['batch/v1beta1', 'batch'],
    ['resource.k8s.io/v1', 'resource.k8s.io'],
  ])('reads the group of apiVersion %s as %j', (apiVersion, group) => {
    expect(groupOfApiVersion(apiVersion)).toBe(group);
  });

  it('spells resources as Kubernetes does', () => {
    expect(formatResource({ group: '', resource: 'pods' })).toBe('pods');
    expect(formatResource({ group: 'apps', resource: 'deployments' })).toBe('deployments.apps');
  });
});

describe('the resources a source is configured to cover', () => {
  it('returns their kinds, in the order given', () => {
    expect(
      checkResources('test', [
        { group: 'apps', resource: 'deployments' },
        { group: '', resource: 'pods' },
      ]).map((k) => k.kind),
    ).toEqual(['Deployment', 'Pod']);
  });

  it('refuses a resource no source can list: it would be covered yet never listed, and all its reservations released', () => {
    expect(() => checkResources('test', [{ group: 'example.com', resource: 'widgets' }])).toThrow(
      /test inventory: cannot cover widgets\.example\.com: not one of pods, /,
    );
    expect(() => checkResources('test', [{ group: '', resource: 'deployments' }])).toThrow(/cannot cover deployments:/);
  });

  it('refuses a resource listed twice', () => {
    expect(() =>
      checkResources('test', [
        { group: '', resource: 'pods' },
        { group: '', resource: 'pods' },
      ]),
    ).toThrow(/pods is listed twice/);
  });
});

describe('kindsWith (CUSTOM_RESOURCES)', () => {
  const widget = { kind: 'Widget', apiVersion: 'example.com/v1', groupResource: { group: 'example.com', resource: 'widgets' } };

  it('maps the known kinds and the custom ones, which sources then cover and read', () => {
    const kinds = kindsWith([widget]);
    expect(kinds.at(-1)).toBe(widget);
    expect(resourceOfKind('Widget', 'example.com/v1', kinds)).toEqual(widget.groupResource);
    expect(resourceOfKind('Widget', 'example.com/v1')).toBeUndefined();
    expect(checkResources('test', [widget.groupResource], kinds)).toEqual([widget]);
  });

  it('refuses a custom resource that redefines a known one, by resource or by kind in its group', () => {
    expect(() => kindsWith([{ kind: 'Thing', apiVersion: 'v1', groupResource: { group: '', resource: 'pods' } }])).toThrow(
      /custom resource pods \(Thing\) clashes with pods \(Pod\)/,
    );
    expect(() => kindsWith([{ kind: 'Deployment', apiVersion: 'apps/v2', groupResource: { group: 'apps', resource: 'deploys' } }])).toThrow(
      /clashes with deployments\.apps/,
    );
    expect(() => kindsWith([widget, widget])).toThrow(/clashes/);
  });
});
