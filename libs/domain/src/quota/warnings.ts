import type { NamespaceState } from '../events/fold.js';
import type { SharedQuotaState } from '../events/state.js';
import type { ResourceQuotaSpec } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { quotaScopeRequirements } from '../scopes/facts.js';
import type { QuotaCharge } from './check.js';
import { nearestResourceName } from './resource-name-hints.js';

/** Most warnings one answer carries (kube-apiserver passes each on to the client). */
export const WARNINGS_MAX = 10;

/**
 * What an allowed admission tells its caller about the quotas it charged: one warning per
 * charged resource whose usage, with this admission, is at or above `percent` of its hard
 * limit (`quota "compute": pods at 90% of its limit (9/10)`). Sent as AdmissionReview
 * `warnings` and as REST `Warning` headers, as kube-apiserver sends its own; short, as
 * Kubernetes asks of warnings. A quota the admission did not charge is not mentioned.
 */
export function nearLimitWarnings(charges: readonly QuotaCharge[], state: NamespaceState, percent: number): string[] {
  const warnings: string[] = [];
  for (const charge of charges) {
    const shared = state.shared.get(charge.quota);
    const spec = shared ? shared.definition.spec : state.quotas.get(charge.quota)?.definition.spec;
    const hard = Resources.resourceList(spec?.hard ?? {});
    const title = quotaTitle(charge.quota, shared);
    for (const resource of Resources.resourceNames(charge.delta).sort()) {
      const limit = hard[resource];
      const used = charge.used[resource];
      if (!limit || !used || limit.sign() <= 0) continue;
      if (used.mul(100n).cmp(limit.mul(BigInt(percent))) < 0) continue;
      const share = (used.milliValue() * 100n) / limit.milliValue();
      warnings.push(`${title}: ${resource} at ${share}% of its limit (${used.toString()}/${limit.toString()})`);
    }
  }
  return warnings.slice(0, WARNINGS_MAX);
}

/** A quota as warnings name it: `quota "compute"`, `cluster quota "acme"`, `hierarchical quota "org/acme"`. */
function quotaTitle(name: string, shared: SharedQuotaState | undefined): string {
  if (!shared) return `quota "${name}"`;
  return shared.ref.kind === 'ClusterResourceQuota'
    ? `cluster quota "${shared.ref.name}"`
    : `hierarchical quota "${shared.ref.namespace ?? ''}/${shared.ref.name}"`;
}

/**
 * What an allowed REST reservation of a plain resource list tells its caller about the names it
 * charges nothing for (`requests.cpus=1` and `pod=1` were a silent 201): one warning
 * per requested name with a quantity above zero that no quota covering the namespace (its
 * ResourceQuotas, and the ClusterResourceQuotas and HierarchicalResourceQuotas applied to it)
 * limits without scopes, which is where decideResources charges a list. It suggests the nearest
 * name a quota limits or Kubernetes knows (`requests.cpu`, `pods`), and names the scoped quotas
 * when only they limit it (a resource list has no scopes to match). The request is admitted all
 * the same. Sent as REST `Warning` headers only: the decisions log and a repeated request's
 * stored answer are unchanged by it.
 */
export function unchargedResourceWarnings(namespace: string, resources: ResourceList, state: NamespaceState): string[] {
  const quotas: { readonly title: string; readonly spec: ResourceQuotaSpec }[] = [
    ...[...state.quotas.values()].map((quota) => ({ title: quotaTitle(quota.name, undefined), spec: quota.definition.spec })),
    ...[...state.shared.values()].map((quota) => ({ title: quotaTitle(quota.name, quota), spec: quota.definition.spec })),
  ];
  const limited = new Set<string>();
  const scopedBy = new Map<string, string[]>();
  for (const quota of quotas) {
    const scoped = quotaScopeRequirements(quota.spec).length > 0;
    for (const name of Object.keys(quota.spec.hard ?? {})) {
      if (!scoped) limited.add(name);
      else scopedBy.set(name, [...(scopedBy.get(name) ?? []), quota.title]);
    }
  }
  const warnings: string[] = [];
  for (const name of Resources.resourceNames(resources).sort()) {
    if (limited.has(name) || (Resources.get(resources, name)?.sign() ?? 0) <= 0) continue;
    const scoped = scopedBy.get(name);
    if (scoped) {
      const which = scoped.length > 3 ? `${scoped.slice(0, 3).join(', ')} and ${scoped.length - 3} more` : scoped.join(', ');
      warnings.push(
        `${name}: only scoped quotas limit this resource in namespace "${namespace}" (${which}), and a resource list matches no scope, so nothing is charged for it`,
      );
      continue;
    }
    const nearest = nearestResourceName(name, limited);
    warnings.push(
      `${name}: no quota covering namespace "${namespace}" limits this resource, so nothing is charged for it${nearest ? ` (did you mean ${nearest}?)` : ''}`,
    );
  }
  return warnings.slice(0, WARNINGS_MAX);
}
