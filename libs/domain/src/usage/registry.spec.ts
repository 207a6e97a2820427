import { describe, expect, it } from 'vitest';
import type { GroupResource, Operation } from '../kube/types.js';
import { ObjectCountEvaluator } from './count.js';
import { PodEvaluator } from './pod.js';
import { PersistentVolumeClaimEvaluator } from './pvc.js';
import { evaluatorFor, isIgnoredResource } from './registry.js';
import { ServiceEvaluator } from './service.js';
import { values } from './spec-support.js';

// The registry of pkg/quota/v1/evaluator/core/registry.go and the generic object-count
// evaluator of apiserver quota/v1/generic.

describe('the evaluator for a resource', () => {
  it.each<[string, GroupResource, unknown]>([
    ['pods have their own', { group: '', resource: 'pods' }, PodEvaluator],
    ['services have their own', { group: '', resource: 'services' }, ServiceEvaluator],
    ['claims have their own', { group: '', resource: 'persistentvolumeclaims' }, PersistentVolumeClaimEvaluator],
    ['config maps are counted', { group: '', resource: 'configmaps' }, ObjectCountEvaluator],
    ['deployments are counted', { group: 'apps', resource: 'deployments' }, ObjectCountEvaluator],
    ['pods of another group are only counted', { group: 'example.com', resource: 'pods' }, ObjectCountEvaluator],
  ])('%s', (_name, groupResource, kind) => {
    const evaluator = evaluatorFor(groupResource);
    expect(evaluator).toBeInstanceOf(kind as new (...args: never[]) => unknown);
    expect(evaluator.groupResource).toEqual(groupResource);
  });
});

describe('object counting', () => {
  it.each<[string, GroupResource, Record<string, string>]>([
    ['a config map counts under its legacy name too', { group: '', resource: 'configmaps' }, { 'count/configmaps': '1', configmaps: '1' }],
    ['a secret counts under its legacy name too', { group: '', resource: 'secrets' }, { 'count/secrets': '1', secrets: '1' }],
    [
      'a replication controller counts under its legacy name too',
      { group: '', resource: 'replicationcontrollers' },
      { 'count/replicationcontrollers': '1', replicationcontrollers: '1' },
    ],
    [
      'a resource quota counts under its legacy name too',
      { group: '', resource: 'resourcequotas' },
      { 'count/resourcequotas': '1', resourcequotas: '1' },
    ],
    ['another core kind counts only as count/<resource>', { group: '', resource: 'serviceaccounts' }, { 'count/serviceaccounts': '1' }],
    ['a kind of a group counts as count/<resource>.<group>', { group: 'apps', resource: 'deployments' }, { 'count/deployments.apps': '1' }],
    [
      'a custom resource counts as count/<resource>.<group>',
      { group: 'stable.example.com', resource: 'crontabs' },
      { 'count/crontabs.stable.example.com': '1' },
    ],
  ])('%s', (_name, groupResource, expected) => {
    const evaluator = evaluatorFor(groupResource);
    expect(values(evaluator.usage({ kind: 'Anything' }))).toEqual(values(expected));
    expect(evaluator.matchingResources(['pods', ...Object.keys(expected).reverse(), 'cpu'])).toEqual(Object.keys(expected).sort());
  });

  it.each<[Operation, string | undefined, boolean]>([
    ['CREATE', undefined, true],
    ['UPDATE', undefined, false],
    ['DELETE', undefined, false],
    ['CONNECT', undefined, false],
  ])('charges %s: %s', (operation, subresource, expected) => {
    expect(evaluatorFor({ group: 'apps', resource: 'deployments' }).handles(operation, subresource)).toBe(expected);
  });

  it('has no scopes and no must-specify rule', () => {
    const evaluator = evaluatorFor({ group: '', resource: 'configmaps' });
    const scope = { scopeName: 'BestEffort', operator: 'Exists' };
    expect(evaluator.matchingScopes({}, [scope])).toEqual([]);
    expect(evaluator.uncoveredQuotaScopes([scope], [])).toEqual([]);
    expect(evaluator.constraints(['configmaps'], {})).toEqual([]);
  });
});

describe('resources quota ignores', () => {
  it.each<[GroupResource, boolean]>([
    [{ group: '', resource: 'events' }, true],
    [{ group: 'events.k8s.io', resource: 'events' }, true],
    [{ group: '', resource: 'bindings' }, true],
    [{ group: 'authorization.k8s.io', resource: 'subjectaccessreviews' }, true],
    [{ group: '', resource: 'pods' }, false],
    [{ group: 'example.com', resource: 'events' }, false],
  ])('%o ignored: %s', (groupResource, expected) => {
    expect(isIgnoredResource(groupResource)).toBe(expected);
  });
});
