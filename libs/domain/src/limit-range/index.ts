export { applyJsonPatch, deepEqualJson, escapePointerToken, jsonPointer } from './json-patch.js';
export type { JsonPatchOperation } from './json-patch.js';
export {
  LIMIT_RANGER_ANNOTATION,
  LIMIT_TYPE_CONTAINER,
  LIMIT_TYPE_POD,
  LIMIT_TYPE_PVC,
  parseLimitRange,
  withLimitRangeApiDefaults,
} from './limit-range.js';
export type { ParsedLimitRange, ParsedLimitRangeItem } from './limit-range.js';
export { applyDefaults, computePodDefaults, defaultContainerResourceRequirements } from './defaults.js';
export type { ContainerDefaulting, DefaultRequirements, PodDefaulting } from './defaults.js';
export { parseLimitRangerPod, limitRangerPodLimits, limitRangerPodRequests } from './pod-resources.js';
export type { LimitRangerContainer, LimitRangerPodResources, LimitRangerPodOptions } from './pod-resources.js';
export { formatRatio, limitRequestRatioConstraint, maxConstraint, maxRequestConstraint, minConstraint } from './constraints.js';
export type { ConstraintFailure, LimitConstraint, LimitProblem } from './constraints.js';
export { aggregateMessage, podLimitViolations, pvcLimitViolations, validatePodLimits, validatePvcLimits } from './validate.js';
export type { LimitValidation, LimitViolation } from './validate.js';
export { admitLimitRanger, limitRangerForbiddenMessage, limitRangerHandles } from './limit-ranger-plugin.js';
export type { LimitRangerAttributes, LimitRangerDecision, LimitRangerRequest } from './limit-ranger-plugin.js';
export { limitRangeForLedger } from './definition.js';
