import { assert } from '../assert.js';
import type { LedgerEvent, LimitRangeDefinition, QuotaDefinition } from '../events/events.js';
import { deepEqualJson } from '../limit-range/json-patch.js';
import { checkQuota } from '../quota/resource-quota-plugin.js';
import { forbiddenMessage } from '../quota/denial.js';
import { RESOURCE_QUOTAS } from '../quota/quota-objects.js';
import * as Resources from '../resources/resource-list.js';
import { notFound, refusal, type Refusal } from './answers.js';
import { clusterManagedRefusal } from './cluster-managed.js';
import type {
  Decided,
  DefinitionLimit,
  PutAnswer,
  PutLimitRange,
  PutQuota,
  RemoveAnswer,
  RemoveLimitRange,
  RemoveQuota,
} from './commands.js';
import type { NamespaceFacts } from './facts.js';

/**
 * ResourceQuota and LimitRange definitions: a PUT defines (201) or changes (200) one, or
 * changes nothing when the stored object would be the same (no event); a stale
 * `resourceVersion` is a conflict; a new one past the namespace's limit is forbidden, and so is
 * a new quota that the namespace's quotas on `count/resourcequotas` (or `resourcequotas`) have no
 * room for.
 */

/** A PUT's outcome before anything is appended: the event to append, or why there is none. */
export type PutPlan = { readonly event: LedgerEvent } | { readonly unchanged: true } | { readonly refused: Refusal };

const iso = (ms: number): string => new Date(ms).toISOString();

export function planPutQuota(command: PutQuota, facts: NamespaceFacts): PutPlan {
  const { name } = command.definition;
  const existing = facts.state.quotas.get(name)?.definition;
  const refused =
    clusterManagedRefusal(command, existing?.metadata, { resource: 'resourcequotas', namespace: facts.namespace, name, verb: 'changed' }) ??
    checkPut(facts, 'resourcequotas', 'ResourceQuotas', name, existing, facts.state.quotas, command) ??
    (existing ? undefined : quotaCountRefusal(command.definition, facts));
  if (refused) return { refused };
  const spec = command.definition.spec;
  const stored: QuotaDefinition = {
    name,
    spec: spec.hard ? { ...spec, hard: Resources.canonicalResourceList(Resources.parseResourceList(spec.hard, 'spec.hard')) } : spec,
    metadata: storedMetadata(command.definition.metadata, existing?.metadata, command.uid, facts.now),
  };
  if (existing && deepEqualJson(existing as unknown, stored as unknown)) return { unchanged: true };
  return { event: existing ? { type: 'QuotaChanged', data: stored } : { type: 'QuotaDefined', data: stored } };
}

export function planPutLimitRange(command: PutLimitRange, facts: NamespaceFacts): PutPlan {
  const { name } = command.definition;
  const existing = facts.state.limitRanges.get(name)?.definition;
  const refused =
    clusterManagedRefusal(command, existing?.metadata, { resource: 'limitranges', namespace: facts.namespace, name, verb: 'changed' }) ??
    checkPut(facts, 'limitranges', 'LimitRanges', name, existing, facts.state.limitRanges, command);
  if (refused) return { refused };
  const stored: LimitRangeDefinition = {
    name,
    spec: command.definition.spec,
    metadata: storedMetadata(command.definition.metadata, existing?.metadata, command.uid, facts.now),
  };
  if (existing && deepEqualJson(existing as unknown, stored as unknown)) return { unchanged: true };
  return { event: existing ? { type: 'LimitRangeChanged', data: stored } : { type: 'LimitRangeDefined', data: stored } };
}

export function decidePut(plan: PutPlan, facts: NamespaceFacts): Decided<PutAnswer> {
  if ('refused' in plan) return { events: [], answer: plan.refused };
  if ('unchanged' in plan) return { events: [], answer: { kind: 'Unchanged' } };
  if (plan.event.type === 'QuotaDefined' || plan.event.type === 'QuotaChanged') {
    assert(facts.liveLoaded === 'all', 'a quota definition recounts usage: every live reservation was loaded before deciding');
  }
  const defined = plan.event.type === 'QuotaDefined' || plan.event.type === 'LimitRangeDefined';
  return { events: [plan.event], answer: { kind: defined ? 'Defined' : 'Changed' } };
}

