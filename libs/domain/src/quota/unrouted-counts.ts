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
  const unrouted = CHARGED_KINDS.filter((kind) => !kind.webhook).map((kind) => kind.groupResource);
  const warnings: string[] = [];
  for (const name of resourceNames) {
    const groupResource = countedResource(name);
    if (!groupResource || isIgnoredResource(groupResource)) continue;
    if (!unrouted.some((r) => r.group === groupResource.group && r.resource === groupResource.resource)) continue;
    const resource = groupResourceString(groupResource);
    warnings.push(
      `${name} is counted only after the fact: the webhooks are not sent ${resource} writes (quotas are defined through the ledger), ` +
        `so a create past it is not refused; the reconciler counts what exists`,
    );
  }
  return warnings;
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
