import type { SharedQuotaChanged, SharedQuotaDefined, SharedQuotaRemoved } from '../events/events.js';
import { deepEqualJson } from '../limit-range/json-patch.js';
import {
  selectableOf,
  sharedQuotaKey,
  sharedQuotaSelects,
  sharedQuotaTitle,
  type NamespaceDefinition,
  type SharedQuotaDefinition,
  type SharedQuotaRef,
} from '../shared/shared-quota.js';
import { notFound, refusal, type Refusal } from './answers.js';
import { clusterManagedRefusal } from './cluster-managed.js';
import type { AppliedSharedQuota } from './commands.js';

/**
 * The shared quotas' decider, beside the namespace's: a ClusterResourceQuota's or
 * HierarchicalResourceQuota's PUT or DELETE in, the events of its own stream, the answer and
 * the namespaces whose coverage to bring in step out. The ledger's ClusterWriter reads the facts,
 * locks the heads in its order, calls this, and has every namespace named in `resync` apply or
 * withdraw the quota through the namespace's own decider (SyncSharedQuotas), in one transaction.
 */
export interface PutSharedQuota {
  readonly type: 'PutSharedQuota';
  readonly definition: SharedQuotaDefinition;
  /** `metadata.resourceVersion` from the body: the version the caller last saw. */
  readonly expectedVersion?: number;
  /** The uid a new shared quota gets. */
  readonly uid: string;
  /** Most namespaces one shared quota may cover (SHARED_QUOTA_NAMESPACES_MAX). */
  readonly namespacesMax: number;
  /** A write of the REST admin API: refused (409) when the quota came from a cluster object (cluster-managed.ts). */
  readonly unmanagedOnly?: boolean;
}

export interface RemoveSharedQuota {
  readonly type: 'RemoveSharedQuota';
  readonly ref: SharedQuotaRef;
  /** As PutSharedQuota's. */
  readonly unmanagedOnly?: boolean;
}

export type SharedQuotaCommand = PutSharedQuota | RemoveSharedQuota;

/** A namespace as a shared quota's selection sees it: its Namespace object and the shared quotas covering it now. */
export interface NamespaceLabels {
  readonly namespace: string;
  readonly object: NamespaceDefinition | undefined;
  /** Keys of the shared quotas covering it. */
  readonly shared: readonly string[];
}

export interface SharedQuotaFacts {
  readonly now: number;
  /** The quota's head: its stream version, its definition (undefined once removed), the namespaces it covers. */
  readonly head:
    { readonly version: number; readonly definition: SharedQuotaDefinition | undefined; readonly members: readonly string[] } | undefined;
  /** Every namespace the ledger knows (a PUT's selection); a DELETE needs none. */
  readonly namespaces: readonly NamespaceLabels[];
}

export type SharedQuotaEvent = SharedQuotaDefined | SharedQuotaChanged | SharedQuotaRemoved;

export type SharedQuotaAnswer =
  | { readonly kind: 'Defined' | 'Changed'; readonly definition: SharedQuotaDefinition }
  | { readonly kind: 'Unchanged' }
  | { readonly kind: 'Removed' }
  | Refusal;

export interface SharedQuotaDecision {
  readonly events: readonly SharedQuotaEvent[];
  readonly answer: SharedQuotaAnswer;
  /** The namespaces to sync, in name order: `covered` whether the quota covers them from now on. */
  readonly resync: readonly { readonly namespace: string; readonly covered: boolean }[];
}

export function decideSharedQuota(command: SharedQuotaCommand, facts: SharedQuotaFacts): SharedQuotaDecision {
  return command.type === 'PutSharedQuota' ? decidePut(command, facts) : decideRemove(command, facts);
}

function decidePut(command: PutSharedQuota, facts: SharedQuotaFacts): SharedQuotaDecision {
  const { definition } = command;
  const existing = facts.head?.definition;
  const refused =
    clusterManagedRefusal(command, existing?.metadata, managedTarget(definition.ref, 'changed')) ??
    staleRefusal(definition.ref, existing, facts.head?.version ?? 0, command.expectedVersion);
  if (refused) return { events: [], answer: refused, resync: [] };
  const stored: SharedQuotaDefinition = {
    ...definition,
    metadata: {
      ...withoutServerFields(definition.metadata),
      uid: existing?.metadata?.uid ?? command.uid,
      creationTimestamp: existing?.metadata?.creationTimestamp ?? new Date(facts.now).toISOString(),
    },
  };
  // Compared key order aside: the stored definition comes back from jsonb, which reorders keys.
  if (existing && deepEqualJson(plain(existing), plain(stored))) return { events: [], answer: { kind: 'Unchanged' }, resync: [] };
  const selected = facts.namespaces.filter((n) => sharedQuotaSelects(stored, selectableOf(n.namespace, n.object))).map((n) => n.namespace);
  // A hierarchical quota covers its own namespace whether the ledger knows it yet or not.
  if (stored.ref.kind === 'HierarchicalResourceQuota' && stored.ref.namespace && !selected.includes(stored.ref.namespace))
    selected.push(stored.ref.namespace);
  if (selected.length > command.namespacesMax) {
    const message = `${sharedQuotaTitle(stored.ref)} is forbidden: it would cover ${selected.length} namespaces, more than one shared quota may (SHARED_QUOTA_NAMESPACES_MAX=${command.namespacesMax})`;
    return { events: [], answer: refusal('Forbidden', message, sharedQuotaPlural(stored.ref), stored.ref.name), resync: [] };
  }
  const key = sharedQuotaKey(stored.ref);
  const members = facts.namespaces.filter((n) => n.shared.includes(key)).map((n) => n.namespace);
  const chosen = new Set(selected);
  const resync = [...new Set([...selected, ...members])].sort().map((namespace) => ({ namespace, covered: chosen.has(namespace) }));
  const event: SharedQuotaEvent = existing ? { type: 'SharedQuotaChanged', data: stored } : { type: 'SharedQuotaDefined', data: stored };
  return { events: [event], answer: { kind: existing ? 'Changed' : 'Defined', definition: stored }, resync };
}

