import type { GroupResource } from '../kube/types.js';
import { ObjectCountEvaluator } from './count.js';
import type { UsageEvaluator } from './evaluator.js';
import { PodEvaluator } from './pod.js';
import { PersistentVolumeClaimEvaluator } from './pvc.js';
import { ResourceClaimEvaluator } from './resource-claim.js';
import { ServiceEvaluator } from './service.js';

/**
 * Which evaluator charges which kind (pkg/quota/v1/evaluator/core/registry.go): pods,
 * services, volume claims and DRA resource claims (DynamicResourceAllocation is on by
 * default) have their own; four core kinds are counted under a legacy bare name
 * as well as `count/<resource>`; everything else is counted as `count/<resource>.<group>`
 * by an evaluator made on demand, as the quota admission plugin does.
 */

/** Core kinds Kubernetes also counts under their bare plural name. */
export const LEGACY_OBJECT_COUNT_ALIASES: Readonly<Record<string, string>> = {
  configmaps: 'configmaps',
  resourcequotas: 'resourcequotas',
  replicationcontrollers: 'replicationcontrollers',
  secrets: 'secrets',
};

const pods = new PodEvaluator();
const services = new ServiceEvaluator();
const persistentVolumeClaims = new PersistentVolumeClaimEvaluator();
const resourceClaims = new ResourceClaimEvaluator();

export function evaluatorFor(groupResource: GroupResource): UsageEvaluator {
  if (groupResource.group === '') {
    switch (groupResource.resource) {
      case 'pods':
        return pods;
      case 'services':
        return services;
      case 'persistentvolumeclaims':
        return persistentVolumeClaims;
    }
    if (Object.prototype.hasOwnProperty.call(LEGACY_OBJECT_COUNT_ALIASES, groupResource.resource)) {
      return new ObjectCountEvaluator(groupResource, LEGACY_OBJECT_COUNT_ALIASES[groupResource.resource]);
    }
  }
  if (groupResource.group === resourceClaims.groupResource.group && groupResource.resource === resourceClaims.groupResource.resource) {
    return resourceClaims;
  }
  return new ObjectCountEvaluator(groupResource);
}

/**
 * Resources quota never charges (pkg/quota/v1/install DefaultIgnoredResources): virtual
 * resources that are never stored, and events, which were never quota-ed.
 */
export const IGNORED_RESOURCES: readonly GroupResource[] = [
  { group: '', resource: 'bindings' },
  { group: '', resource: 'componentstatuses' },
  { group: 'authentication.k8s.io', resource: 'tokenreviews' },
  { group: 'authentication.k8s.io', resource: 'selfsubjectreviews' },
  { group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'localsubjectaccessreviews' },
  { group: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews' },
  { group: '', resource: 'events' },
  { group: 'events.k8s.io', resource: 'events' },
];

export function isIgnoredResource(groupResource: GroupResource): boolean {
  return IGNORED_RESOURCES.some((ignored) => ignored.group === groupResource.group && ignored.resource === groupResource.resource);
}
