import { describe, expect, it } from 'vitest';
import type { GroupResource, Operation } from '../kube/types.js';
import { ObjectCountEvaluator } from './count.js';
import { evaluatorFor, isIgnoredResource } from './registry.js';
import { ResourceClaimEvaluator } from './resource-claim.js';
import { values } from './spec-support.js';

// Cases beyond the ported tables, each answered from pkg/quota/v1/evaluator/core/registry.go,
// apiserver quota/v1/generic (ObjectCountQuotaResourceNameFor, objectCountEvaluator) and
// pkg/quota/v1/install (the ignored resources), master.

describe('object counting (Kubernetes cases)', () => {
  it.each<[string, GroupResource, Record<string, string>]>([
    [
      'deployments of apps are counted as count/deployments.apps',
      { group: 'apps', resource: 'deployments' },
      { 'count/deployments.apps': '1' },
    ],
    ['jobs of batch are counted as count/jobs.batch', { group: 'batch', resource: 'jobs' }, { 'count/jobs.batch': '1' }],
    [
      'pods of another group are only counted, under that group',
      { group: 'metrics.k8s.io', resource: 'pods' },
      { 'count/pods.metrics.k8s.io': '1' },
    ],
    [
      'config maps of another group have no legacy alias',
      { group: 'example.com', resource: 'configmaps' },
      { 'count/configmaps.example.com': '1' },
    ],
    ['core services accounts are counted without a group', { group: '', resource: 'serviceaccounts' }, { 'count/serviceaccounts': '1' }],
  ])('%s', (_name, groupResource, expected) => {
    const evaluator = evaluatorFor(groupResource);
    expect(evaluator).toBeInstanceOf(ObjectCountEvaluator);
    expect(values(evaluator.usage({}))).toEqual(values(expected));
  });

  it('matches the count name once and sorted, never the bare or group-less name', () => {
    const evaluator = evaluatorFor({ group: 'apps', resource: 'deployments' });
    expect(
      evaluator.matchingResources([
        'deployments',
        'count/deployments',
        'count/deployments.apps',
        'count/deployments.apps',
        'deployments.apps',
      ]),
    ).toEqual(['count/deployments.apps']);
  });

  it('matches a legacy alias and the count name, sorted', () => {
    expect(evaluatorFor({ group: '', resource: 'secrets' }).matchingResources(['secrets', 'count/secrets'])).toEqual([
      'count/secrets',
      'secrets',
    ]);
  });

  it.each<[string, Operation, string, boolean]>([
    ['a create through a subresource is counted (the subresource is not looked at)', 'CREATE', 'token', true],
    ['an update is never counted', 'UPDATE', '', false],
  ])('%s', (_name, operation, subresource, expected) => {
    expect(evaluatorFor({ group: '', resource: 'serviceaccounts' }).handles(operation, subresource)).toBe(expected);
  });

  it('gives DRA resource claims their own evaluator (DynamicResourceAllocation is on by default)', () => {
    expect(evaluatorFor({ group: 'resource.k8s.io', resource: 'resourceclaims' })).toBeInstanceOf(ResourceClaimEvaluator);
    expect(evaluatorFor({ group: 'resource.k8s.io', resource: 'resourceclaimtemplates' })).toBeInstanceOf(ObjectCountEvaluator);
  });

  it.each<[GroupResource, boolean]>([
    [{ group: 'authentication.k8s.io', resource: 'selfsubjectreviews' }, true],
    [{ group: 'authorization.k8s.io', resource: 'localsubjectaccessreviews' }, true],
    [{ group: '', resource: 'componentstatuses' }, true],
    [{ group: 'authentication.k8s.io', resource: 'tokenrequests' }, false],
    [{ group: '', resource: 'serviceaccounts' }, false],
  ])('%o is ignored by quota: %s', (groupResource, expected) => {
    expect(isIgnoredResource(groupResource)).toBe(expected);
  });
});
