import {
  assert,
  groupResourceString,
  initialState,
  type AnswerOf,
  type NamespaceCommand,
  type NamespaceFacts,
  type Refusal,
} from '@quota/domain';
import { LedgerError } from '../ledger-error.js';
import type { AdmitCommand, AdmitOutcome, CommitOutcome, PutOptions, WriteOptions } from '../ledger.types.js';
import { reservationViewOf } from '../read/views.js';
import type { EventRef } from './event-position.js';
import type { DecisionInput } from './flush-statement.js';
import type { EventMeta, Step } from './unit-of-work.js';

/**
 * What LedgerCommands makes of a command and its step: the caller's outcome of an admission, a
 * commit or a release, the refusal it throws, the metadata and decisions-log row it records, and
 * what a command is estimated to write (the group commit's byte budget).
 */

/** An admission's outcome from its step: the first answer for a repeat, nothing logged where unmanaged. */
export function admitOutcome(step: Step<AnswerOf['AdmitObject']>): AdmitOutcome {
  const { answer, known: managed } = step;
  switch (answer.kind) {
    case 'Refused':
      throw refusal(answer);
    case 'Unmanaged':
      return { result: answer.result, repeated: false, decisionId: '', managed: false };
    case 'KeyReused':
      return { result: answer.result, repeated: false, decisionId: '', managed };
    case 'Repeated':
      return { result: answer.result, repeated: true, decisionId: step.decision?.id ?? '', managed, ...uncharged(answer) };
    case 'Decided':
      if (!step.decision) return { result: answer.result, repeated: false, decisionId: '', managed: true, ...uncharged(answer) };
      return {
        result: answer.result,
        repeated: false,
        decisionId: step.decision.id ?? '',
        managed: true,
        position: step.position,
        ...uncharged(answer),
      };
  }
}

const uncharged = (answer: { readonly uncharged?: readonly string[] }): Pick<AdmitOutcome, 'uncharged'> =>
  answer.uncharged ? { uncharged: answer.uncharged } : {};

/** Roughly what a command writes: a reconcile one reservation and event per object listed, a definition its spec, anything else a few rows. */
export function bytesOf(command: NamespaceCommand): number {
  switch (command.type) {
    case 'Reconcile':
      return 2048 + 1024 * command.objects.length;
    case 'PutQuota':
    case 'PutLimitRange':
      return 4096 + 8 * JSON.stringify(command.definition).length;
    default:
      return 2048;
  }
}

/** Facts of which nothing has been read: what a command asks for first is read with the head. */
export function unread(namespace: string): NamespaceFacts {
  return { namespace, known: true, now: 0, state: initialState(), liveLoaded: new Set(), reservations: new Map(), answers: new Map() };
}

export function refusal(answer: Refusal): LedgerError {
  return new LedgerError(answer.code, answer.message, answer.details);
}

/** A commit's or release's outcome, and the reservation's latest event: what a repeat (which appended nothing) stands on. */
export function settled(
  namespace: string,
  step: Step<unknown>,
  changed: boolean,
): { outcome: CommitOutcome; latest: EventRef | undefined } {
  const record = step.reservation;
  assert(record, `the reservation was read before it was decided on`);
  const view = reservationViewOf(namespace, record);
  const version = record.eventVersions.at(-1);
  return {
    outcome: { view, changed, position: step.position },
    latest: version === undefined ? undefined : { stream: namespace, version },
  };
}

export function expected(options: PutOptions): { expectedVersion?: number; unmanagedOnly?: true } {
  return { ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }), ...unmanaged(options) };
}

/** The REST admin API's guard against writing a definition a cluster object manages (domain: cluster-managed.ts). */
export function unmanaged(options: WriteOptions): { unmanagedOnly?: true } {
  return options.unmanagedOnly ? { unmanagedOnly: true } : {};
}

export function writeMeta(options: WriteOptions): EventMeta {
  return {
    actor: options.actor,
    ...(options.onBehalfOf === undefined ? {} : { onBehalfOf: options.onBehalfOf }),
    ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
  };
}

/** The admitted object's kind: the object's own, else the one the command names (a resource list), else the old object's. */
export function kindOf(command: AdmitCommand): string | undefined {
  return command.request.object?.kind || command.kind || command.request.oldObject?.kind || undefined;
}

/** The decisions log's row for an answer decided now, but for the answer's result (the unit of work adds it). */
export function decisionOf(command: AdmitCommand, key: string | undefined, digest: string | undefined): Omit<DecisionInput, 'result'> {
  const { request } = command;
  const object = request.object;
  const uid = object?.metadata?.uid ?? request.oldObject?.metadata?.uid;
  const name = request.name || object?.metadata?.name;
  return {
    source: command.source,
    ...(key && digest ? { requestKey: key, requestDigest: digest } : {}),
    operation: request.operation,
    resource: groupResourceString(request.groupResource),
    ...(kindOf(command) ? { kind: kindOf(command) } : {}),
    ...(name ? { name } : {}),
    ...(uid ? { objectUid: uid } : {}),
    requester: command.requester,
    ...(command.onBehalfOf ? { onBehalfOf: command.onBehalfOf } : {}),
    dryRun: command.dryRun,
  };
}
