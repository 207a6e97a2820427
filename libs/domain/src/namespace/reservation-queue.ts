import type { AdmittedFromQueue, LedgerEvent, Queued, RecordedEvent, WaitingForJson } from '../events/events.js';
import { evolve, queueOrder, type NamespaceState, type Waiter } from '../events/fold.js';
import { DEFAULT_QUEUE_POLICY, isBlocking, type QueuePolicy } from '../queue/policy.js';
import { quotaNamed } from '../quota/check.js';
import { admissionObjectName } from '../quota/denial.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { quotaScopeRequirements } from '../scopes/facts.js';
import { admissionViewOf, groupResourceText, type AdmissionDecision } from './admission-decision.js';
import type { AdmissionResult } from './answers.js';
import { refusal } from './answers.js';
import type { AdmissionAnswer, AdmitObject, AdmitResources, CancelAnswer, CancelQueued, Decided, NamespaceCommand } from './commands.js';
import type { NamespaceFacts } from './facts.js';
import { BlockingShares, neverFits, quotaLimitsOf, unfitReason } from './queue-bounds.js';
import { decideResources } from './rest.js';

/**
 * The namespace's queue of reservations waiting for room, decided here: a reserve
 * with a wait that does not fit is queued (`Queued`); every command that appends anything is
 * followed, in the same transaction, by the drain (`withDrain`): waiters whose deadline passed
 * expire (`Expired`), then, in queue order under the BestEffortFIFO bound (queue/policy.ts),
 * each that fits now is admitted (`AdmittedFromQueue` naming the freeing event, then its
 * `Reserved`). The drain checks each waiter exactly as a new reservation is checked
 * (decideResources), on the state the events before it leave, so it never admits over hard.
 */

const iso = (ms: number): string => new Date(ms).toISOString();

const policyOf = (facts: NamespaceFacts): QueuePolicy => facts.queuePolicy ?? DEFAULT_QUEUE_POLICY;

/** Per quota the resource list would be charged to, the resources short of room (none: it fits). */
export function shortfalls(
  state: NamespaceState,
  resources: ResourceList,
  sharedElsewhere?: ReadonlyMap<string, ResourceList>,
): WaitingForJson[] {
  const short: WaitingForJson[] = [];
  const quotas = [...admissionViewOf(state, undefined, sharedElsewhere).quotas].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  for (const quota of quotas) {
    if (quotaScopeRequirements(quota.spec).length > 0) continue;
    const hard = Resources.resourceList(quota.spec.hard ?? {});
    const lacking: WaitingForJson['resources'][number][] = [];
    for (const [resource, requested] of Object.entries(Resources.withoutZeros(Resources.mask(resources, Object.keys(hard))))) {
      const limit = Resources.get(hard, resource);
      const used = Resources.get(quota.used, resource) ?? requested.sub(requested);
      if (limit && used.add(requested).cmp(limit) > 0)
        lacking.push({ resource, requested: requested.toString(), used: used.toString(), hard: limit.toString() });
    }
    if (lacking.length > 0)
      short.push({ quota: quotaNamed(quota).quota, resources: lacking.sort((a, b) => (a.resource < b.resource ? -1 : 1)) });
  }
  return short;
}

/** Whether two resource lists ask for some resource in common (a blocking waiter holds back only what competes for its room). */
function overlaps(a: ResourceList, b: ResourceList): boolean {
  return Object.keys(a).some((name) => Resources.get(a, name)?.sign() === 1 && Resources.get(b, name)?.sign() === 1);
}

/**
 * The first waiter ordered before a new request of this priority that blocks it: blocking
 * (isBlocking), able to fit some day, within its principal's share (BlockingShares), and short of
 * a resource the request asks for too.
 */
