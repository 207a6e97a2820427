import type { LedgerEvent } from '../events/events.js';
import { deepEqualJson } from '../limit-range/json-patch.js';
import { isNewerVersion, sameSharedSpec, type NamespaceDefinition } from '../shared/shared-quota.js';
import { assert } from '../assert.js';
import { notFound, refusal } from './answers.js';
import type { Decided, PutAnswer, PutNamespace, RemoveAnswer, RemoveNamespace, SyncAnswer, SyncSharedQuotas } from './commands.js';
import type { NamespaceFacts } from './facts.js';

/**
 * The namespace's own object and the shared quotas covering it, as commands on its
 * stream: a Namespace PUT defines (201), changes (200) or leaves it (no event); a stale
 * `resourceVersion` is a conflict. Which shared quotas cover the namespace is decided by the
 * caller from the labels and every shared quota's selection (the ledger's cluster writer, in
 * the same transaction); the namespace then applies or withdraws each, so that its
 * contribution to every one is in its own fold.
 */

const iso = (ms: number): string => new Date(ms).toISOString();

export function decidePutNamespace(command: PutNamespace, facts: NamespaceFacts): Decided<PutAnswer> {
  const name = facts.namespace;
  const existing = facts.state.object;
  const expected = command.expectedVersion;
  if (expected !== undefined && existing === undefined) {
    return {
      events: [],
      answer: refusal(
        'Conflict',
        `Operation cannot be fulfilled on namespaces "${name}": the object does not exist; remove metadata.resourceVersion to create it`,
        'namespaces',
        name,
      ),
    };
  }
  if (expected !== undefined && existing?.version !== expected) {
    return {
      events: [],
      answer: refusal(
        'Conflict',
        `Operation cannot be fulfilled on namespaces "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        'namespaces',
        name,
      ),
    };
  }
  // A listing older than the stored Namespace the record was last taken from changes nothing.
  const observed = command.definition.observedVersion;
  const recorded = existing?.definition.observedVersion;
  if (observed !== undefined && recorded !== undefined && !isNewerVersion(observed, recorded))
    return { events: [], answer: { kind: 'Unchanged' } };
  const { uid: _uid, creationTimestamp: _created, ...given } = command.definition.metadata ?? {};
  const stored: NamespaceDefinition = {
    name,
    metadata: {
      ...given,
      uid: existing?.definition.metadata?.uid ?? command.uid,
      creationTimestamp: existing?.definition.metadata?.creationTimestamp ?? iso(facts.now),
    },
    ...(command.definition.spec?.finalizers ? { spec: { finalizers: command.definition.spec.finalizers } } : {}),
    ...(observed === undefined ? {} : { observedVersion: observed }),
  };
  // A new resourceVersion alone (the object changed in nothing the ledger keeps) is no change.
  if (existing && deepEqualJson(withoutObserved(existing.definition), withoutObserved(stored)))
    return { events: [], answer: { kind: 'Unchanged' } };
  return existing
    ? { events: [{ type: 'NamespaceChanged', data: stored }], answer: { kind: 'Changed' } }
    : { events: [{ type: 'NamespaceDefined', data: stored }], answer: { kind: 'Defined' } };
}

function withoutObserved(definition: NamespaceDefinition): unknown {
  const { observedVersion: _observed, ...rest } = definition;
  return rest;
}

export function decideRemoveNamespace(command: RemoveNamespace, facts: NamespaceFacts): Decided<RemoveAnswer> {
  if (!facts.state.object) return { events: [], answer: notFound('namespaces', facts.namespace) };
  const observed = facts.state.object.definition.observedVersion;
  if (command.listedVersion !== undefined && observed !== undefined && !isNewerVersion(command.listedVersion, observed)) {
    const message = `namespaces "${facts.namespace}" was recorded from the cluster at resourceVersion ${observed}, newer than the listing (${command.listedVersion}) that misses it; kept`;
    return { events: [], answer: refusal('Conflict', message, 'namespaces', facts.namespace) };
  }
  return { events: [{ type: 'NamespaceRemoved', data: { name: facts.namespace } }], answer: { kind: 'Removed' } };
}

export function decideSyncSharedQuotas(command: SyncSharedQuotas, facts: NamespaceFacts): Decided<SyncAnswer> {
  const events: LedgerEvent[] = [];
  const wanted = new Map(command.covering.map((q) => [q.key, q]));
  const withdrawn = [...facts.state.shared.keys()].filter((key) => !wanted.has(key)).sort();
  for (const key of withdrawn) events.push({ type: 'SharedQuotaWithdrawn', data: { key } });
  const applied: string[] = [];
  for (const quota of [...wanted.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
    const current = facts.state.shared.get(quota.key);
    if (current && sameSharedSpec(current.definition.spec, quota.spec)) continue;
    applied.push(quota.key);
    events.push({ type: 'SharedQuotaApplied', data: { key: quota.key, ref: quota.ref, spec: quota.spec } });
  }
  if (applied.length > 0)
    assert(facts.liveLoaded === 'all', 'a shared quota applied recounts usage: every live reservation was loaded before deciding');
  return { events, answer: { kind: 'Synced', applied, withdrawn } };
}
