import { assertNever } from '../assert.js';
import { decideAdmit } from './admit.js';
import type { AnswerOf, Decided, NamespaceCommand } from './commands.js';
import { decidePut, decideRemoveLimitRange, decideRemoveQuota, planPutLimitRange, planPutQuota } from './definitions.js';
import type { NamespaceFacts } from './facts.js';
import { decidePutNamespace, decideRemoveNamespace, decideSyncSharedQuotas } from './namespace-object.js';
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
  return decideAny(command, facts) as Decided<AnswerOf[C['type']]>;
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
      return decidePut(planPutQuota(command, facts), facts);
    case 'PutLimitRange':
      return decidePut(planPutLimitRange(command, facts), facts);
    case 'RemoveQuota':
      return decideRemoveQuota(command, facts);
    case 'RemoveLimitRange':
      return decideRemoveLimitRange(command, facts);
    case 'PutNamespace':
      return decidePutNamespace(command, facts);
    case 'RemoveNamespace':
      return decideRemoveNamespace(command, facts);
    case 'SyncSharedQuotas':
      return decideSyncSharedQuotas(command, facts);
    default:
      return assertNever(command, 'namespace command');
  }
}
