import type { GroupResource, KubeObject } from './types.js';

/** `GroupResource.String()`: `pods`, `deployments.apps`. */
export function groupResourceString(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

/**
 * The name Kubernetes' admission errors use: the request's name, else the object's name,
 * else its generateName (names are not generated yet at admission), else `Unknown`.
 */
export function admissionObjectName(object: KubeObject | undefined, requestName?: string): string {
  if (requestName) return requestName;
  return object?.metadata?.name || object?.metadata?.generateName || 'Unknown';
}

/**
 * A Forbidden status message as admission.NewForbidden / apierrors.NewForbidden word it:
 * `pods "web" is forbidden: <reason>`.
 */
export function forbiddenText(groupResource: GroupResource, name: string, reason: string): string {
  if (groupResource.group === '' && groupResource.resource === '') return `forbidden: ${reason}`;
  if (name === '') return `${groupResourceString(groupResource)} is forbidden: ${reason}`;
  return `${groupResourceString(groupResource)} ${JSON.stringify(name)} is forbidden: ${reason}`;
}
