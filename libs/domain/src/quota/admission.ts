import { evaluatorFor, isIgnoredResource } from '../usage/registry.js';
import { decideQuota, type QuotaCheckInput, type QuotaDecision } from './check.js';

/**
 * Decides one admission request against the namespace's quotas with the registered usage
 * evaluator for its group/resource (see `decideQuota`). Resources quota never charges
 * (events, review APIs, …) are allowed without a look, as in Kubernetes.
 */
export function checkQuota(input: QuotaCheckInput): QuotaDecision {
  if (isIgnoredResource(input.groupResource)) return { allowed: true, charges: [] };
  return decideQuota(input, evaluatorFor(input.groupResource));
}
