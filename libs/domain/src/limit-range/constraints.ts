import type { Quantity } from '../quantity/quantity.js';
import { get, type ResourceList } from '../resources/resource-list.js';

/**
 * The three LimitRange constraints (minConstraint, maxConstraint, maxRequestConstraint,
 * limitRequestRatioConstraint), with Kubernetes' messages. Comparisons are exact, as
 * Kubernetes' are since it stopped projecting quantities to int64 milli-units (PR #141348).
 */

export type LimitConstraint = 'min' | 'max' | 'maxLimitRequestRatio';

export type LimitProblem =
  | 'RequestMissing'
  | 'RequestBelowMin'
  | 'LimitBelowMin'
  | 'LimitMissing'
  | 'LimitAboveMax'
  | 'RequestAboveMax'
  | 'RatioRequestMissing'
  | 'RatioLimitMissing'
  | 'RatioAboveMax';

export interface ConstraintFailure {
  readonly constraint: LimitConstraint;
  readonly problem: LimitProblem;
  /** The LimitRange's value. */
  readonly enforced: Quantity;
  /** The request or limit that broke it, when there was one. */
  readonly observed?: Quantity;
  /** The limit-to-request ratio observed, as Kubernetes prints it. */
  readonly ratio?: string;
  readonly message: string;
}

export function minConstraint(
  limitType: string,
  resource: string,
  enforced: Quantity,
  requests: ResourceList,
  limits: ResourceList,
): ConstraintFailure | undefined {
  const req = get(requests, resource);
  const lim = get(limits, resource);
  const prefix = `minimum ${resource} usage per ${limitType} is ${enforced.toString()}`;
  if (!req) return { constraint: 'min', problem: 'RequestMissing', enforced, message: `${prefix}.  No request is specified` };
  if (enforced.cmp(req) > 0)
    return {
      constraint: 'min',
      problem: 'RequestBelowMin',
      enforced,
      observed: req,
      message: `${prefix}, but request is ${req.toString()}`,
    };
  if (lim && enforced.cmp(lim) > 0)
    return { constraint: 'min', problem: 'LimitBelowMin', enforced, observed: lim, message: `${prefix}, but limit is ${lim.toString()}` };
  return undefined;
}

export function maxConstraint(
  limitType: string,
  resource: string,
  enforced: Quantity,
  requests: ResourceList,
  limits: ResourceList,
): ConstraintFailure | undefined {
  const req = get(requests, resource);
  const lim = get(limits, resource);
  const prefix = `maximum ${resource} usage per ${limitType} is ${enforced.toString()}`;
  if (!lim) return { constraint: 'max', problem: 'LimitMissing', enforced, message: `${prefix}.  No limit is specified` };
  if (lim.cmp(enforced) > 0)
    return { constraint: 'max', problem: 'LimitAboveMax', enforced, observed: lim, message: `${prefix}, but limit is ${lim.toString()}` };
  if (req && req.cmp(enforced) > 0)
    return {
      constraint: 'max',
      problem: 'RequestAboveMax',
      enforced,
      observed: req,
      message: `${prefix}, but request is ${req.toString()}`,
    };
  return undefined;
}

/** The max check for a kind whose limits are not user input (PersistentVolumeClaims). */
export function maxRequestConstraint(
  limitType: string,
  resource: string,
  enforced: Quantity,
  requests: ResourceList,
): ConstraintFailure | undefined {
  const req = get(requests, resource);
  const prefix = `maximum ${resource} usage per ${limitType} is ${enforced.toString()}`;
  if (!req) return { constraint: 'max', problem: 'RequestMissing', enforced, message: `${prefix}.  No request is specified` };
  if (req.cmp(enforced) > 0)
    return {
      constraint: 'max',
      problem: 'RequestAboveMax',
      enforced,
      observed: req,
      message: `${prefix}, but request is ${req.toString()}`,
    };
  return undefined;
}

const NANOS_PER_UNIT = 1_000_000_000n;
const RATIO_DECIMALS = 1_000_000n;
const magnitude = (n: bigint): bigint => (n < 0n ? -n : n);

/**
 * |limit| / |request| to six decimals, rounded half to even (inf.Dec.QuoRound), printed as
 * inf.Dec prints it. Kubernetes switches to an exponent form when the operands' scales are
 * more than 40 apart; quantities this project parses (at most 10^30, at least 1n) never are.
 */
export function formatRatio(limit: Quantity, request: Quantity): string {
  const num = magnitude(limit.nanos) * RATIO_DECIMALS;
  const den = magnitude(request.nanos);
  let quotient = num / den;
  const twiceRemainder = 2n * (num % den);
  if (twiceRemainder > den || (twiceRemainder === den && quotient % 2n === 1n)) quotient += 1n;
  return `${quotient / RATIO_DECIMALS}.${(quotient % RATIO_DECIMALS).toString().padStart(6, '0')}`;
}

export function limitRequestRatioConstraint(
  limitType: string,
  resource: string,
  enforced: Quantity,
  requests: ResourceList,
  limits: ResourceList,
): ConstraintFailure | undefined {
  const req = get(requests, resource);
  const lim = get(limits, resource);
  const prefix = `${resource} max limit to request ratio per ${limitType} is ${enforced.toString()}`;
  if (!req || req.isZero()) {
    return {
      constraint: 'maxLimitRequestRatio',
      problem: 'RatioRequestMissing',
      enforced,
      message: `${prefix}, but no request is specified or request is 0`,
    };
  }
  if (!lim || lim.isZero()) {
    return {
      constraint: 'maxLimitRequestRatio',
      problem: 'RatioLimitMissing',
      enforced,
      message: `${prefix}, but no limit is specified or limit is 0`,
    };
  }
  // |limit| > |request| × ratio, in nano-units on both sides: exact, no division.
  if (magnitude(lim.nanos) * NANOS_PER_UNIT > magnitude(req.nanos) * enforced.nanos) {
    const ratio = formatRatio(lim, req);
    return {
      constraint: 'maxLimitRequestRatio',
      problem: 'RatioAboveMax',
      enforced,
      observed: lim,
      ratio,
      message: `${prefix}, but provided ratio is ${ratio}`,
    };
  }
  return undefined;
}
