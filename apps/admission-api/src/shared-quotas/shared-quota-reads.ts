import { ClusterQueries, LedgerClock, LedgerError, SharedUsageQueries, type SharedQuotaUsageSeries } from '@quota/ledger';
import { UsageSeriesQueryDto } from '../audit/audit.dto.js';
import { seriesRange } from '../audit/series-range.js';

/**
 * Namespaces as objects and the quotas over several namespaces, served by
 * namespaces/, cluster-resource-quotas/ and hierarchical-resource-quotas/. Writes go through the
 * ledger's ClusterWriter (one SERIALIZABLE transaction over every head a change moves); reads
 * come from the heads. Cluster-scoped routes take no `:namespace`, so a namespace-scoped token
 * cannot reach them; the namespaced ones are checked against its namespaces as usual. Their PUT,
 * GET, list, history and DELETE are definitions/definition-handlers.ts's; what else those
 * controllers share: the bound of a list, and the usage reads that answer 404.
 */
export const LIST_MAX = 1000;

/**
 * A shared quota's usage: now (its head, exact) or, with `?at=`, as it was at that instant
 * (the sum of what the namespaces covering it then contributed, each folded from the ledger).
 * With a `scope` (a token limited to namespaces: a HierarchicalResourceQuota's parent), the
 * total is the whole quota's, as HNC's status shows it, and the per-namespace parts only those
 * of namespaces in the scope; `namespacesWithheld` counts the others (other teams' namespaces,
 * whose usage and denials the parent's token may not read).
 */
export async function usageOr404(
  queries: ClusterQueries,
  usage: SharedUsageQueries,
  key: string,
  at: string | undefined,
  resource: string,
  name: string,
  scope?: ReadonlySet<string>,
) {
  if (at) {
    const then = await usage.usageAt(key, at);
    if (then) return withinScope(then, scope);
  } else {
    const view = await queries.getSharedQuota(key);
    if (view)
      return withinScope(
        {
          key,
          version: view.version,
          defined: true,
          hard: view.hard,
          used: view.used,
          namespaces: view.namespaces,
          overHard: view.overHard,
        },
        scope,
      );
  }
  throw new LedgerError('NotFound', `${resource} "${name}" not found`, { kind: resource, name });
}

export function withinScope<T extends { readonly namespaces: readonly { readonly namespace: string }[] }>(
  usage: T,
  scope: ReadonlySet<string> | undefined,
): T & { namespacesWithheld?: number } {
  if (!scope) return usage;
  const namespaces = usage.namespaces.filter((n) => scope.has(n.namespace));
  const withheld = usage.namespaces.length - namespaces.length;
  return { ...usage, namespaces, ...(withheld > 0 ? { namespacesWithheld: withheld } : {}) };
}

/** As usageOr404; with a `scope`, only the denials of namespaces in it are marked. */
export async function seriesOr404(
  usage: SharedUsageQueries,
  clock: LedgerClock,
  key: string,
  query: UsageSeriesQueryDto,
  resource: string,
  name: string,
  scope?: ReadonlySet<string>,
): Promise<SharedQuotaUsageSeries> {
  const series = await usage.usageSeries(key, await seriesRange(query, clock), scope);
  if (!series) throw new LedgerError('NotFound', `${resource} "${name}" has no history: it never existed`, { kind: resource, name });
  return series;
}