function blockerAhead(facts: NamespaceFacts, priority: number, resources: ResourceList): Waiter | undefined {
  const limits = quotaLimitsOf(facts.state, facts.sharedElsewhere);
  const shares = new BlockingShares(limits, policyOf(facts).blockSharePercent);
  for (const w of queueOrder(facts.state.queue)) {
    if (w.priority < priority) break;
    if (!isBlocking(w, facts.now, policyOf(facts)) || neverFits(limits, w.resources) || !shares.take(w)) continue;
    if (overlaps(w.resources, resources)) return w;
  }
  return undefined;
}

/** A request without a wait that fits, held back by a blocking waiter ahead of it (priority 0): 403, it may ask to wait instead. */
function heldBack(what: string, blocker: Waiter, instead: string): Decided<AdmissionAnswer> {
  const message = `${what} is forbidden: queued reservation ${blocker.id} (priority ${blocker.priority}, waiting since ${iso(blocker.queuedAt)}) is first in line for these resources; ${instead}`;
  return { events: [], answer: { kind: 'Decided', result: { allowed: false, code: 403, dryRun: false, stage: 'ResourceQuota', message } } };
}

/**
 * An object's admission (a webhook review, a REST object) that fits but charges a resource a
 * blocking waiter ahead of it is short of: refused 403 naming the waiter, as a REST resource list
 * without a wait is, so that no stream of arrivals keeps a waiter from the room it waits for.
 * Undefined: decided as usual (no waiter, a dry run, nothing charged, or no blocker ahead).
 */
export function decideBehindQueue(
  command: AdmitObject,
  facts: NamespaceFacts,
  decision: AdmissionDecision,
): Decided<AdmissionAnswer> | undefined {
  if (command.dryRun || facts.state.queue.size === 0 || !decision.allowed || !decision.reservation) return undefined;
  const asked = decision.charges.reduce<ResourceList>((all, charge) => Resources.max(all, charge.delta), Resources.EMPTY);
  const blocker = blockerAhead(facts, 0, asked);
  if (!blocker) return undefined;
  const { request } = command;
  const what = `${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}"`;
  return heldBack(what, blocker, 'retry once it is admitted, cancelled or expired');
}

/**
 * A reserve with a wait: admitted as any reserve when it fits and no blocking waiter is ahead of
 * it; else queued (202), unless the namespace's queue is full (429). Undefined: decided as usual
 * (it fits, or it was refused for a reason waiting cannot cure: a request beyond a quota's hard
 * limit is refused as Kubernetes refuses it, never queued).
 */
export function decideWait(
  command: AdmitResources,
  facts: NamespaceFacts,
  decision: AdmissionDecision,
): Decided<AdmissionAnswer> | undefined {
  const wait = command.wait;
  if (command.dryRun || facts.state.queue.size + (wait ? 1 : 0) === 0) return undefined;
  const resources = Resources.resourceList(command.resources);
  const blocker = blockerAhead(facts, wait?.priority ?? 0, resources);
  const what = `${command.groupResource.resource}${command.name ? ` "${command.name}"` : ''}`;
  if (!wait) return decision.allowed && blocker ? heldBack(what, blocker, 'send the request with "wait" to queue behind it') : undefined;
  if (decision.allowed && !blocker) return undefined;
  if (!decision.allowed && decision.denial?.kind !== 'Exceeded') return undefined;
  if (!decision.allowed && neverFits(quotaLimitsOf(facts.state, facts.sharedElsewhere), resources)) return undefined;
  const base = { allowed: false, dryRun: false, stage: 'ResourceQuota' } as const;
  if (facts.state.queue.size >= policyOf(facts).perNamespaceMax) {
    const message = `the queue of namespace ${facts.namespace} is full (${policyOf(facts).perNamespaceMax} waiting, QUEUE_PER_NAMESPACE_MAX); retry later`;
    return { events: [], answer: { kind: 'Decided', result: { ...base, code: 429, message } } };
  }
  const short = shortfalls(facts.state, resources, facts.sharedElsewhere);
  const waitingFor = short.length > 0 || !blocker ? short : [{ quota: `queued reservation ${blocker.id}`, resources: [] }];
  const deadline = facts.now + wait.ms;
  const event: Queued = {
    type: 'Queued',
    data: {
      reservationId: command.reservationId,
      object: {
        group: command.groupResource.group,
        resource: command.groupResource.resource,
        ...(command.kind ? { kind: command.kind } : {}),
        ...(command.name ? { name: command.name } : {}),
      },
      resources: Resources.canonicalResourceList(resources),
      priority: wait.priority,
      deadline: iso(deadline),
      ...(command.ttlMs === undefined ? {} : { ttlMs: command.ttlMs }),
      waitingFor,
      ...(wait.principal === undefined ? {} : { principal: wait.principal }),
    },
  };
  const position = queueOrder(facts.state.queue).filter((w) => w.priority >= wait.priority).length + 1;
  const result: AdmissionResult = {
    ...base,
    code: 202,
    message: `queued at position ${position} until ${iso(deadline)}: ${waitingFor.map((w) => w.quota).join(', ')}`,
    reservationId: command.reservationId,
    queued: { position, expiresAt: iso(deadline), waitingFor },
  };
  return { events: [event], answer: { kind: 'Decided', result } };
}

