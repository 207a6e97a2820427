import type { GroupResource, KubeObject, Operation, ResourceQuotaSpec, ScopedResourceSelectorRequirement } from '../kube/types.js';
import { DomainError } from '../errors.js';
import { Quantity } from '../quantity/quantity.js';
import {
  add,
  fromEntries,
  get,
  has,
  lessThanOrEqual,
  mask,
  negativeKeys,
  parseResourceList,
  resourceNames,
  withoutZeros,
  type ResourceList,
} from '../resources/resource-list.js';
import type { UsageEvaluator, UsageOptions } from '../usage/evaluator.js';
import type { ExceededResource, QuotaDenial } from './denial.js';
import { factsMatchAll, quotaScopeRequirements, type ScopeFacts } from '../scopes/facts.js';
import { quotaMatchesObject } from './scopes.js';
import type { SharedQuotaRef } from '../shared/shared-quota.js';

/**
 * One entry of the admission configuration's `limitedResources` (Kubernetes'
 * resourcequota Configuration): consuming a matching resource, or creating an object in a
 * matching scope, requires a quota that covers it.
 */
export interface LimitedResource {
  /** The API group of the limited kind; empty or absent for the core group. */
  readonly apiGroup?: string;
  readonly resource: string;
  /** Quota resource names containing any of these substrings are limited. */
  readonly matchContains?: readonly string[];
  /** Objects in any of these scopes need a quota whose scopes cover them. */
  readonly matchScopes?: readonly ScopedResourceSelectorRequirement[];
}

/** A quota as the decision sees it: its spec and its current usage. */
export interface QuotaSnapshot {
  /** A ResourceQuota's name; a shared quota's key (sharedQuotaKey). */
  readonly name: string;
  /** Set for a quota over several namespaces: which one (its usage is then the total over all of them). */
  readonly shared?: SharedQuotaRef;
  readonly spec: ResourceQuotaSpec;
  /**
   * Current usage. It must hold an entry (zero is fine) for every hard resource the quota
   * limits: a missing entry is "usage not computed yet", which Kubernetes refuses with
   * `status unknown for quota` rather than guessing, and so do we.
   */
  readonly used: ResourceList;
}

export interface QuotaCheckInput {
  readonly operation: Operation;
  readonly groupResource: GroupResource;
  readonly subresource?: string;
  /** The request's namespace; it fills in an object that has none before usage is measured. */
  readonly namespace?: string;
  readonly object: KubeObject;
  /** The stored object, for UPDATE. */
  readonly oldObject?: KubeObject;
  /**
   * UPDATE: what the ledger itself holds for the object (its settled usage and scope facts).
   * When given, the charge is the increase over it and `oldObject` is not used to measure
   * anything; `null` means the ledger holds nothing for the object, which is then charged
   * its whole usage. Undefined: Kubernetes' own rule, which trusts `oldObject` (an old object
   * with a resourceVersion is stored, one without is a create-on-update) — what the ported
   * Kubernetes tables exercise.
   */
  readonly previous?: { readonly usage: ResourceList; readonly scopeFacts: ScopeFacts } | null;
  /**
   * The decision time in epoch milliseconds, for usage that depends on it (a pod past its
   * deletion grace period stops being charged for compute).
   */
  readonly now?: number;
  /** Measure the object as though alive (UsageOptions.asLive): the ledger's admissions do; Kubernetes' tables do not. */
  readonly asLive?: boolean;
  /** Never below what the spec asks (UsageOptions.specFloor): the ledger's admissions; Kubernetes' tables do not. */
  readonly specFloor?: boolean;
  /** Every quota in the request's namespace. */
  readonly quotas: readonly QuotaSnapshot[];
  readonly limitedResources?: readonly LimitedResource[];
}

/** What one quota is charged: add `delta` to its usage, giving `used`. */
export interface QuotaCharge {
  readonly quota: string;
  /** Only positive amounts, only for resources the quota limits. */
  readonly delta: ResourceList;
  /** The quota's usage with the charge applied. */
  readonly used: ResourceList;
}

