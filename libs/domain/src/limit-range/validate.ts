import type { LimitRange, PersistentVolumeClaim, Pod } from '../kube/types.js';
import type { Quantity } from '../quantity/quantity.js';
import { EMPTY, get, parseResourceList, type ResourceList } from '../resources/resource-list.js';
import {
  limitRequestRatioConstraint,
  maxConstraint,
  maxRequestConstraint,
  minConstraint,
  type ConstraintFailure,
  type LimitConstraint,
  type LimitProblem,
} from './constraints.js';
import { LIMIT_TYPE_CONTAINER, LIMIT_TYPE_POD, LIMIT_TYPE_PVC, parseLimitRange, type ParsedLimitRangeItem } from './limit-range.js';
import {
  parseLimitRangerPod,
  limitRangerPodLimits,
  limitRangerPodRequests,
  type LimitRangerContainer,
  type LimitRangerPodOptions,
} from './pod-resources.js';
import { selectFields } from '../kube/field-selection.js';
import { PERSISTENT_VOLUME_CLAIM_FIELDS, POD_FIELDS } from '../kube/fields-read.js';

/**
 * LimitRanger's validating half (PodValidateLimitFunc, PersistentVolumeClaimValidateLimitFunc).
 * Kubernetes walks each constraint's resources in Go map order, which is random; we walk
 * them sorted by name so the same request always yields the same message.
 */

/** One broken constraint, with the text Kubernetes reports for it. */
export interface LimitViolation {
  /** `metadata.name` of the LimitRange. */
  readonly limitRange: string;
  /** `Container`, `Pod` or `PersistentVolumeClaim`. */
  readonly limitType: string;
  readonly resource: string;
  readonly constraint: LimitConstraint;
  readonly problem: LimitProblem;
  readonly enforced: Quantity;
  readonly observed?: Quantity;
  readonly ratio?: string;
  /** For a Container-type violation, which container. */
  readonly container?: { readonly name: string; readonly init: boolean; readonly index: number };
  readonly message: string;
}

export interface LimitValidation {
  readonly ok: boolean;
  /** The LimitRange that refused (Kubernetes stops at the first one with any violation). */
  readonly limitRange?: string;
  /** Every violation of that LimitRange, in the order Kubernetes finds them. */
  readonly violations: readonly LimitViolation[];
  /** utilerrors.NewAggregate's text of the violations (no `... is forbidden:` prefix). */
  readonly message?: string;
}

/**
 * utilerrors.NewAggregate(...).Error(): one message as is; several de-duplicated (the same
 * text from two containers counts once), joined by ", " and bracketed.
 */
