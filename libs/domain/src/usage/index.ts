export type * from './evaluator.js';
export { evaluatorFor, isIgnoredResource, IGNORED_RESOURCES, LEGACY_OBJECT_COUNT_ALIASES } from './registry.js';
export { ObjectCountEvaluator } from './count.js';
export { PodEvaluator, POD_OBJECT_COUNT_NAME, POD_RESOURCE_NAMES, POD_SCOPES } from './pod.js';
export { readPod, type PodModel, type PodContainer, type PodContainerStatus, type ContainerResources } from './pod-model.js';
export { podQOS, type PodQOSClass } from './pod-resources.js';
export { ServiceEvaluator, SERVICE_OBJECT_COUNT_NAME, SERVICE_RESOURCE_NAMES } from './service.js';
export {
  PersistentVolumeClaimEvaluator,
  PVC_OBJECT_COUNT_NAME,
  PVC_RESOURCE_NAMES,
  STORAGE_CLASS_SUFFIX,
  VOLUME_ATTRIBUTES_CLASS_SCOPE,
  resourceByStorageClass,
} from './pvc.js';
export {
  ResourceClaimEvaluator,
  RESOURCE_CLAIM_OBJECT_COUNT_NAME,
  DEVICE_CLASS_DEVICES_SUFFIX,
  ALLOCATION_RESULTS_MAX_SIZE,
  resourceByDeviceClass,
} from './resource-claim.js';
export { objectCountName } from './names.js';
