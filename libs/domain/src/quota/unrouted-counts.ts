import { groupResourceString } from '../kube/forbidden.js';
import { CHARGED_KINDS } from '../kube/kinds.js';
import type { GroupResource } from '../kube/types.js';
import { isIgnoredResource } from '../usage/registry.js';

/**
 * The object counts a quota names whose kind the webhooks are not sent (`count/serviceaccounts`,
 * `count/ingresses.networking.k8s.io`, a CRD's): the webhook configuration quotactl generates
 * routes the charged kinds (CHARGED_KINDS sent to the webhook) and the custom resources it is
 * given, so such a count is only counted after the fact, by the reconciler, never refused at
 * admission. One warning each, saying what to do.
 */
export function unroutedCountWarnings(resourceNames: readonly string[], customResources: readonly GroupResource[]): string[] {
  const routed = [...CHARGED_KINDS.filter((kind) => kind.webhook).map((kind) => kind.groupResource), ...customResources];
  const warnings: string[] = [];
  for (const name of resourceNames) {
    if (!name.startsWith('count/')) continue;
    const groupResource = countedResource(name.slice('count/'.length));
    if (!groupResource || isIgnoredResource(groupResource)) continue;
    if (routed.some((r) => r.group === groupResource.group && r.resource === groupResource.resource)) continue;
    const resource = groupResourceString(groupResource);
    warnings.push(
      `${name} is counted only after the fact: the webhooks are not sent ${resource} writes, so a create past it is not refused; ` +
        `name it in CUSTOM_RESOURCES and in quotactl webhook-config --custom-resource (${resource}/<version>=<Kind>) to enforce it at admission`,
    );
  }
  return warnings;
}

/** `serviceaccounts` → core serviceaccounts, `ingresses.networking.k8s.io` → that group's ingresses. */
function countedResource(text: string): GroupResource | undefined {
  if (text === '') return undefined;
  const dot = text.indexOf('.');
  return dot < 0 ? { group: '', resource: text } : { group: text.slice(dot + 1), resource: text.slice(0, dot) };
}
