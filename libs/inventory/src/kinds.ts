import { CHARGED_KINDS, type ChargedKind, type GroupResource } from '@quota/domain';

/** A kind every source can list: the apiVersion its objects carry and the resource it is. */
export type KnownKind = Pick<ChargedKind, 'kind' | 'apiVersion' | 'groupResource'>;

/**
 * The namespaced kinds Kubernetes' ResourceQuota counts: the domain's one list (CHARGED_KINDS),
 * which the webhook rules and the reconciler's RBAC come from too. Every source maps
 * kind ↔ resource through it and nothing else, so they cannot disagree.
 */
export const KNOWN_KINDS: readonly ChargedKind[] = CHARGED_KINDS;

/** What a source covers unless told otherwise: every known kind. */
export const DEFAULT_RESOURCES: readonly GroupResource[] = KNOWN_KINDS.map((k) => k.groupResource);

/**
 * The kinds a source maps: the known ones, then the configured custom resources (CUSTOM_RESOURCES),
 * which quota charges as `count/<resource>.<group>`. A custom resource may not redefine a known one.
 */
export function kindsWith(custom: readonly KnownKind[] = []): readonly KnownKind[] {
  const kinds: KnownKind[] = [...KNOWN_KINDS];
  for (const kind of custom) {
    const taken = kinds.find(
      (k) =>
        sameResource(k.groupResource, kind.groupResource) || (k.kind === kind.kind && k.groupResource.group === kind.groupResource.group),
    );
    if (taken)
      throw new Error(
        `custom resource ${formatResource(kind.groupResource)} (${kind.kind}) clashes with ${formatResource(taken.groupResource)} (${taken.kind})`,
      );
    kinds.push(kind);
  }
  return kinds;
}

/** `apps/v1` → `apps`; the core group (`v1`) is the empty string. */
export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * The kinds whose charge reads the object's spec or status (pods' compute, claims' storage, a
 * Service's type, a ResourceClaim's devices): the kubernetes inventory lists and watches them
 * whole. Every other kind is charged one object each (`count/<resource>.<group>`), so only its
 * metadata is read (PartialObjectMetadataList): a Secret's data never leaves the API server.
 */
export const FULL_OBJECT_RESOURCES: readonly GroupResource[] = [
  { group: '', resource: 'pods' },
  { group: '', resource: 'persistentvolumeclaims' },
  { group: '', resource: 'services' },
  { group: 'resource.k8s.io', resource: 'resourceclaims' },
];

export const needsWholeObject = (groupResource: GroupResource): boolean =>
  FULL_OBJECT_RESOURCES.some((r) => sameResource(r, groupResource));

export const sameResource = (a: GroupResource, b: GroupResource): boolean => a.group === b.group && a.resource === b.resource;

/** Kubernetes' own spelling: `pods`, `deployments.apps`. */
export const formatResource = (groupResource: GroupResource): string =>
  groupResource.group === '' ? groupResource.resource : `${groupResource.resource}.${groupResource.group}`;

/**
 * The resource an object of this kind and apiVersion is, when the kind is known *in that
 * group*: a `Job` of `example.com/v1` is some custom resource, not `jobs.batch`.
 */
export function resourceOfKind(kind: string, apiVersion: string, kinds: readonly KnownKind[] = KNOWN_KINDS): GroupResource | undefined {
  const group = groupOfApiVersion(apiVersion);
  return kinds.find((k) => k.kind === kind && k.groupResource.group === group)?.groupResource;
}

export function knownKindOf(groupResource: GroupResource, kinds: readonly KnownKind[] = KNOWN_KINDS): KnownKind | undefined {
  return kinds.find((k) => sameResource(k.groupResource, groupResource));
}

/**
 * The kinds of the resources a source is asked to cover, checked once at creation: a resource no source
 * can map would be "covered" yet never listed, and every reservation for it released.
 */
export function checkResources(
  source: string,
  resources: readonly GroupResource[],
  kinds: readonly KnownKind[] = KNOWN_KINDS,
): readonly KnownKind[] {
  const checked: KnownKind[] = [];
  for (const resource of resources) {
    const known = knownKindOf(resource, kinds);
    if (!known)
      throw new Error(
        `${source} inventory: cannot cover ${formatResource(resource)}: not one of ${kinds.map((k) => formatResource(k.groupResource)).join(', ')}`,
      );
    if (checked.includes(known)) throw new Error(`${source} inventory: ${formatResource(resource)} is listed twice in resources`);
    checked.push(known);
  }
  return checked;
}
