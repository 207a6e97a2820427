import type { NamespaceState } from '../events/fold.js';
import * as Resources from '../resources/resource-list.js';
import type { QuotaCharge } from './check.js';

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
    const title = !shared
      ? `quota "${charge.quota}"`
      : shared.ref.kind === 'ClusterResourceQuota'
        ? `cluster quota "${shared.ref.name}"`
        : `hierarchical quota "${shared.ref.namespace ?? ''}/${shared.ref.name}"`;
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
