import type { LimitRange, LimitRangeItem } from '../kube/types.js';
import { canonicalResourceList, parseResourceList } from '../resources/resource-list.js';
import { assertDefinitionSize, limitRangeSizeErrors } from '../validation/sizes.js';
import { prepareLimitRangeForStorage } from '../validation/limit-range.js';

const QUANTITY_MAPS = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** Every quantity of an item in canonical form (`1.5Gi` → `1536Mi`), as every response shows them. */
function canonicalItem(item: LimitRangeItem): LimitRangeItem {
  const out: Record<string, unknown> = { ...item };
  for (const key of QUANTITY_MAPS) {
    const raw = item[key];
    if (raw) out[key] = canonicalResourceList(parseResourceList(raw, `spec.limits.${key}`));
  }
  return out as unknown as LimitRangeItem;
}

/**
 * A LimitRange as the ledger stores it, whether it came through the REST PUT or from the cluster's
 * own LimitRange object: what the API server would store (its defaulting applied, then validated),
 * bounded in size, every quantity canonical. The metadata is the body's, for the caller to filter.
 */
export function limitRangeForLedger(
  body: unknown,
  name: string,
): { readonly spec: { readonly limits: readonly LimitRangeItem[] }; readonly metadata: LimitRange['metadata'] } {
  const limitRange = prepareLimitRangeForStorage(body);
  assertDefinitionSize('LimitRange', name, limitRangeSizeErrors(limitRange));
  return { spec: { limits: (limitRange.spec?.limits ?? []).map(canonicalItem) }, metadata: limitRange.metadata };
}
