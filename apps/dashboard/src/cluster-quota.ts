import type { EventView } from '@quota/api';
import { percent, quantityNumber, usageRatio } from './format.js';

/** A meta/v1 LabelSelector as the API prints it. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

/** `spec.selector` of a ClusterResourceQuota: labels and/or exact annotations (either may be null). */
export interface ClusterQuotaSelector {
  readonly labels?: LabelSelector | null;
  readonly annotations?: Readonly<Record<string, string>> | null;
}

/**
 * One change of a quota's definition (GET …/resourcequotas/{name}/history, or a cluster quota's
 * …/history): `before`/`after` are `{hard, scopes?, scopeSelector?, selector?}`, `version` the
 * stream version its limit marker on a chart carries.
 */
export interface QuotaChange extends Omit<EventView, 'data' | 'requestId'> {
  readonly before: { readonly hard?: Readonly<Record<string, string>>; readonly selector?: ClusterQuotaSelector } | null;
  readonly after: { readonly hard?: Readonly<Record<string, string>>; readonly selector?: ClusterQuotaSelector } | null;
  readonly changed: readonly string[];
}

/** A ClusterResourceQuota as GET /v1/clusterresourcequotas[/{name}] gives it (quota.openshift.io/v1). */
export interface ClusterResourceQuota {
  readonly metadata: { readonly name: string; readonly resourceVersion?: string; readonly creationTimestamp?: string };
  readonly spec: { readonly selector: ClusterQuotaSelector; readonly quota: { readonly hard?: Readonly<Record<string, string>> } };
  readonly status: {
    readonly total: { readonly hard: Readonly<Record<string, string>>; readonly used: Readonly<Record<string, string>> };
    readonly namespaces: readonly {
      readonly namespace: string;
      readonly status: { readonly hard: Readonly<Record<string, string>>; readonly used: Readonly<Record<string, string>> };
    }[];
  };
}

/**
 * A selector in one line, in the order it was written: `tenant=acme, env In (dev,prod)`,
 * `legacy DoesNotExist`, then `annotations: k=v` when it matches annotations too.
 */
export function selectorSummary(selector: ClusterQuotaSelector | null | undefined): string {
  const labels = selector?.labels;
  const requirements = [
    ...Object.entries(labels?.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`),
    ...(labels?.matchExpressions ?? []).map((e) =>
      e.operator === 'In' || e.operator === 'NotIn' ? `${e.key} ${e.operator} (${(e.values ?? []).join(',')})` : `${e.key} ${e.operator}`,
    ),
  ];
  const annotations = Object.entries(selector?.annotations ?? {}).map(([key, value]) => `${key}=${value}`);
  const parts = [requirements.join(', '), annotations.length > 0 ? `annotations: ${annotations.join(', ')}` : ''].filter(Boolean);
  return parts.length === 0 ? 'no selector' : parts.join('; ');
}

/** The resource closest to its hard limit (the first of equals), or undefined without limits. */
export function tightestResource(
  hard: Readonly<Record<string, string>>,
  used: Readonly<Record<string, string>>,
): { readonly resource: string; readonly ratio: number } | undefined {
  let tightest: { resource: string; ratio: number } | undefined;
  for (const [resource, limit] of Object.entries(hard)) {
    const ratio = usageRatio(used[resource], limit);
    if (!tightest || ratio > tightest.ratio) tightest = { resource, ratio };
  }
  return tightest;
}

/** One namespace's part of the quota's total use, as a percentage; "—" when nothing is used at all. */
export function share(part: string | undefined, total: string | undefined): string {
  const whole = quantityNumber(total ?? '0');
  const mine = quantityNumber(part ?? '0');
  if (!(whole > 0) || Number.isNaN(mine)) return '—';
  return percent(mine / whole);
}

/** `SharedQuotaChanged`, `QuotaChanged` → "changed"; a type the page does not know is shown as it is. */
export function changeType(type: string): string {
  const known = /^(?:Shared)?Quota(Defined|Changed|Removed)$/.exec(type);
  return known?.[1] ? known[1].toLowerCase() : type;
}

/**
 * What a change did, one entry per changed field: `pods: 10` when defined, `pods: 10 → 20`
 * after, `pods: 10 → —` when a resource (or the quota) went; `selector: tenant=acme → …`;
 * scopes only by name.
 */
export function changeSummary(change: Pick<QuotaChange, 'before' | 'after' | 'changed'>): string[] {
  const value = (side: QuotaChange['before'], field: string): string | undefined => {
    if (!side) return undefined;
    if (field === 'selector') return side.selector ? selectorSummary(side.selector) : undefined;
    return side.hard?.[field];
  };
  return change.changed.map((field) => {
    if (field === 'scopes' || field === 'scopeSelector') return field;
    const after = value(change.after, field) ?? '—';
    return change.before === null ? `${field}: ${after}` : `${field}: ${value(change.before, field) ?? '—'} → ${after}`;
  });
}

/** A shared quota covering a namespace, as the namespace's usage and the namespaces list name it. */
export interface CoveringQuota {
  readonly kind: 'ClusterResourceQuota' | 'HierarchicalResourceQuota';
  readonly name: string;
  readonly namespace?: string;
  readonly hard: Readonly<Record<string, string>>;
  /** What the namespace contributes to its use. */
  readonly used: Readonly<Record<string, string>>;
}

/**
 * How the dashboard names a shared quota covering a namespace, and where it leads: a cluster
 * quota to its own page; a hierarchical one (which has no page of its own) to the namespace it
 * lives in, whose page lists it among the quotas covering it.
 */
export function coveringPlace(quota: Pick<CoveringQuota, 'kind' | 'name' | 'namespace'>): {
  readonly label: string;
  readonly href: string;
} {
  if (quota.kind === 'ClusterResourceQuota')
    return { label: `cluster quota ${quota.name}`, href: `#/clusterresourcequotas/${encodeURIComponent(quota.name)}` };
  const home = quota.namespace ?? '';
  return { label: `hierarchical quota ${home}/${quota.name}`, href: `#/ns/${encodeURIComponent(home)}` };
}
