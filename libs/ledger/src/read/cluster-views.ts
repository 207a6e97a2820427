import {
  Resources,
  type NamespaceDefinition,
  type NamespaceState,
  type RawQuantities,
  type ResourceList,
  type SharedQuotaDefinition,
  type SharedQuotaRef,
} from '@quota/domain';
import type { SharedHeadJson } from '../shared-heads.js';

/** A Namespace object as stored, and the shared quotas covering the namespace now. */
export interface NamespaceView {
  readonly name: string;
  readonly definition: NamespaceDefinition;
  /** The stream version of its last change: its `metadata.resourceVersion`. */
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly sharedQuotas: readonly SharedQuotaRef[];
}

/** A shared quota as stored, with its usage now: in all, and per namespace it covers. */
export interface SharedQuotaView {
  readonly key: string;
  readonly definition: SharedQuotaDefinition;
  /** The version of its stream's last definition event: its `metadata.resourceVersion`. */
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Canonical hard limits. */
  readonly hard: RawQuantities;
  /** Canonical usage over every namespace it covers, one entry per hard resource (may exceed hard after a limit was lowered or a namespace joined). */
  readonly used: RawQuantities;
  /** Per covered namespace, in name order: what it contributes. */
  readonly namespaces: readonly { readonly namespace: string; readonly used: RawQuantities }[];
  /** The resources whose usage is above hard (a namespace relabelled in, a limit lowered), in name order. */
  readonly overHard: readonly OverHardResource[];
}

/** A resource of a shared quota used beyond its hard limit, canonical. */
export interface OverHardResource {
  readonly resource: string;
  readonly used: string;
  readonly hard: string;
}

/**
 * The resources whose usage is above hard. Admission never takes a shared quota there, but a
 * namespace relabelled into it brings its usage along, and a limit may be lowered below usage:
 * nothing more is admitted until usage drops, and this says why.
 */
export function overHardOf(hard: RawQuantities, used: RawQuantities): OverHardResource[] {
  const limits = Resources.resourceList(hard);
  const usage = Resources.resourceList(used);
  return Resources.resourceNames(limits)
    .sort()
    .flatMap((resource) => {
      const limit = Resources.get(limits, resource);
      const now = Resources.get(usage, resource);
      return limit && now && now.cmp(limit) > 0 ? [{ resource, used: now.canonical(), hard: limit.canonical() }] : [];
    });
}

const iso = (ms: number | undefined): string => new Date(ms ?? 0).toISOString();

export function namespaceViewOf(name: string, state: NamespaceState): NamespaceView | undefined {
  const object = state.object;
  if (!object) return undefined;
  return {
    name,
    definition: object.definition,
    version: object.version,
    createdAt: iso(object.createdAt),
    updatedAt: iso(object.updatedAt),
    sharedQuotas: [...state.shared.values()].map((q) => q.ref),
  };
}

export function sharedQuotaViewOf(key: string, version: number, state: SharedHeadJson): SharedQuotaView | undefined {
  const definition = state.definition;
  if (!definition) return undefined;
  const hard = Resources.resourceList(definition.spec.hard ?? {});
  const members = Object.entries(state.members)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([namespace, used]) => ({ namespace, used: Resources.resourceList(used) }));
  const { used, namespaces } = sharedTotal(hard, members);
  return {
    key,
    definition,
    version,
    createdAt: iso(state.createdAt),
    updatedAt: iso(state.updatedAt),
    hard: Resources.canonicalResourceList(hard),
    used,
    namespaces,
    overHard: overHardOf(Resources.canonicalResourceList(hard), used),
  };
}

/**
 * A shared quota's usage from what its namespaces contribute: each part counted for the hard
 * resources only, and the total with an entry (zero or not) for every hard resource. Canonical.
 */
export function sharedTotal<M extends { readonly namespace: string; readonly used: ResourceList }>(
  hard: ResourceList,
  members: readonly M[],
): { used: RawQuantities; namespaces: (Omit<M, 'used'> & { used: RawQuantities })[] } {
  const names = Resources.resourceNames(hard);
  let total = Resources.fromEntries(Object.entries(hard).map(([name, q]) => [name, q.sub(q)] as const));
  const namespaces = members.map((member) => {
    const part = Resources.mask(member.used, names);
    total = Resources.add(total, part);
    return { ...member, used: Resources.canonicalResourceList(part) };
  });
  return { used: Resources.canonicalResourceList(total), namespaces };
}