export type QuotaDecision =
  { readonly allowed: true; readonly charges: readonly QuotaCharge[] } | { readonly allowed: false; readonly denial: QuotaDenial };

const allowedWithoutCharge = (): QuotaDecision => ({ allowed: true, charges: [] });

const deny = (denial: QuotaDenial): QuotaDecision => ({ allowed: false, denial });

const denied = (denial: QuotaDenial): Extract<QuotaDecision, { allowed: false }> => ({ allowed: false, denial });

/** Kubernetes' SubtractWithNonNegativeResult: a - b per key, never below zero (b-only keys are zero). */
function nonNegativeDelta(a: ResourceList, b: ResourceList): ResourceList {
  const pairs: [string, Quantity][] = resourceNames(a).map((name) => {
    const before = get(b, name);
    const after = get(a, name) as Quantity;
    const diff = before === undefined ? after : after.sub(before);
    return [name, diff.sign() > 0 ? diff : Quantity.ZERO];
  });
  for (const name of resourceNames(b)) if (!has(a, name)) pairs.push([name, Quantity.ZERO]);
  return fromEntries(pairs);
}

/** The usage keys the `limitedResources` entries for this kind say need a covering quota. */
function limitedByDefault(usage: ResourceList, limited: readonly LimitedResource[]): Set<string> {
  const result = new Set<string>();
  for (const entry of limited) {
    for (const name of resourceNames(usage)) {
      if ((get(usage, name) as Quantity).sign() <= 0) continue;
      if ((entry.matchContains ?? []).some((fragment) => name.includes(fragment))) result.add(name);
    }
  }
  return result;
}

/** A copy of the object carrying the request namespace when it has none (admission defaulting). */
function withNamespace(object: KubeObject, namespace: string | undefined): KubeObject {
  if (!namespace || object.metadata?.namespace) return object;
  return { ...object, metadata: { ...object.metadata, namespace } };
}

/** The quota's hard limits; a quota that cannot be read names itself in the error. */
function parseHard(snapshot: QuotaSnapshot): ResourceList {
  try {
    return parseResourceList(snapshot.spec.hard, 'spec.hard');
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw new DomainError(error.code, `resourcequota ${JSON.stringify(snapshot.name)}: ${error.message}`, error.causes);
  }
}

/** How a denial names the quota: a ResourceQuota by name, a shared quota by kind, name (and namespace). */
export function quotaNamed(snapshot: QuotaSnapshot): { quota: string; shared?: SharedQuotaRef } {
  return snapshot.shared ? { quota: snapshot.shared.name, shared: snapshot.shared } : { quota: snapshot.name };
}

interface PreparedQuota {
  readonly snapshot: QuotaSnapshot;
  readonly hard: ResourceList;
  readonly hardNames: string[];
  readonly scopes: ScopedResourceSelectorRequirement[];
}

/**
 * Decides one admission request against the namespace's quotas, as Kubernetes' ResourceQuota
 * admission plugin does (CheckRequest): which quotas apply, the must-specify rule, the charge
 * (full usage on CREATE, the non-negative per-key increase on UPDATE), the
 * `limitedResources` coverage rules and the hard limits. Pure: the caller persists the
 * charges. DELETE is always allowed and charges nothing.
 *
 * Quotas are considered in name order, so when several would refuse, the first by name is
 * reported (Kubernetes uses its cache's order, which is unspecified).
 *
 * `ev` is the usage evaluator of the request's kind; `checkQuota` (resource-quota-plugin.ts) picks it
 * from the registry. Without one the kind is not charged.
 */
