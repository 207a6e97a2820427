import { assertNever } from '../assert.js';
import { decideAdmit } from './admit.js';
import type { AnswerOf, Decided, NamespaceCommand } from './commands.js';
import { decidePut, decideRemoveLimitRange, decideRemoveQuota, planPutLimitRange, planPutQuota } from './definitions.js';
import type { NamespaceFacts } from './facts.js';
import { decidePutNamespace, decideRemoveNamespace, decideSyncSharedQuotas } from './namespace-object.js';
import { decideCancelQueued, withDrain } from './reservation-queue.js';
import { decideCommitReservation, decideReconciliation, decideReleaseReservation } from './reservations.js';

/**
 * The namespace decider: a command and what the ledger holds for the namespace in, the events
 * to append and the answer out. Pure, like `evolve` beside it: the command side reads the facts
 * by key (`needsOf` says which), calls this, and appends exactly the events it returns, in one
 * SERIALIZABLE transaction guarded by the head's version. Every rule of the write path lives
 * here or in the functions it calls; nothing here throws for a refusal (a Refusal is an
 * answer), only for a broken invariant.
 */
export function decide<C extends NamespaceCommand>(command: C, facts: NamespaceFacts): Decided<AnswerOf[C['type']]> {
  // Whatever a command appends may free room: the queue is drained in the same transaction.
  return withDrain(command, facts, decideAny(command, facts)) as Decided<AnswerOf[C['type']]>;
}

function decideAny(command: NamespaceCommand, facts: NamespaceFacts): Decided<AnswerOf[NamespaceCommand['type']]> {
  switch (command.type) {
    case 'AdmitObject':
    case 'AdmitResources':
      return decideAdmit(command, facts);
    case 'CommitReservation':
      return decideCommitReservation(command, facts);
    case 'ReleaseReservation':
      return decideReleaseReservation(command, facts);
    case 'Reconcile':
      return decideReconciliation(command, facts);
    case 'PutQuota':
      return awaitingCount(command, facts, decidePut(planPutQuota(command, facts), facts));
    case 'PutLimitRange':
      return awaitingCount(command, facts, decidePut(planPutLimitRange(command, facts), facts));
    case 'RemoveQuota':
      return decideRemoveQuota(command, facts);
    case 'RemoveLimitRange':
      return decideRemoveLimitRange(command, facts);
    case 'PutNamespace':
      return decidePutNamespace(command, facts);
    case 'RemoveNamespace':
      return decideRemoveNamespace(command, facts);
    case 'SyncSharedQuotas':
      return awaitingCount(command, facts, decideSyncSharedQuotas(command, facts));
    case 'CancelQueued':
      return decideCancelQueued(command, facts);
    case 'SweepQueue':
      return { events: [], answer: { kind: 'Swept' } };
    default:
      return assertNever(command, 'namespace command');
  }
}

/** The events that make a namespace managed: from then on its admissions are charged and recorded. */
const MANAGING: ReadonlySet<string> = new Set(['QuotaDefined', 'LimitRangeDefined', 'SharedQuotaApplied']);

/**
 * A namespace that was not managed (objects admitted there were not recorded) and is made managed
 * now awaits its first count, where the deployment can count (`awaitFirstCount`): its quotas
 * refuse what they would charge until the reconciler's listing has adopted what exists.
 */
function awaitingCount<A>(command: { readonly awaitFirstCount?: boolean }, facts: NamespaceFacts, decided: Decided<A>): Decided<A> {
  if (!command.awaitFirstCount || (facts.known && !facts.state.objectOnly) || facts.state.awaitingCountSince !== undefined) return decided;
  if (!decided.events.some((event) => MANAGING.has(event.type))) return decided;
  return { events: [...decided.events, { type: 'CountAwaited', data: { reason: 'managed' } }], answer: decided.answer };
}
