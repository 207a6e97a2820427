import type { KeyedRead } from './read-statement.js';
import type { NamespaceUnitOfWork } from './unit-of-work.js';

/**
 * The group committer's queues (group-commit.ts): the commands waiting per namespace, and how
 * the next group is formed from them within its bounds.
 */

export interface NamespaceJob<R> {
  /** What the job will look up by key, so the group reads it with everything else in one round trip. */
  readonly prefetch?: Partial<KeyedRead>;
  /** Roughly how many bytes the job writes (what bounds a group's statement). */
  readonly bytes?: number;
  /**
   * Runs inside the transaction; runs again if the transaction is retried. What it returns is
   * the command's result, handed to its caller once the transaction has committed (plain data:
   * the unit of work fills in positions and decision ids when the batch is written).
   */
  run(work: NamespaceUnitOfWork): Promise<R>;
}

/** What bounds a group. */
export interface GroupLimits {
  /** Most commands of one namespace in one group. */
  readonly batchSizeMax: number;
  /** Most commands in one group, all namespaces together. */
  readonly groupCommandsMax: number;
  /** Most estimated bytes one group writes (a single command larger than this still goes, alone). */
  readonly groupBytesMax: number;
}

/** A job's bytes when it does not say (an admission's reservation, event and decision rows). */
const DEFAULT_JOB_BYTES = 2048;

export interface Queued {
  readonly job: NamespaceJob<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Transactions that conflicted with it (SQLSTATE 40001, a unique key, a lost connection). */
  attempts: number;
  /** When a group first found its namespace's head held by another writer (performance.now()). */
  heldSince?: number;
  /** How many groups found it so. */
  held: number;
  /** It broke a group's write statement once: from now on it is decided in a group of its own. */
  alone: boolean;
}

export interface NamespaceQueue {
  readonly pending: Queued[];
  /** A group holding this namespace is in flight. */
  busy: boolean;
  /**
   * Not to be taken again before this time: backing off after a conflict. On performance.now(),
   * a monotonic clock (a wall clock set back would hold the queue that much longer).
   */
  notBefore: number;
}

/** A group being formed. */
interface Forming {
  readonly parts: Part[];
  commands: number;
  bytes: number;
  /** Most commands it may take: smaller when it holds commands that conflicted before. */
  limit: number;
  closed: boolean;
}

export interface Part {
  readonly namespace: string;
  readonly queue: NamespaceQueue;
  readonly batch: Queued[];
}

/**
 * The next group: each ready namespace's oldest commands, least recently served namespace
 * first, within the bounds. Namespaces whose commands conflicted before go first, and in
 * smaller groups the more often they did (a quarter the size per conflict): a group of many
 * namespaces reads more index pages that concurrent writers insert into (SERIALIZABLE's
 * predicate locks are per page), and one of a few namespaces rarely meets another, so a
 * command that keeps conflicting ends up decided alone instead of answered 503.
 */
export function formGroup(queues: Map<string, NamespaceQueue>, now: number, options: GroupLimits): Part[] {
  const group: Forming = { parts: [], commands: 0, bytes: 0, limit: options.groupCommandsMax, closed: false };
  for (const retried of [true, false]) {
    for (const [namespace, queue] of queues) {
      if (group.closed) break;
      const first = queue.pending[0];
      if (queue.busy || !first || queue.notBefore > now || first.attempts > 0 !== retried) continue;
      add(group, namespace, queue, first, options);
    }
  }
  // Served namespaces go to the back of the line.
  for (const part of group.parts) {
    queues.delete(part.namespace);
    queues.set(part.namespace, part.queue);
  }
  return group.parts;
}

/** Adds a namespace's oldest commands to the group, as many as fit. */
function add(group: Forming, namespace: string, queue: NamespaceQueue, first: Queued, options: GroupLimits): void {
  const { batchSizeMax, groupCommandsMax, groupBytesMax } = options;
  if (first.alone) {
    if (group.parts.length > 0) return;
    group.parts.push(take(namespace, queue, 1));
    group.closed = true;
    return;
  }
  const limit = Math.min(group.limit, first.attempts > 0 ? Math.max(1, groupCommandsMax >> (2 * first.attempts)) : groupCommandsMax);
  let { commands, bytes } = group;
  let n = 0;
  for (const queued of queue.pending) {
    const size = queued.job.bytes ?? DEFAULT_JOB_BYTES;
    if (queued.alone || n >= batchSizeMax || commands >= limit || (commands > 0 && bytes + size > groupBytesMax)) break;
    n++;
    commands++;
    bytes += size;
  }
  if (n === 0) return;
  group.parts.push(take(namespace, queue, n));
  Object.assign(group, { commands, bytes, limit, closed: commands >= limit || bytes >= groupBytesMax });
}

function take(namespace: string, queue: NamespaceQueue, n: number): Part {
  queue.busy = true;
  return { namespace, queue, batch: queue.pending.splice(0, n) };
}

/** What a batch's commands look up by key, read with everything else in one round trip. */
export function prefetchOf(batch: readonly Queued[]): KeyedRead {
  const requestKeys = new Set<string>();
  const uids = new Set<string>();
  const reservationIds = new Set<string>();
  for (const { job } of batch) {
    for (const key of job.prefetch?.requestKeys ?? []) requestKeys.add(key);
    for (const uid of job.prefetch?.uids ?? []) uids.add(uid);
    for (const id of job.prefetch?.reservationIds ?? []) reservationIds.add(id);
  }
  return { requestKeys: [...requestKeys], uids: [...uids], reservationIds: [...reservationIds] };
}
