import { groupResourceString } from '../kube/forbidden.js';
import { CHARGED_KINDS } from '../kube/kinds.js';
import type { GroupResource } from '../kube/types.js';
import { isIgnoredResource, LEGACY_OBJECT_COUNT_ALIASES } from '../usage/registry.js';

/**
 * The object counts a quota names whose kind the webhooks are not sent: the webhook configuration
 * quotactl generates sends every namespaced kind's CREATE (a CRD's included) but ResourceQuota
 * objects' (CHARGED_KINDS without `webhook`: quotas live in the ledger's admin API), so
 * `count/resourcequotas` is only counted after the fact, by the reconciler, never refused at
 * admission. One warning each, saying so.
 */
export function unroutedCountWarnings(resourceNames: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const name of resourceNames) {
    const groupResource = countedResource(name);
    if (!groupResource || isIgnoredResource(groupResource) || !neverSent(groupResource)) continue;
    const resource = groupResourceString(groupResource);
    warnings.push(
      `${name} is counted only after the fact: the webhooks are not sent ${resource} writes (quotas are defined through the ledger), ` +
        `so a create past it is not refused; the reconciler counts what exists`,
    );
  }
  return warnings;
}

/** One rule of a registered webhook, as admissionregistration.k8s.io/v1 has it (only what routing a CREATE reads). */
export interface RegisteredRule {
  readonly operations?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly scope?: string;
}

/**
 * The object counts among `resourceNames` (a quota's hard keys) whose CREATE none of `rules` sends,
 * in the order given: those a create past would not be refused at admission, only counted after
 * the fact. Matched as the kube-apiserver matches a rule (`*` in groups and operations, `*` and
 * every-resource-and-subresource in resources, a Namespaced or `*` scope); a webhook's
 * matchConditions and selectors are not evaluated (a kind a rule names is sent where the webhook is). ResourceQuota objects are never
 * sent, whatever the rules (the count webhook's condition leaves them out); what quota never
 * charges is never reported.
 */
export function unroutedCounts(resourceNames: readonly string[], rules: readonly RegisteredRule[]): string[] {
  return resourceNames.filter((name) => {
    const groupResource = countedResource(name);
    if (!groupResource || isIgnoredResource(groupResource)) return false;
    return neverSent(groupResource) || !rules.some((rule) => sendsCreate(rule, groupResource));
  });
}

function sendsCreate(rule: RegisteredRule, { group, resource }: GroupResource): boolean {
  const has = (values: readonly string[] | undefined, ...wanted: string[]) => (values ?? []).some((v) => wanted.includes(v));
  return (
    has(rule.operations, 'CREATE', '*') &&
    has(rule.apiGroups, group, '*') &&
    has(rule.resources, resource, '*', '*/*') &&
    (rule.scope === undefined || rule.scope === '*' || rule.scope === 'Namespaced')
  );
}

/** A kind quota charges whose writes no webhook of ours is sent (CHARGED_KINDS without `webhook`: ResourceQuota objects). */
function neverSent({ group, resource }: GroupResource): boolean {
  return CHARGED_KINDS.some((kind) => !kind.webhook && kind.groupResource.group === group && kind.groupResource.resource === resource);
}

/** `count/serviceaccounts` → core serviceaccounts, `count/ingresses.networking.k8s.io` → that group's ingresses; a legacy bare name (`resourcequotas`) its core kind. */
function countedResource(name: string): GroupResource | undefined {
  if (Object.prototype.hasOwnProperty.call(LEGACY_OBJECT_COUNT_ALIASES, name)) return { group: '', resource: name };
  if (!name.startsWith('count/')) return undefined;
  const text = name.slice('count/'.length);
  if (text === '') return undefined;
  const dot = text.indexOf('.');
  return dot < 0 ? { group: '', resource: text } : { group: text.slice(dot + 1), resource: text.slice(0, dot) };
}
