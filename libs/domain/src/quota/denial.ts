import { assertNever } from '../assert.js';
import type { GroupResource, ScopedResourceSelectorRequirement } from '../kube/types.js';
import type { Quantity } from '../quantity/quantity.js';
import { fromEntries, prettyPrint } from '../resources/resource-list.js';
import { forbiddenText } from '../kube/forbidden.js';
import type { SharedQuotaRef } from '../shared/shared-quota.js';

export { admissionObjectName, groupResourceString } from '../kube/forbidden.js';

/** One resource a request would push over a quota's hard limit. */
export interface ExceededResource {
  readonly resource: string;
  /** What this request adds to the quota for this resource. */
  readonly requested: Quantity;
  /**
   * The quota's usage before the request. Absent only when the quota has no usage entry for
   * a resource its evaluator does not claim, which Kubernetes also leaves out of the message.
   */
  readonly used: Quantity | undefined;
  readonly hard: Quantity;
}

/**
 * Why quota admission refused a request: one variant per refusal of Kubernetes'
 * ResourceQuota admission plugin, in the order it checks them.
 */
export type QuotaDenial =
  /**
   * The object omits a cpu/memory request or limit that a matching quota tracks. `detail` is
   * the evaluator's wording of the rule (`must specify limits.cpu for: app; ...`).
   */
  | {
      readonly kind: 'MustSpecify';
      readonly quota: string;
      readonly shared?: SharedQuotaRef;
      readonly resources: readonly string[];
      readonly detail: string;
    }
  /** A matching quota has no usage figure for a resource it limits. */
  | { readonly kind: 'StatusUnknown'; readonly quota: string; readonly shared?: SharedQuotaRef; readonly resources: readonly string[] }
  /** The object itself would consume a negative amount. */
  | { readonly kind: 'NegativeUsage'; readonly resources: readonly string[] }
  /** An UPDATE came without the object's previous version. */
  | { readonly kind: 'OldObjectMissing' }
  /** `limitedResources` names a consumed resource that no matching quota limits. */
  | { readonly kind: 'InsufficientQuotaToConsume'; readonly resources: readonly string[] }
  /** `limitedResources` names a scope the object is in that no quota scope covers. */
  | { readonly kind: 'InsufficientQuotaToMatchScopes'; readonly scopes: readonly ScopedResourceSelectorRequirement[] }
  /** The request would take a quota's usage above its hard limit. */
  | {
      readonly kind: 'Exceeded';
      readonly quota: string;
      readonly shared?: SharedQuotaRef;
      readonly resources: readonly ExceededResource[];
    };

/**
 * The quota as a refusal names it: a ResourceQuota by its name (Kubernetes' words), a
 * ClusterResourceQuota as `cluster quota: <name>`, a HierarchicalResourceQuota as HNC's webhook
 * does, `hierarchical quota in namespace "<ns>": "<name>"`.
 */
function quotaWords(denial: { readonly quota: string; readonly shared?: SharedQuotaRef }): { noun: string; name: string } {
  if (!denial.shared) return { noun: 'quota', name: denial.quota };
  if (denial.shared.kind === 'ClusterResourceQuota') return { noun: 'cluster quota', name: denial.shared.name };
  return {
    noun: `hierarchical quota in namespace ${JSON.stringify(denial.shared.namespace ?? '')}`,
    name: JSON.stringify(denial.shared.name),
  };
}

const sortedNames = (names: Iterable<string>): string[] => [...new Set(names)].sort();

/**
 * Go's `%v` of a `[]ScopedResourceSelectorRequirement`, which is what Kubernetes prints in
 * the limited-scopes message: `[{PriorityClass In [a b]} {BestEffort Exists []}]`.
 */
export function formatScopeRequirements(scopes: readonly ScopedResourceSelectorRequirement[]): string {
  const one = (s: ScopedResourceSelectorRequirement): string => `{${s.scopeName} ${s.operator} [${(s.values ?? []).join(' ')}]}`;
  return `[${scopes.map(one).join(' ')}]`;
}

/** The text of the refusal, exactly as Kubernetes words it (without the `... is forbidden:` prefix). */
export function renderDenial(denial: QuotaDenial): string {
  switch (denial.kind) {
    case 'MustSpecify': {
      const { noun, name } = quotaWords(denial);
      return `failed ${noun}: ${name}: ${denial.detail}`;
    }
    case 'StatusUnknown': {
      const { noun, name } = quotaWords(denial);
      return `status unknown for ${noun}: ${name}, resources: ${sortedNames(denial.resources).join(',')}`;
    }
    case 'NegativeUsage':
      return `quota usage is negative for resource(s): ${sortedNames(denial.resources).join(',')}`;
    case 'OldObjectMissing':
      return 'unable to get previous usage since prior version of object was not found';
    case 'InsufficientQuotaToConsume':
      return `insufficient quota to consume: ${sortedNames(denial.resources).join(',')}`;
    case 'InsufficientQuotaToMatchScopes':
      return `insufficient quota to match these scopes: ${formatScopeRequirements(denial.scopes)}`;
    case 'Exceeded': {
      const list = (pick: (r: ExceededResource) => Quantity | undefined) =>
        prettyPrint(
          fromEntries(
            denial.resources.flatMap((r): [string, Quantity][] => {
              const q = pick(r);
              return q === undefined ? [] : [[r.resource, q]];
            }),
          ),
        );
      const { noun, name } = quotaWords(denial);
      return `exceeded ${noun}: ${name}, requested: ${list((r) => r.requested)}, used: ${list((r) => r.used)}, limited: ${list((r) => r.hard)}`;
    }
    default:
      return assertNever(denial, 'quota denial');
  }
}

/**
 * Whether Kubernetes returns the denial as a 403 Forbidden status. Every quota refusal is
 * Forbidden except the limited-scopes one, which the plugin returns as a bare error and the
 * API server therefore answers as a 500 with an empty (Unknown) reason.
 */
export function isForbidden(denial: QuotaDenial): boolean {
  return denial.kind !== 'InsufficientQuotaToMatchScopes';
}

/**
 * The full Forbidden status message (`pods "web" is forbidden: exceeded quota: ...`), as
 * admission.NewForbidden and apierrors.NewForbidden build it.
 */
export function forbiddenMessage(groupResource: GroupResource, name: string, denial: QuotaDenial): string {
  return forbiddenText(groupResource, name, renderDenial(denial));
}
