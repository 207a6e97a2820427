import { assert } from '../assert.js';
import type { LedgerEvent, RecordedEvent } from '../events/events.js';
import { evolve, type NamespaceState } from '../events/fold.js';
import { fairShareOrder, fairShareWeight } from '../queue/policy.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { NamespaceFacts } from './facts.js';
import { drainQueue, nextSharedAdmission } from './reservation-queue.js';

/**
 * A shared quota's fair drain, decided: of the namespaces waiting under shared quota `key` (their
 * facts as the drain starts, read in one transaction), while some namespace's next waiter fits,
 * admit the one of the highest priority, among equals that of the namespace with the lowest
 * weighted dominant share of the quota (fairShareOrder; weights from
 * `quota-ledger.io/fair-share-weight`), then ask again. Each choice
 * is made on the states the admissions before it leave, the shared quotas' usage elsewhere
 * included, so the quota is never charged over hard. When none of the quota's waiters fits, each
 * namespace drains its own queue (a waiter that left may have unblocked it), and the fair drain
 * goes on while that admitted anything. Pure: the ledger appends `steps` in order, and only that.
 */
export interface FairDrainDecision {
  /** What to append, in order: each namespace's events, one admission (or one own drain) at a time. */
  readonly steps: readonly { readonly namespace: string; readonly events: readonly LedgerEvent[] }[];
  /** How many waiters the fair choice admitted, per namespace. */
  readonly admitted: ReadonlyMap<string, number>;
}

/** Most admissions one fair drain makes (the rest wait for the next one, a moment later). */
export const FAIR_DRAIN_ADMISSIONS_MAX = 1000;

export function decideFairDrain(namespaces: readonly NamespaceFacts[], key: string, max = FAIR_DRAIN_ADMISSIONS_MAX): FairDrainDecision {
  const drain = new Drain(namespaces);
  const admitted = new Map<string, number>();
  for (let n = 0; n < max; n++) {
    const chosen = fairest(drain.facts(), key);
    if (chosen) {
      drain.append(chosen.namespace, chosen.events);
      admitted.set(chosen.namespace, (admitted.get(chosen.namespace) ?? 0) + 1);
      continue;
    }
    // None of the quota's waiters fits: a waiter that left may have unblocked its namespace's
    // own queue (and what that admits, the shared one's), so each namespace drains its own too.
    let more = false;
    for (const { namespace } of namespaces) {
      // Read again for each: the own drains before it move the shared quotas' usage elsewhere.
      const facts = drain.factsOf(namespace);
      const events = drainQueue(facts);
      if (events.length === 0) continue;
      drain.append(facts.namespace, events);
      more ||= events.some((event) => event.type === 'AdmittedFromQueue');
    }
    if (!more) break;
  }
  return { steps: drain.steps, admitted };
}

/** The next admission: of the namespaces whose next waiter fits, the one whose waiter has the highest priority, then the lowest weighted dominant share. */
function fairest(namespaces: readonly NamespaceFacts[], key: string): { namespace: string; events: LedgerEvent[] } | undefined {
  const next = new Map<string, LedgerEvent[]>();
  for (const facts of namespaces) {
    const events = nextSharedAdmission(facts, key);
    if (events) next.set(facts.namespace, events);
  }
  if (next.size === 0) return undefined;
  const hard = namespaces.find((facts) => facts.state.shared.has(key))?.state.shared.get(key)?.hard ?? Resources.EMPTY;
  const candidates = namespaces
    .filter((facts) => next.has(facts.namespace))
    .map((facts) => ({
      namespace: facts.namespace,
      weight: fairShareWeight(facts.state.object?.definition.metadata),
      used: facts.state.sharedUsed.get(key) ?? Resources.EMPTY,
      priority: admittedPriority(facts, next.get(facts.namespace) ?? []),
    }));
  const first = fairShareOrder(candidates, hard)[0];
  const events = first && next.get(first.namespace);
  return first && events ? { namespace: first.namespace, events } : undefined;
}

