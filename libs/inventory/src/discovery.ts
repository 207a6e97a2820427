import { isIgnoredResource } from '@quota/domain';
import { sameResource, type KnownKind } from './kinds.js';
import { isRecord } from './objects.js';

/**
 * What the API server's discovery says it serves (`/api`, `/apis`): every namespaced resource,
 * in its group's preferred version, that can be both listed and watched, subresources
 * (`pods/status`) and the resources quota never charges (events, reviews) left out. These are
 * the resources `count/<resource>.<group>` can charge, so the kubernetes inventory lists them
 * besides its fixed kinds: a quota on `count/serviceaccounts` is then settled like one on pods.
 */

/** One GET of a discovery document: the parsed body, or null when the server answers 404 (it serves no such document). */
export type DiscoveryGet = (path: string) => Promise<unknown>;

/** The kinds one APIResourceList (`/api/v1`, `/apis/apps/v1`) serves that an inventory can list and watch. */
export function listableKinds(groupVersion: string, list: unknown): KnownKind[] {
  if (!isRecord(list) || !Array.isArray(list['resources'])) return [];
  const group = groupVersion.includes('/') ? groupVersion.slice(0, groupVersion.indexOf('/')) : '';
  const kinds: KnownKind[] = [];
  for (const resource of list['resources'] as unknown[]) {
    if (!isRecord(resource)) continue;
    const { name, kind, namespaced, verbs } = resource;
    if (typeof name !== 'string' || name === '' || name.includes('/') || typeof kind !== 'string' || kind === '') continue;
    if (namespaced !== true || !Array.isArray(verbs) || !verbs.includes('list') || !verbs.includes('watch')) continue;
    const groupResource = { group, resource: name };
    if (isIgnoredResource(groupResource)) continue;
    kinds.push({ kind, apiVersion: groupVersion, groupResource });
  }
  return kinds;
}

/** The preferred groupVersion of every group an APIGroupList (`/apis`) names. */
export function preferredVersions(groups: unknown): string[] {
  if (!isRecord(groups) || !Array.isArray(groups['groups'])) return [];
  const versions: string[] = [];
  for (const group of groups['groups'] as unknown[]) {
    if (!isRecord(group)) continue;
    const preferred = isRecord(group['preferredVersion']) ? group['preferredVersion']['groupVersion'] : undefined;
    const first = Array.isArray(group['versions']) && isRecord(group['versions'][0]) ? group['versions'][0]['groupVersion'] : undefined;
    const version = typeof preferred === 'string' ? preferred : first;
    if (typeof version === 'string' && version.includes('/')) versions.push(version);
  }
  return versions;
}

/**
 * Every listable namespaced kind the server serves, the core group first. A group whose
 * version answers 404 (being removed, an aggregated API that is down) contributes nothing;
 * any other failure rejects, so that a listing never covers less because discovery failed.
 */
export async function discoverKinds(get: DiscoveryGet): Promise<KnownKind[]> {
  const core = await get('/api/v1');
  const groups = await get('/apis');
  const versions = preferredVersions(groups);
  const lists = await Promise.all(versions.map(async (version) => [version, await get(`/apis/${version}`)] as const));
  const kinds: KnownKind[] = [];
  for (const [version, list] of [['v1', core] as const, ...lists]) {
    for (const kind of listableKinds(version, list))
      if (!kinds.some((k) => sameResource(k.groupResource, kind.groupResource))) kinds.push(kind);
  }
  return kinds;
}

/** `fixed` followed by the discovered kinds it does not already name (a fixed kind keeps its apiVersion). */
export function mergeKinds(fixed: readonly KnownKind[], discovered: readonly KnownKind[]): KnownKind[] {
  const merged = [...fixed];
  for (const kind of discovered) {
    const clash = merged.some(
      (k) =>
        sameResource(k.groupResource, kind.groupResource) || (k.kind === kind.kind && k.groupResource.group === kind.groupResource.group),
    );
    if (!clash) merged.push(kind);
  }
  return merged;
}