export function decideCancelQueued(command: CancelQueued, facts: NamespaceFacts): Decided<CancelAnswer> {
  if (!facts.state.queue.has(command.reservationId)) {
    return {
      events: [],
      answer: refusal('NotFound', `reservations "${command.reservationId}" is not queued`, 'reservations', command.reservationId),
    };
  }
  return { events: [{ type: 'Cancelled', data: { reservationId: command.reservationId } }], answer: { kind: 'Cancelled' } };
}

/** The state `events` leave, folded on the command's time (versions follow the state's). */
function after(state: NamespaceState, events: readonly LedgerEvent[], now: number): NamespaceState {
  let next = state;
  for (const event of events) next = evolve(next, { ...event, version: next.version + 1, at: now } as RecordedEvent);
  return next;
}

/**
 * A command's events, followed by the drain of the queue on the state they leave: whenever it
 * appended anything (room may have freed) or it is the sweep. A namespace with no waiter pays nothing.
 */
export function withDrain<A>(command: NamespaceCommand, facts: NamespaceFacts, decided: Decided<A>): Decided<A> {
  if (facts.state.queue.size === 0 || (decided.events.length === 0 && command.type !== 'SweepQueue')) return decided;
  const state = after(facts.state, decided.events, facts.now);
  const last = decided.events.at(-1);
  const freedBy = last ? { version: state.version, type: last.type } : undefined;
  const drained = drainQueue({ ...facts, state }, freedBy);
  return drained.length === 0 ? decided : { events: [...decided.events, ...drained], answer: decided.answer };
}

/**
 * The shared quotas (keys) a waiter's resource list would be charged to: its room is shared with
 * other namespaces, so the shared quota's fair drain admits it, not the namespace's own drain.
 */
export function sharedChargesOf(state: NamespaceState, resources: ResourceList): string[] {
  return [...state.shared.values()]
    .filter((quota) => quota.requirements.length === 0 && quota.hardNames.some((name) => Resources.get(resources, name)?.sign() === 1))
    .map((quota) => quota.key);
}

/** The first waiter's admission by decideResources, or undefined when it does not fit. */
function admission(
  facts: NamespaceFacts,
  state: NamespaceState,
  waiter: Waiter,
  freedBy?: AdmittedFromQueue['data']['freedBy'],
): LedgerEvent[] | undefined {
  const decision = decideResources(
    {
      namespace: facts.namespace,
      groupResource: { group: waiter.object.group, resource: waiter.object.resource },
      ...(waiter.object.name ? { name: waiter.object.name } : {}),
      ...(waiter.object.kind ? { kind: waiter.object.kind } : {}),
      resources: waiter.resources,
      reservationId: waiter.id,
      now: facts.now,
      ...(waiter.ttlMs === undefined ? {} : { expiresAt: facts.now + waiter.ttlMs }),
    },
    admissionViewOf(state, undefined, facts.sharedElsewhere),
  );
  if (!decision.allowed || !decision.reservation) return undefined;
  return [{ type: 'AdmittedFromQueue', data: { reservationId: waiter.id, ...(freedBy ? { freedBy } : {}) } }, decision.reservation];
}