function managedTarget(ref: SharedQuotaRef, verb: 'changed' | 'deleted') {
  return {
    resource: sharedQuotaPlural(ref),
    namespace: ref.kind === 'HierarchicalResourceQuota' ? (ref.namespace ?? '') : '',
    name: ref.name,
    verb,
  };
}

function decideRemove(command: RemoveSharedQuota, facts: SharedQuotaFacts): SharedQuotaDecision {
  const { ref } = command;
  if (!facts.head?.definition) return { events: [], answer: notFound(sharedQuotaPlural(ref), ref.name), resync: [] };
  const managed = clusterManagedRefusal(command, facts.head.definition.metadata, managedTarget(ref, 'deleted'));
  if (managed) return { events: [], answer: managed, resync: [] };
  const resync = [...facts.head.members].sort().map((namespace) => ({ namespace, covered: false }));
  return { events: [{ type: 'SharedQuotaRemoved', data: { ref } }], answer: { kind: 'Removed' }, resync };
}

/** A shared quota as a namespace it covers carries it. */
export function appliedSharedQuota(definition: SharedQuotaDefinition): AppliedSharedQuota {
  return { key: sharedQuotaKey(definition.ref), ref: definition.ref, spec: definition.spec };
}

/** The shared quotas among `registry` that select a namespace with this Namespace object (none: no labels). */
export function sharedQuotasCovering(
  registry: readonly SharedQuotaDefinition[],
  name: string,
  definition: NamespaceDefinition | undefined,
): SharedQuotaDefinition[] {
  return registry.filter((d) => sharedQuotaSelects(d, selectableOf(name, definition)));
}

/**
 * The refusal of a namespace newly put under a shared quota that covers as many as one may
 * (relabels once grew one past its cap, and its admin could no longer redefine it); undefined when
 * none does. `current`: the keys covering it now; `members`: how many namespaces a quota covers.
 */
export function crowdedRefusal(
  name: string,
  covering: readonly SharedQuotaDefinition[],
  current: ReadonlySet<string>,
  members: (key: string) => number,
  namespacesMax: number,
): Refusal | undefined {
  for (const definition of covering) {
    const key = sharedQuotaKey(definition.ref);
    if (current.has(key) || members(key) < namespacesMax) continue;
    return refusal(
      'Forbidden',
      `namespaces "${name}" is forbidden: its labels would put it under ${sharedQuotaTitle(definition.ref)}, which covers ${members(key)} namespaces already, as many as one shared quota may (SHARED_QUOTA_NAMESPACES_MAX=${namespacesMax})`,
      'namespaces',
      name,
    );
  }
  return undefined;
}

/** `clusterresourcequotas`, `hierarchicalresourcequotas`: how errors name the kind. */
export function sharedQuotaPlural(ref: SharedQuotaRef): string {
  return ref.kind === 'ClusterResourceQuota' ? 'clusterresourcequotas' : 'hierarchicalresourcequotas';
}

function staleRefusal(
  ref: SharedQuotaRef,
  existing: SharedQuotaDefinition | undefined,
  version: number,
  expected: number | undefined,
): Refusal | undefined {
  if (expected === undefined) return undefined;
  const resource = sharedQuotaPlural(ref);
  if (!existing)
    return refusal(
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${ref.name}": the object does not exist; remove metadata.resourceVersion to create it`,
      resource,
      ref.name,
    );
  if (version === expected) return undefined;
  return refusal(
    'Conflict',
    `Operation cannot be fulfilled on ${resource} "${ref.name}": the object has been modified; please apply your changes to the latest version and try again`,
    resource,
    ref.name,
  );
}

function withoutServerFields(metadata: SharedQuotaDefinition['metadata']): SharedQuotaDefinition['metadata'] {
  const { uid: _uid, creationTimestamp: _created, ...rest } = metadata ?? {};
  return rest;
}

/** The definition as JSON holds it: members left undefined are absent (as jsonb stores them). */
function plain(definition: SharedQuotaDefinition): unknown {
  return JSON.parse(JSON.stringify(definition)) as unknown;
}