export function decideRemoveQuota(command: RemoveQuota, facts: NamespaceFacts): Decided<RemoveAnswer> {
  const existing = facts.state.quotas.get(command.name)?.definition;
  if (!existing) return { events: [], answer: notFound('resourcequotas', command.name) };
  const managed = clusterManagedRefusal(command, existing.metadata, {
    resource: 'resourcequotas',
    namespace: facts.namespace,
    name: command.name,
    verb: 'deleted',
  });
  if (managed) return { events: [], answer: managed };
  return { events: [{ type: 'QuotaRemoved', data: { name: command.name } }], answer: { kind: 'Removed' } };
}

export function decideRemoveLimitRange(command: RemoveLimitRange, facts: NamespaceFacts): Decided<RemoveAnswer> {
  const existing = facts.state.limitRanges.get(command.name)?.definition;
  if (!existing) return { events: [], answer: notFound('limitranges', command.name) };
  const managed = clusterManagedRefusal(command, existing.metadata, {
    resource: 'limitranges',
    namespace: facts.namespace,
    name: command.name,
    verb: 'deleted',
  });
  if (managed) return { events: [], answer: managed };
  return { events: [{ type: 'LimitRangeRemoved', data: { name: command.name } }], answer: { kind: 'Removed' } };
}

/** The optimistic-concurrency check of `metadata.resourceVersion`, then the namespace's room for a new one. */
function checkPut(
  facts: NamespaceFacts,
  resource: string,
  kinds: string,
  name: string,
  existing: unknown,
  all: ReadonlyMap<string, { readonly version: number }>,
  command: { readonly expectedVersion?: number; readonly limit: DefinitionLimit },
): Refusal | undefined {
  const expected = command.expectedVersion;
  const current = all.get(name)?.version;
  if (expected !== undefined && current === undefined) {
    return refusal(
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${name}": the object does not exist; remove metadata.resourceVersion to create it`,
      resource,
      name,
    );
  }
  if (expected !== undefined && current !== expected) {
    return refusal(
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      resource,
      name,
    );
  }
  if (existing === undefined && all.size >= command.limit.max) {
    const message = `${resource} "${name}" is forbidden: namespace "${facts.namespace}" already has ${all.size} ${kinds}, the most it may have (${command.limit.setting}=${command.limit.max})`;
    return refusal('Forbidden', message, resource, name);
  }
  return undefined;
}

/**
 * Kubernetes' ResourceQuota admission of a ResourceQuota CREATE (the object-count evaluator of
 * `resourcequotas`): the new quota is one more `count/resourcequotas` and `resourcequotas` for
 * every unscoped quota already in the namespace, whose usage is the number of quotas there; the
 * first by name that it would take over its hard limit refuses it with the usual
 * `exceeded quota` message. The new quota's own limit does not apply: Kubernetes checks a
 * request against the quotas stored before it, and this one is not stored yet. A PUT that
 * replaces a quota counts nothing (the evaluator handles CREATE only).
 */
function quotaCountRefusal(definition: QuotaDefinition, facts: NamespaceFacts): Refusal | undefined {
  const { state, namespace } = facts;
  const quotas = [...state.quotas.values()].map((quota) => ({
    name: quota.name,
    spec: quota.definition.spec,
    // The fold counts the namespace's quotas under count/resourcequotas and resourcequotas.
    used: state.used.get(quota.name) ?? Resources.EMPTY,
  }));
  const object = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: definition.name, namespace }, spec: definition.spec };
  const decision = checkQuota({ operation: 'CREATE', groupResource: RESOURCE_QUOTAS, namespace, object, quotas });
  if (decision.allowed) return undefined;
  return refusal('Forbidden', forbiddenMessage(RESOURCE_QUOTAS, definition.name, decision.denial), 'resourcequotas', definition.name);
}

/** Users set labels and annotations; uid and creationTimestamp are the ledger's, kept from the first definition. */
function storedMetadata(
  given: QuotaDefinition['metadata'],
  existing: QuotaDefinition['metadata'],
  uid: string,
  now: number,
): QuotaDefinition['metadata'] {
  const { uid: _uid, creationTimestamp: _created, ...rest } = given ?? {};
  return { ...rest, uid: existing?.uid ?? uid, creationTimestamp: existing?.creationTimestamp ?? iso(now) };
}