/**
 * A shared quota's fair drain, one namespace's part: the admission of its next waiter charged to
 * shared quota `key` (in queue order, passing those that do not fit until one is blocking), or
 * undefined when none fits. The ledger asks every waiting namespace under the quota, and admits
 * the one `fairShareOrder` puts first, again and again, in one transaction.
 */
export function nextSharedAdmission(facts: NamespaceFacts, key: string): LedgerEvent[] | undefined {
  const limits = quotaLimitsOf(facts.state, facts.sharedElsewhere);
  const shares = new BlockingShares(limits, policyOf(facts).blockSharePercent);
  const blockers: ResourceList[] = [];
  for (const waiter of queueOrder(facts.state.queue)) {
    // Past its deadline or never fitting: the namespace's own drain takes it out of the queue.
    if (waiter.deadline <= facts.now || neverFits(limits, waiter.resources) || blockers.some((b) => overlaps(b, waiter.resources)))
      continue;
    const events = admission(facts, facts.state, waiter);
    // Another drain's waiter (its own namespace's, or another shared quota's) is not admitted
    // here, but one that is blocking and does not fit holds back this drain's too.
    if (events && sharedChargesOf(facts.state, waiter.resources).includes(key)) return events;
    if (!events && isBlocking(waiter, facts.now, policyOf(facts)) && shares.take(waiter)) blockers.push(waiter.resources);
  }
  return undefined;
}

/**
 * The drain: expire what is past its deadline or can never fit (a limit lowered below its request),
 * then admit in queue order what fits, each checked on the state the admissions before it leave; a
 * waiter that does not fit and is blocking (within its principal's share) stops the admissions
 * behind it. Waiters charged to a shared quota are left to its fair drain.
 */
export function drainQueue(facts: NamespaceFacts, freedBy?: AdmittedFromQueue['data']['freedBy']): LedgerEvent[] {
  const events: LedgerEvent[] = [];
  let state = facts.state;
  const push = (more: readonly LedgerEvent[]): void => {
    events.push(...more);
    state = after(state, more, facts.now);
  };
  // Admissions move usage, never limits: the limits are the drain's start's.
  const limits = quotaLimitsOf(state, facts.sharedElsewhere);
  const shares = new BlockingShares(limits, policyOf(facts).blockSharePercent);
  const blockers: ResourceList[] = [];
  for (const waiter of queueOrder(facts.state.queue)) {
    const unfit = neverFits(limits, waiter.resources);
    if (waiter.deadline <= facts.now || unfit) {
      const short = shortfalls(state, waiter.resources, facts.sharedElsewhere).map((w) => w.quota);
      const reason = unfit
        ? unfitReason(unfit)
        : `waited until its deadline ${iso(waiter.deadline)} without room${short.length > 0 ? ` in ${short.join(', ')}` : ''}`;
      push([{ type: 'Expired', data: { reservationId: waiter.id, reason } }]);
      continue;
    }
    if (blockers.some((b) => overlaps(b, waiter.resources))) continue;
    const admitted = admission(facts, state, waiter, freedBy);
    // A shared quota's waiter is its fair drain's to admit; blocking and short of room, it holds this one's back too.
    if (admitted && sharedChargesOf(state, waiter.resources).length === 0) push(admitted);
    else if (!admitted && isBlocking(waiter, facts.now, policyOf(facts)) && shares.take(waiter)) blockers.push(waiter.resources);
  }
  return events;
}
