import { assertNever } from '../assert.js';
import { admittedUid, rememberedKey } from './admission-answer.js';
import type { NamespaceCommand } from './commands.js';
import { planPutQuota } from './definitions.js';
import { liveLoadedFor, type NamespaceFacts } from './facts.js';
import { unclaimedUids } from './reservations.js';

/**
 * What a command needs read, by key, before it can be decided, given what has been read. The
 * command side asks again after each read until the answer is `undefined`: some needs follow
 * from earlier reads (a commit needs the live reservations of its reservation's object; a
 * reconcile, the releases of the objects no live reservation claims).
 */
export interface Needs {
  /** Earlier answers, by request key. */
  readonly requestKeys: readonly string[];
  /** Reservation records by id; each brings its object's live reservations along. */
  readonly reservationIds: readonly string[];
  /** Every live reservation of these objects. */
  readonly uids: readonly string[];
  /** Every live reservation of the namespace. */
  readonly allLive: boolean;
  /** Of these uids, which had a reservation released at or after `since`. */
  readonly releasedSince?: { readonly since: number; readonly uids: readonly string[] };
}

const NOTHING: Needs = { requestKeys: [], reservationIds: [], uids: [], allLive: false };

export function needsOf(command: NamespaceCommand, facts: NamespaceFacts): Needs | undefined {
  const needs = needsAny(command, facts);
  const empty =
    needs.requestKeys.length === 0 &&
    needs.reservationIds.length === 0 &&
    needs.uids.length === 0 &&
    !needs.allLive &&
    !needs.releasedSince;
  return empty ? undefined : needs;
}

function needsAny(command: NamespaceCommand, facts: NamespaceFacts): Needs {
  switch (command.type) {
    case 'AdmitObject':
    case 'AdmitResources': {
      const key = rememberedKey(command);
      const uid = admittedUid(command);
      return {
        ...NOTHING,
        requestKeys: key !== undefined && !facts.answers.has(key) ? [key] : [],
        uids: uid !== undefined && !liveLoadedFor(facts, uid) ? [uid] : [],
      };
    }
    case 'CommitReservation':
    case 'ReleaseReservation': {
      const id = command.reservationId;
      if (!facts.reservations.has(id)) return { ...NOTHING, reservationIds: [id] };
      const uid = facts.reservations.get(id)?.object.uid;
      return { ...NOTHING, uids: uid !== undefined && !liveLoadedFor(facts, uid) ? [uid] : [] };
    }
    case 'Reconcile': {
      if (!facts.known) return NOTHING;
      if (facts.liveLoaded !== 'all') return { ...NOTHING, allLive: true };
      if (facts.releasedSince?.since === command.listedAt) return NOTHING;
      return { ...NOTHING, releasedSince: { since: command.listedAt, uids: unclaimedUids(command, facts) } };
    }
    case 'PutQuota':
      // A quota that is defined or changed recounts usage over every live reservation.
      return { ...NOTHING, allLive: facts.liveLoaded !== 'all' && 'event' in planPutQuota(command, facts) };
    case 'SyncSharedQuotas':
      // A shared quota applied recounts the namespace's part over every live reservation.
      return { ...NOTHING, allLive: facts.liveLoaded !== 'all' && command.covering.length > 0 };
    case 'PutLimitRange':
    case 'RemoveQuota':
    case 'RemoveLimitRange':
    case 'PutNamespace':
    case 'RemoveNamespace':
    case 'CancelQueued':
    case 'SweepQueue':
      return NOTHING;
    default:
      return assertNever(command, 'namespace command');
  }
}