export function decideQuota(input: QuotaCheckInput, ev: UsageEvaluator | undefined): QuotaDecision {
  if (input.operation === 'DELETE') return allowedWithoutCharge();
  if (ev === undefined || !ev.handles(input.operation, input.subresource, input.object, input.oldObject)) return allowedWithoutCharge();

  const { object, groupResource } = input;
  const limited = input.limitedResources ?? [];
  // Kubernetes does not evaluate at all when there is nothing to enforce.
  if (input.quotas.length === 0 && limited.length === 0) return allowedWithoutCharge();
  const usageOptions: UsageOptions = {
    ...(input.now === undefined ? {} : { now: input.now }),
    ...(input.asLive ? { asLive: true } : {}),
    ...(input.specFloor ? { specFloor: true } : {}),
  };
  const usageOf = (o: KubeObject): ResourceList => ev.usage(o, usageOptions);

  // Limited scopes come from every configured entry, whatever kind it names (as in Kubernetes).
  const limitedScopes = limited.flatMap((entry) => ev.matchingScopes(object, entry.matchScopes ?? []));
  const limitedForKind = limited.filter(
    (entry) => (entry.apiGroup ?? '') === groupResource.group && entry.resource === groupResource.resource,
  );
  const limitedNames = limitedForKind.length > 0 ? limitedByDefault(usageOf(object), limitedForKind) : new Set<string>();

  // The namespace's own quotas first (Kubernetes' plugin), then the shared ones (OpenShift's and
  // HNC's run after it).
  const order = (q: QuotaSnapshot): string => `${q.shared ? 1 : 0}:${q.name}`;
  const quotas: PreparedQuota[] = [...input.quotas]
    .sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0))
    .map((snapshot) => {
      const hard = parseHard(snapshot);
      return { snapshot, hard, hardNames: resourceNames(hard), scopes: quotaScopeRequirements(snapshot.spec) };
    });

  const applying = applicableQuotas(quotas, ev, object);
  if ('denial' in applying) return applying;
  const { interesting, restrictedNames, restrictedScopes } = applying;

  const inputUsage = usageOf(withNamespace(object, input.namespace));
  const negative = negativeKeys(inputUsage);
  if (negative.length > 0) return deny({ kind: 'NegativeUsage', resources: negative });

  const charged = deltasOf(input, ev, interesting, inputUsage, usageOf);
  if ('denial' in charged) return charged;
  const { deltas, deltaWithoutQuota } = charged;

  for (const [quota, delta] of deltas) {
    const nonZero = withoutZeros(delta);
    if (resourceNames(nonZero).length === 0) deltas.delete(quota);
    else deltas.set(quota, nonZero);
  }
  // Nothing changes: no quota to touch and nothing to cover.
  if (interesting.length > 0 ? deltas.size === 0 : resourceNames(withoutZeros(deltaWithoutQuota)).length === 0) {
    return allowedWithoutCharge();
  }

  const uncoveredNames = [...limitedNames].filter((name) => !restrictedNames.has(name));
  if (uncoveredNames.length > 0) return deny({ kind: 'InsufficientQuotaToConsume', resources: uncoveredNames });

  const uncoveredScopes = ev.uncoveredQuotaScopes(limitedScopes, restrictedScopes);
  if (uncoveredScopes.length > 0) return deny({ kind: 'InsufficientQuotaToMatchScopes', scopes: uncoveredScopes });

  return chargeQuotas(input, interesting, deltas);
}

/**
 * The quotas that apply to the object, in order, and what they restrict; every scope a quota's
 * selectors match covers limited scopes, whether or not the quota itself applies. A quota that
 * applies but cannot be checked (a missing constraint, a usage it has no status for) refuses.
 */
function applicableQuotas(
  quotas: readonly PreparedQuota[],
  ev: UsageEvaluator,
  object: KubeObject,
):
  | {
      readonly interesting: PreparedQuota[];
      readonly restrictedNames: Set<string>;
      readonly restrictedScopes: ScopedResourceSelectorRequirement[];
    }
  | Extract<QuotaDecision, { allowed: false }> {
  const interesting: PreparedQuota[] = [];
  const restrictedNames = new Set<string>();
  const restrictedScopes: ScopedResourceSelectorRequirement[] = [];
  for (const quota of quotas) {
    restrictedScopes.push(...ev.matchingScopes(object, quota.scopes));
    if (!quotaMatchesObject(ev, quota.hardNames, quota.scopes, object)) continue;

    const restricted = ev.matchingResources(quota.hardNames);
    const missing = ev.constraints(restricted, object);
    if (missing.length > 0) {
      const detail = ev.constraintError?.(restricted, object) ?? `must specify ${[...missing].sort().join(',')}`;
      return denied({ kind: 'MustSpecify', ...quotaNamed(quota.snapshot), resources: missing, detail });
    }
    const unknown = restricted.filter((name) => has(quota.hard, name) && !has(quota.snapshot.used, name));
    if (unknown.length > 0) return denied({ kind: 'StatusUnknown', ...quotaNamed(quota.snapshot), resources: restricted });

    interesting.push(quota);
    for (const name of restricted) restrictedNames.add(name);
  }
  return { interesting, restrictedNames, restrictedScopes };
}