export function aggregateMessage(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

type Check = (
  limitType: string,
  resource: string,
  enforced: Quantity,
  requests: ResourceList,
  limits: ResourceList,
) => ConstraintFailure | undefined;

/** Absent from both lists, or present in both with equal values (sameQuantity). */
function sameQuantity(resource: string, a: ResourceList, b: ResourceList): boolean {
  const qa = get(a, resource);
  const qb = get(b, resource);
  if ((qa === undefined) !== (qb === undefined)) return false;
  return qa === undefined || qb === undefined || qa.equals(qb);
}

/**
 * On an in-place resize, a resource whose request AND limit the update leaves as stored is
 * not checked again (resourceUnchanged): a stored value is valid as stored, even against a
 * LimitRange created after it. Without an old value (CREATE) nothing is skipped.
 */
function unchangedBy(old: { requests: ResourceList; limits: ResourceList } | undefined, requests: ResourceList, limits: ResourceList) {
  return (resource: string): boolean =>
    old !== undefined && sameQuantity(resource, requests, old.requests) && sameQuantity(resource, limits, old.limits);
}

/** min, then max, then ratio, each over its resources: the plugin's order. */
function checkItem(
  item: ParsedLimitRangeItem,
  requests: ResourceList,
  limits: ResourceList,
  skip: (resource: string) => boolean = () => false,
) {
  const failures: { resource: string; failure: ConstraintFailure }[] = [];
  const run = (bounds: ResourceList, check: Check) => {
    for (const resource of Object.keys(bounds).sort()) {
      if (skip(resource)) continue;
      const failure = check(item.type, resource, bounds[resource] as Quantity, requests, limits);
      if (failure) failures.push({ resource, failure });
    }
  };
  run(item.min, minConstraint);
  run(item.max, maxConstraint);
  run(item.maxLimitRequestRatio, limitRequestRatioConstraint);
  return failures;
}

function violation(
  limitRange: string,
  limitType: string,
  resource: string,
  failure: ConstraintFailure,
  container?: LimitRangerContainer,
): LimitViolation {
  return {
    limitRange,
    limitType,
    resource,
    constraint: failure.constraint,
    problem: failure.problem,
    enforced: failure.enforced,
    ...(failure.observed ? { observed: failure.observed } : {}),
    ...(failure.ratio ? { ratio: failure.ratio } : {}),
    ...(container ? { container: { name: container.name, init: container.init, index: container.index } } : {}),
    message: failure.message,
  };
}

/**
 * The violations of one LimitRange by a pod (defaults already applied). `oldPod` is the
 * stored pod on an in-place resize (pods/resize): a container's resource, or the pod-wide
 * total, that the resize leaves unchanged is skipped. Containers are matched to the stored
 * ones by name, init containers among init containers.
 */
export function podLimitViolations(limitRange: LimitRange, pod: Pod, options: LimitRangerPodOptions = {}, oldPod?: Pod): LimitViolation[] {
  const parsed = parseLimitRange(limitRange);
  const resources = parseLimitRangerPod(pod);
  const old = oldPod === undefined ? undefined : parseLimitRangerPod(oldPod);
  const out: LimitViolation[] = [];
  for (const item of parsed.items) {
    if (item.type === LIMIT_TYPE_CONTAINER) {
      for (const container of [...resources.containers, ...resources.initContainers]) {
        const stored = (container.init ? old?.initContainers : old?.containers)?.find((c) => c.name === container.name);
        const skip = unchangedBy(stored, container.requests, container.limits);
        for (const { resource, failure } of checkItem(item, container.requests, container.limits, skip)) {
          out.push(violation(parsed.name, item.type, resource, failure, container));
        }
      }
    }
    if (item.type === LIMIT_TYPE_POD) {
      const requests = limitRangerPodRequests(resources, options);
      const limits = limitRangerPodLimits(resources, options);
      const stored =
        old === undefined ? undefined : { requests: limitRangerPodRequests(old, options), limits: limitRangerPodLimits(old, options) };
      for (const { resource, failure } of checkItem(item, requests, limits, unchangedBy(stored, requests, limits))) {
        out.push(violation(parsed.name, item.type, resource, failure));
      }
    }
  }
  return out;
}

/**
 * The violations of one LimitRange by a claim: min and max of `spec.resources.requests`
 * only (a claim's limits are not user input; ratio does not apply). On UPDATE, a request
 * the update leaves equal to the stored one is not checked again (PR #142170): a stored
 * value is valid as stored, even if a LimitRange created later would refuse it.
 */
export function pvcLimitViolations(limitRange: LimitRange, pvc: PersistentVolumeClaim, oldPvc?: PersistentVolumeClaim): LimitViolation[] {
  const parsed = parseLimitRange(limitRange);
  const requests = parseResourceList(pvc.spec?.resources?.requests, 'spec.resources.requests');
  const oldRequests = oldPvc ? parseResourceList(oldPvc.spec?.resources?.requests, 'spec.resources.requests') : EMPTY;
  const unchanged = (resource: string): boolean => {
    const now = get(requests, resource);
    const before = get(oldRequests, resource);
    return now !== undefined && before !== undefined && now.equals(before);
  };
  const out: LimitViolation[] = [];
  for (const item of parsed.items) {
    if (item.type !== LIMIT_TYPE_PVC) continue;
    for (const resource of Object.keys(item.min).sort()) {
      if (unchanged(resource)) continue;
      const failure = minConstraint(item.type, resource, item.min[resource] as Quantity, requests, EMPTY);
      if (failure) out.push(violation(parsed.name, item.type, resource, failure));
    }
    for (const resource of Object.keys(item.max).sort()) {
      if (unchanged(resource)) continue;
      const failure = maxRequestConstraint(item.type, resource, item.max[resource] as Quantity, requests);
      if (failure) out.push(violation(parsed.name, item.type, resource, failure));
    }
  }
  return out;
}

/** Runs the LimitRanges in order and stops at the first that refuses, as the plugin does. */
function firstRefusal(limitRanges: readonly LimitRange[], check: (limitRange: LimitRange) => LimitViolation[]): LimitValidation {
  for (const limitRange of limitRanges) {
    const violations = check(limitRange);
    if (violations.length > 0) {
      return {
        ok: false,
        limitRange: violations[0]?.limitRange,
        violations,
        message: aggregateMessage(violations.map((v) => v.message)),
      };
    }
  }
  return { ok: true, violations: [] };
}

/**
 * Validates a pod against the namespace's LimitRanges. Pass the pod AFTER defaulting (as
 * Kubernetes validates the mutated object), and on an in-place resize the stored pod as
 * `oldPod`. Throws DomainError('QuantityInvalid') for an unparsable quantity in the pod.
 */
export function validatePodLimits(
  whole: Pod,
  limitRanges: readonly LimitRange[],
  options: LimitRangerPodOptions = {},
  wholeOld?: Pod,
): LimitValidation {
  // Only what admission reads of a pod (kube/fields-read.ts).
  const pod = selectFields(whole, POD_FIELDS) as Pod;
  const oldPod = wholeOld === undefined ? undefined : (selectFields(wholeOld, POD_FIELDS) as Pod);
  // Parse once up front so a bad pod quantity fails even with no LimitRange item to read it.
  parseLimitRangerPod(pod);
  return firstRefusal(limitRanges, (lr) => podLimitViolations(lr, pod, options, oldPod));
}

/** Validates a claim against the namespace's LimitRanges (`oldPvc` on UPDATE). */
export function validatePvcLimits(
  whole: PersistentVolumeClaim,
  limitRanges: readonly LimitRange[],
  wholeOld?: PersistentVolumeClaim,
): LimitValidation {
  // Only what admission reads of a claim (kube/fields-read.ts).
  const pvc = selectFields(whole, PERSISTENT_VOLUME_CLAIM_FIELDS) as PersistentVolumeClaim;
  const oldPvc = wholeOld === undefined ? undefined : (selectFields(wholeOld, PERSISTENT_VOLUME_CLAIM_FIELDS) as PersistentVolumeClaim);
  parseResourceList(pvc.spec?.resources?.requests, 'spec.resources.requests');
  return firstRefusal(limitRanges, (lr) => pvcLimitViolations(lr, pvc, oldPvc));
}