/** The priority of the waiter an admission's events admit (its AdmittedFromQueue's). */
function admittedPriority(facts: NamespaceFacts, events: readonly LedgerEvent[]): number {
  const admitted = events.find((event) => event.type === 'AdmittedFromQueue');
  return admitted?.type === 'AdmittedFromQueue' ? (facts.state.queue.get(admitted.data.reservationId)?.priority ?? 0) : 0;
}

/**
 * The drain's namespaces as its events leave them: each one's state folded on, and each shared
 * quota's total over every namespace it covers moved by what these contribute (as the ledger's
 * shared heads move), so that each namespace's usage elsewhere is the others' as they are now.
 */
class Drain {
  readonly steps: { namespace: string; events: readonly LedgerEvent[] }[] = [];
  private readonly states = new Map<string, NamespaceState>();
  /** Per shared quota covering a namespace here: its usage in every namespace it covers. */
  private readonly totals = new Map<string, ResourceList>();

  constructor(private readonly start: readonly NamespaceFacts[]) {
    for (const facts of start) {
      this.states.set(facts.namespace, facts.state);
      for (const [key, elsewhere] of facts.sharedElsewhere ?? []) {
        if (!this.totals.has(key)) this.totals.set(key, Resources.add(elsewhere, facts.state.sharedUsed.get(key) ?? Resources.EMPTY));
      }
    }
  }

  /** Every namespace's facts now. */
  facts(): NamespaceFacts[] {
    return this.start.map((facts) => this.now(facts));
  }

  /** One namespace's facts now. */
  factsOf(namespace: string): NamespaceFacts {
    const start = this.start.find((facts) => facts.namespace === namespace);
    assert(start, `namespace ${namespace} takes part in the drain`);
    return this.now(start);
  }

  /** A namespace's facts as the drain's events leave them: its state, and the shared quotas' usage in the other namespaces. */
  private now(facts: NamespaceFacts): NamespaceFacts {
    const state = this.states.get(facts.namespace) ?? facts.state;
    if (!facts.sharedElsewhere) return { ...facts, state };
    const elsewhere = new Map([...facts.sharedElsewhere.keys()].map((key) => [key, this.elsewhere(key, state)] as const));
    return { ...facts, state, sharedElsewhere: elsewhere };
  }

  append(namespace: string, events: readonly LedgerEvent[]): void {
    const start = this.start.find((facts) => facts.namespace === namespace);
    const before = this.states.get(namespace);
    if (!start || !before || events.length === 0) return;
    let state = before;
    for (const event of events) state = evolve(state, { ...event, version: state.version + 1, at: start.now } as RecordedEvent);
    this.states.set(namespace, state);
    for (const [key, total] of this.totals) {
      const was = before.sharedUsed.get(key);
      const now = state.sharedUsed.get(key);
      if (was === now) continue;
      this.totals.set(key, Resources.add(was ? Resources.subtract(total, was) : total, now ?? Resources.EMPTY));
    }
    this.steps.push({ namespace, events });
  }

  private elsewhere(key: string, state: NamespaceState): ResourceList {
    const total = this.totals.get(key) ?? Resources.EMPTY;
    const here = state.sharedUsed.get(key);
    return here ? Resources.subtract(total, here) : total;
  }
}

/**
 * The shared quotas whose fair drains should run after a command: those it freed room in
 * (withdrawn from the namespace, or charged less by it: a release, a termination, a commit that
 * charged less), and every one covering the namespace when it has waiters and the command may
 * have made room for them or unblocked them (anything but a new reservation or waiter: a raised
 * local hard, a waiter that left its queue).
 */
export function freedSharedKeys(before: NamespaceState, after: NamespaceState, events: readonly LedgerEvent[]): string[] {
  if ((before.queue.size > 0 || after.queue.size > 0) && events.some((event) => event.type !== 'Reserved' && event.type !== 'Queued')) {
    return [...new Set([...before.shared.keys(), ...after.shared.keys()])];
  }
  const freed: string[] = [];
  for (const [key, used] of before.sharedUsed) {
    const now = after.sharedUsed.get(key);
    if (
      !after.shared.has(key) ||
      !now ||
      Object.entries(used).some(([resource, amount]) => (Resources.get(now, resource)?.cmp(amount) ?? -1) < 0)
    )
      freed.push(key);
  }
  return freed;
}
