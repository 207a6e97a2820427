/**
 * A custom resource quota charges (`count/<resource>.<group>`) and the inventory lists, so that
 * the webhook's reservations of it are committed and released (CUSTOM_RESOURCES).
 */
export interface CustomResourceConfig {
  readonly kind: string;
  readonly apiVersion: string;
  readonly groupResource: { readonly group: string; readonly resource: string };
}

const DNS_LABEL = '[a-z0-9](?:[-a-z0-9]*[a-z0-9])?';
/**
 * `widgets.example.com/v1=Widget`: plural resource, its group, a version, the kind. The group may be
 * a built-in one without a dot (`poddisruptionbudgets.policy/v1=PodDisruptionBudget`) or the core
 * group, left out (`serviceaccounts/v1=ServiceAccount`): any kind quota counts as `count/<resource>.<group>`.
 */
const CUSTOM_RESOURCE = new RegExp(
  `^(${DNS_LABEL})(?:\\.(${DNS_LABEL}(?:\\.${DNS_LABEL})*))?/(v[1-9][0-9]*(?:(?:alpha|beta)[1-9][0-9]*)?)=([A-Z][A-Za-z0-9]*)$`,
);
const CUSTOM_RESOURCES_MAX = 64;

/**
 * Custom resources as CUSTOM_RESOURCES and `quotactl webhook-config --custom-resource` spell them:
 * entries of `resource.group/version=Kind`. A string says what is wrong.
 */
export function parseCustomResources(entries: readonly string[]): CustomResourceConfig[] | string {
  if (entries.length > CUSTOM_RESOURCES_MAX) return `lists ${entries.length} resources; at most ${CUSTOM_RESOURCES_MAX}`;
  const kinds: CustomResourceConfig[] = [];
  for (const entry of entries) {
    const match = CUSTOM_RESOURCE.exec(entry);
    if (!match)
      return `"${entry}" is not resource.group/version=Kind (e.g. widgets.example.com/v1=Widget, or serviceaccounts/v1=ServiceAccount for the core group)`;
    const [, resource = '', group = '', version = '', kind = ''] = match;
    const spelled = group === '' ? resource : `${resource}.${group}`;
    if (kinds.some((k) => k.groupResource.resource === resource && k.groupResource.group === group)) return `lists ${spelled} twice`;
    kinds.push({ kind, apiVersion: group === '' ? version : `${group}/${version}`, groupResource: { group, resource } });
  }
  return kinds;
}
