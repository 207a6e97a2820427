import type { GroupResource, KubeObject } from '@quota/domain';
import { InventoryError, type InventoryObject } from './inventory.js';
import { KNOWN_KINDS, resourceOfKind, sameResource, type KnownKind } from './kinds.js';

/** How an object is named in an error: `Pod team-a/web-1`, or its position when it has no name. */
export function describeObject(item: unknown, index: number): string {
  const object = isRecord(item) ? item : {};
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  const kind = typeof object['kind'] === 'string' ? object['kind'] : 'object';
  const name = typeof metadata['name'] === 'string' && metadata['name'] !== '' ? metadata['name'] : `#${index} (no name)`;
  return typeof metadata['namespace'] === 'string' ? `${kind} ${metadata['namespace']}/${name}` : `${kind} ${name}`;
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Raw listed objects (each with apiVersion, kind, metadata) → the covered InventoryObjects.
 * Objects of other resources are skipped. Anything that would make a covered object
 * unmatchable (no uid, no name, another namespace, a uid seen twice) refuses the whole
 * listing: read as "absent", that object's reservation would be released.
 */
export function toInventoryObjects(
  source: string,
  namespace: string,
  raw: readonly unknown[],
  covers: readonly GroupResource[],
  maxObjects: number,
  kinds: readonly KnownKind[] = KNOWN_KINDS,
): InventoryObject[] {
  const fail = (message: string) => new InventoryError(`${source}: namespace ${namespace}: ${message}`, source);
  if (raw.length > maxObjects) throw fail(`${raw.length} objects, more than the ${maxObjects} a listing may hold`);
  const objects: InventoryObject[] = [];
  const uids = new Set<string>();
  for (const [index, item] of raw.entries()) {
    const where = describeObject(item, index);
    if (!isRecord(item)) throw fail(`item #${index} is not an object`);
    const object = item as KubeObject;
    if (typeof object.kind !== 'string' || typeof object.apiVersion !== 'string') throw fail(`${where} has no kind or apiVersion`);
    const groupResource = resourceOfKind(object.kind, object.apiVersion, kinds);
    if (!groupResource || !covers.some((c) => sameResource(c, groupResource))) continue;
    const metadata = isRecord(object.metadata) ? object.metadata : {};
    if (typeof metadata.uid !== 'string' || metadata.uid === '')
      throw fail(`${where} has no metadata.uid, so it cannot be matched to a reservation`);
    if (typeof metadata.name !== 'string' || metadata.name === '') throw fail(`${where} has no metadata.name`);
    if (metadata.namespace !== undefined && metadata.namespace !== namespace)
      throw fail(`${where} belongs to namespace ${String(metadata.namespace)}`);
    if (uids.has(metadata.uid)) throw fail(`${where}: uid ${metadata.uid} is listed twice`);
    uids.add(metadata.uid);
    objects.push({ groupResource, uid: metadata.uid, name: metadata.name, object: { ...object, metadata: { ...metadata, namespace } } });
  }
  return objects;
}