/** What each applicable quota would be charged, and what the request consumes when none applies (an UPDATE: its increase). */
function deltasOf(
  input: QuotaCheckInput,
  ev: UsageEvaluator,
  interesting: readonly PreparedQuota[],
  inputUsage: ResourceList,
  usageOf: (o: KubeObject) => ResourceList,
):
  | { readonly deltas: Map<PreparedQuota, ResourceList>; readonly deltaWithoutQuota: ResourceList }
  | Extract<QuotaDecision, { allowed: false }> {
  const deltas = new Map<PreparedQuota, ResourceList>(interesting.map((quota) => [quota, inputUsage]));
  let deltaWithoutQuota: ResourceList = input.operation === 'CREATE' ? inputUsage : {};

  if (input.operation === 'UPDATE') {
    const old = input.oldObject;
    if (old === undefined) return denied({ kind: 'OldObjectMissing' });
    const previous = input.previous;
    if (previous) {
      // The ledger's own record of the object: the increase over it, and in full by a quota
      // whose scope it moves into.
      const delta = nonNegativeDelta(inputUsage, previous.usage);
      deltaWithoutQuota = delta;
      for (const quota of interesting) {
        if (factsMatchAll(previous.scopeFacts, quota.scopes)) deltas.set(quota, delta);
      }
    } else if (previous === null) {
      deltaWithoutQuota = inputUsage;
    } else if (old.metadata?.resourceVersion) {
      // Kubernetes' rule: an old object with a resourceVersion is stored, so only the increase
      // is charged; one without is a create-on-update, charged in full (below).
      const delta = nonNegativeDelta(inputUsage, usageOf(old));
      deltaWithoutQuota = delta;
      for (const quota of interesting) {
        // An object moving into a quota's scope is charged in full by that quota.
        if (quotaMatchesObject(ev, quota.hardNames, quota.scopes, old)) deltas.set(quota, delta);
      }
    } else {
      deltaWithoutQuota = inputUsage;
    }
  }
  return { deltas, deltaWithoutQuota };
}

/** Each quota's charge checked against its hard limits, in order: the first over its limit refuses. */
function chargeQuotas(
  input: QuotaCheckInput,
  interesting: readonly PreparedQuota[],
  deltas: ReadonlyMap<PreparedQuota, ResourceList>,
): QuotaDecision {
  const charges: QuotaCharge[] = [];
  for (const quota of interesting) {
    const delta = deltas.get(quota);
    if (delta === undefined) continue;
    const requested = mask(delta, quota.hardNames);
    const used = add(quota.snapshot.used, requested);
    // A status write reports what already happened (e.g. storage an expansion allocated):
    // it is charged, never refused.
    if (input.subresource !== 'status') {
      const check = lessThanOrEqual(mask(used, resourceNames(requested)), quota.hard);
      if (!check.ok) {
        const resources = [...check.exceeded].sort().map((name): ExceededResource => ({
          resource: name,
          requested: get(requested, name) as Quantity,
          used: get(quota.snapshot.used, name),
          hard: get(quota.hard, name) as Quantity,
        }));
        return deny({ kind: 'Exceeded', ...quotaNamed(quota.snapshot), resources });
      }
    }
    if (resourceNames(requested).length > 0) charges.push({ quota: quota.snapshot.name, delta: requested, used });
  }
  return { allowed: true, charges };
}
