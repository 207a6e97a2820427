import type { AppConfig } from '@quota/config';
import type { GroupResource } from '@quota/domain';

/** The custom resources this deployment names (CUSTOM_RESOURCES): the webhooks are sent them too, as quotactl generates them. */
export function customResourcesOf(config: AppConfig): readonly GroupResource[] {
  return config.inventory.source === 'none' ? [] : config.inventory.customKinds.map((kind) => kind.groupResource);
}
