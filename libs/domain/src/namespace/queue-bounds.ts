import type { NamespaceState, Waiter } from '../events/fold.js';
import { quotaNamed } from '../quota/check.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { quotaScopeRequirements } from '../scopes/facts.js';
import { admissionViewOf } from './admission-decision.js';

/**
 * What a waiter may hold back. Two bounds on the queue's blocking (queue/policy.ts):
 *
 * - a request for more than a quota's hard limit can never be admitted (Kubernetes refuses it at
 *   once), so it is never queued, and a waiter left so by a lowered limit leaves the queue at the
 *   next drain (`Expired`, saying why) instead of holding the room for itself until its deadline;
 * - one principal's blocking waiters together ask for at most `blockSharePercent` of the hard
 *   limit of each quota limiting what they ask for (BlockingShares): past that, its waiter waits
 *   without blocking, passed by what fits, so no one principal holds a namespace's room back.
 */

/** A quota a resource list is checked against (as decideResources checks it: the unscoped ones), by the name its denials give. */
export interface QuotaLimit {
  readonly quota: string;
  readonly hard: ResourceList;
}

/** The quotas (namespace and shared) a resource list is checked against, in name order. */
export function quotaLimitsOf(state: NamespaceState, sharedElsewhere?: ReadonlyMap<string, ResourceList>): QuotaLimit[] {
  return [...admissionViewOf(state, undefined, sharedElsewhere).quotas]
    .filter((quota) => quotaScopeRequirements(quota.spec).length === 0)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((quota) => ({ quota: quotaNamed(quota).quota, hard: Resources.resourceList(quota.spec.hard ?? {}) }));
}

/** A resource asked for beyond a quota's hard limit: the request can never be admitted. */
export interface Unfit {
  readonly quota: string;
  readonly resource: string;
  readonly requested: string;
  readonly hard: string;
}

/** The first resource (quotas in name order, then resources) asked for beyond a quota's hard limit; undefined when the request could fit some day. */
export function neverFits(limits: readonly QuotaLimit[], resources: ResourceList): Unfit | undefined {
  for (const { quota, hard } of limits) {
    for (const resource of Object.keys(resources).sort()) {
      const requested = Resources.get(resources, resource);
      const limit = Resources.get(hard, resource);
      if (requested && limit && requested.cmp(limit) > 0)
        return { quota, resource, requested: requested.toString(), hard: limit.toString() };
    }
  }
  return undefined;
}

/** Why a waiter that can never fit leaves the queue (its Expired event's reason, which its watcher reads). */
export function unfitReason(unfit: Unfit): string {
  return `can never be admitted: it asks for ${unfit.resource}=${unfit.requested}, more than the hard limit of quota ${unfit.quota} (${unfit.resource}=${unfit.hard})`;
}

/** The principal a waiter's share counts against: its own id when it was queued before principals were kept. */
const principalOf = (waiter: Waiter): string =>
  waiter.principal === undefined ? `reservation:${waiter.id}` : `principal:${waiter.principal}`;

/**
 * What each principal's blocking waiters ask for, counted in queue order as the drain meets them:
 * a waiter may block only while its request, added to its principal's blocking waiters ahead of
 * it, is at most `percent` of the hard limit of every quota limiting a resource it asks for.
 */
export class BlockingShares {
  private readonly held = new Map<string, ResourceList>();

  constructor(
    private readonly limits: readonly QuotaLimit[],
    private readonly percent: number,
  ) {}

  /** Whether `waiter` (blocking by the pass bound, and short of room) may block; if so, its request is counted. */
  take(waiter: Waiter): boolean {
    if (this.percent >= 100) return true;
    const principal = principalOf(waiter);
    const asked = Resources.add(this.held.get(principal) ?? Resources.EMPTY, waiter.resources);
    for (const { hard } of this.limits) {
      for (const [resource, limit] of Object.entries(hard)) {
        const amount = Resources.get(asked, resource);
        if (Resources.get(waiter.resources, resource)?.sign() !== 1 || !amount) continue;
        if (amount.nanos * 100n > BigInt(this.percent) * limit.nanos) return false;
      }
    }
    this.held.set(principal, asked);
    return true;
  }
}
