import type { GroupResource, KubeObject } from '@quota/domain';
import { InventoryError, type InventoryObject } from './inventory.js';
import { MAX_OBJECTS, resourceOfKind, sameResource } from './kinds.js';

/**
 * Turns raw listed objects into InventoryObjects: the namespace must match, every object
 * needs a uid and a name (one without cannot be matched, so the listing is refused rather
 * than read as "absent"), and only covered resources are kept.
 */
export function toInventoryObjects(source: string, namespace: string, raw: readonly unknown[], covers: readonly GroupResource[]): InventoryObject[] {
  if (raw.length > MAX_OBJECTS) throw new InventoryError(`${source}: ${raw.length} objects in namespace ${namespace}, more than the ${MAX_OBJECTS} a listing may hold`, source);
  const objects: InventoryObject[] = [];
  for (const [i, item] of raw.entries()) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new InventoryError(`${source}: item ${i} is not an object`, source);
    const object = item as KubeObject;
    const metadata = object.metadata ?? {};
    const where = `${object.kind ?? '?'} ${metadata.name ?? `#${i}`}`;
    if (typeof object.kind !== 'string' || typeof object.apiVersion !== 'string') throw new InventoryError(`${source}: ${where} has no kind or apiVersion`, source);
    const groupResource = resourceOfKind(object.kind, object.apiVersion);
    if (!groupResource || !covers.some((c) => sameResource(c, groupResource))) continue;
    if (typeof metadata.uid !== 'string' || metadata.uid === '') throw new InventoryError(`${source}: ${where} has no metadata.uid, so it cannot be matched to a reservation`, source);
    if (typeof metadata.name !== 'string' || metadata.name === '') throw new InventoryError(`${source}: ${where} has no metadata.name`, source);
    if (metadata.namespace !== undefined && metadata.namespace !== namespace) {
      throw new InventoryError(`${source}: ${where} is in namespace ${String(metadata.namespace)}, listed for ${namespace}`, source);
    }
    objects.push({ groupResource, uid: metadata.uid, name: metadata.name, object: { ...object, metadata: { ...metadata, namespace } } });
  }
  return objects;
}
