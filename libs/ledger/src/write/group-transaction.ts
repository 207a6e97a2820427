import type { QueuePolicy } from '@quota/domain';
import type pg from 'pg';
import type { QueryRunner } from 'typeorm';
import { flushWorks } from './flush.js';
import { prefetchOf, type Part, type Queued } from './group-queues.js';
import { conflictCause, isConnectionError, isDatabaseError, isTimeout, type ConflictCause } from '../database/postgres-errors.js';
import { SharedHeads } from '../shared-heads.js';
import { keyedRead, lockedHeadRead, type HeadRow, type KeyedRead, type ReadRow } from './read-statement.js';
import { commitReplicated } from '../database/synchronous-standby.js';
import { NamespaceUnitOfWork } from './unit-of-work.js';

/**
 * One group's transaction for the group committer (group-commit.ts): the keyed prefetch, the
 * heads read and locked, every namespace's commands decided, the one write, COMMIT; and what
 * came of it, for the committer to answer, retry or split the group.
 */

/** What a group's transaction is told, and tells (GroupCommitOptions' hooks). */
export interface TransactionHooks {
  readonly clock?: () => number;
  /** The reservation queue's policy; absent: the domain's default. */
  readonly queuePolicy?: QueuePolicy;
  /** Told of every committed transaction: how many commands it decided and after how many retries (metrics). */
  readonly onCommitted?: (commands: number, retries: number) => void;
  /** Told when a committed group appended events (to wake the projection worker). */
  readonly onAppended?: () => void;
  /** A seam for tests and fault injection: runs between a group's prefetch and its transaction, per namespace. */
  readonly onPrefetched?: (namespace: string) => Promise<void>;
  /** A seam for tests: runs inside the transaction once the heads are read and locked. */
  readonly onLocked?: (namespaces: readonly string[]) => Promise<void>;
}

export interface BatchStats {
  transactions: number;
  commands: number;
  retries: number;
  unavailable: number;
  /**
   * Why commands were rerun: 40001/40P01 (serialization), a moved head (version), a unique key
   * taken (unique), a head another writer held (locked: that namespace alone is retried).
   */
  conflicts: Record<ConflictCause, number>;
}

export type Attempt =
  | { readonly kind: 'done'; readonly deferred: readonly Part[] }
  | { readonly kind: 'poisoned'; readonly job: Queued; readonly error: unknown }
  | { readonly kind: 'conflict' | 'connection' | 'failed'; readonly error: unknown; readonly commitSent: boolean };

/**
 * One try of a group: the keyed prefetch (outside the snapshot), START TRANSACTION ISOLATION
 * LEVEL SERIALIZABLE (TypeORM's startTransaction), the heads read and locked by key, every
 * namespace's commands decided on its evolving state, the one write statement, COMMIT. The
 * error that aborts it can arrive at any of these, COMMIT included (a serialization failure
 * is often found only there), so the whole transaction is what is retried.
 *
 * Why the prefetch may lie outside the snapshot: every write to a namespace's reservation
 * rows advances its head in the same transaction (the compare-and-set in flush-statement.ts),
 * and versions only grow. So when the head this snapshot reads has the version the prefetch
 * saw, no transaction touched those reservations in between, and the prefetched rows are
 * exactly what this snapshot would read; else they are read again inside it. Earlier answers
 * (the decisions log) can be written without moving the head (a denial), but a request key
 * is unique per namespace: a concurrent answer to the same key makes the insert fail, and the
 * retry reads it. Read inside the snapshot, these index probes left predicate locks on index
 * pages that other namespaces' rows share, and unrelated namespaces aborted each other.
 * (test/integration/serializable.test.ts moves a head between the prefetch and the
 * transaction and checks the re-read.)
 */
export async function attemptGroup(
  hooks: TransactionHooks,
  stats: BatchStats,
  runner: QueryRunner,
  client: pg.PoolClient,
  group: readonly Part[],
): Promise<Attempt> {
  let commitSent = false;
  let culprit: Queued | undefined;
  try {
    const reads = group.map((part) => ({ namespace: part.namespace, read: prefetchOf(part.batch) }));
    const prefetched = (await client.query<ReadRow>(keyedRead(reads))).rows;
    if (hooks.onPrefetched) for (const part of group) await hooks.onPrefetched(part.namespace);
    await runner.startTransaction('SERIALIZABLE');
    const { now, heads, shared, taken, deferred } = await lockHeads(hooks, stats, client, group, reads, prefetched);
    const finals: { queued: Queued; result?: unknown; error?: unknown }[] = [];
    const works: NamespaceUnitOfWork[] = [];
    for (const { namespace, read, part, facts } of taken) {
      const head = heads.get(namespace);
      const work = NamespaceUnitOfWork.begin(
        client,
        namespace,
        now,
        head ? { version: Number(head.version), state: head.state } : undefined,
        read,
        facts,
        shared,
        hooks.queuePolicy,
      );
      works.push(work);
      for (const queued of part.batch) {
        const mark = work.mark();
        try {
          finals.push({ queued, result: await queued.job.run(work) });
        } catch (error) {
          if (isDatabaseError(error) || isConnectionError(error)) {
            culprit = queued;
            throw error;
          }
          work.restore(mark);
          finals.push({ queued, error });
        }
      }
    }
    await flushWorks(client, works, now, shared);
    // Once COMMIT is sent, a lost connection leaves the outcome unknown.
    commitSent = true;
    await commitReplicated(runner, client);
    if (works.some((w) => w.appends)) hooks.onAppended?.();
    stats.transactions++;
    stats.commands += finals.length;
    hooks.onCommitted?.(finals.length, Math.max(0, ...finals.map((f) => f.queued.attempts)));
    for (const final of finals) {
      if ('error' in final) final.queued.reject(final.error);
      else final.queued.resolve(final.result);
    }
    return { kind: 'done', deferred };
  } catch (error) {
    const cause = conflictCause(error);
    if (!cause && !isDatabaseError(error)) {
      // A lost connection, or an error from inside the driver (say, a stack overflow while it
      // encoded a parameter): the connection's protocol state is unknown. Closing it makes the
      // pool drop it when TypeORM releases it, instead of handing it to the next group; the
      // server rolls the transaction back.
      await client.end().catch(() => undefined);
    } else if (runner.isTransactionActive && !commitSent) {
      // A failed COMMIT has ended the transaction already; anything earlier is rolled back.
      await runner.rollbackTransaction().catch(() => undefined);
    }
    if (cause) {
      stats.conflicts[cause]++;
      return { kind: 'conflict', error, commitSent: false };
    }
    if (isConnectionError(error) || !isDatabaseError(error)) return { kind: 'connection', error, commitSent };
    if (culprit && !isTimeout(error)) return { kind: 'poisoned', job: culprit, error };
    return { kind: 'failed', error, commitSent };
  }
}

/**
 * Inside the transaction: the clock, and the group's heads read and locked by key. A head the
 * prefetch saw but the locked read did not is held by another writer: its namespace is
 * deferred. The keyed facts of a namespace whose head moved since the prefetch are read again.
 */
async function lockHeads(
  hooks: TransactionHooks,
  stats: BatchStats,
  client: pg.ClientBase,
  group: readonly Part[],
  reads: readonly { namespace: string; read: KeyedRead }[],
  prefetched: readonly ReadRow[],
) {
  const namespaces = group.map((part) => part.namespace);
  const headRow = (await client.query<HeadRow>(lockedHeadRead(namespaces))).rows[0];
  if (!headRow) throw new Error('the head read returns one row');
  await hooks.onLocked?.(namespaces);
  const now = hooks.clock ? hooks.clock() : Math.floor(headRow.now_ms);
  const heads = new Map((headRow.heads ?? []).map((h) => [h.namespace, h]));
  const shared = new SharedHeads(headRow.shared ?? []);
  // A namespace is taken when its head was read (or it has none) and so was the head of every
  // shared quota covering it.
  const ready = (namespace: string): boolean => (heads.get(namespace)?.state.shared ?? []).every((q) => shared.has(q.key));
  const taken = reads
    .map((read, i) => ({ ...read, part: group[i] as Part, facts: prefetched[i] as ReadRow }))
    .filter((r) => (heads.has(r.namespace) || r.facts.head_version === null) && ready(r.namespace));
  const deferred = group.filter((part) => !taken.some((t) => t.part === part));
  stats.conflicts.locked += deferred.length;
  stats.retries += deferred.length;
  const stale = taken.filter((t) => (heads.get(t.namespace)?.version ?? null) !== t.facts.head_version);
  if (stale.length > 0) {
    const again = (await client.query<ReadRow>(keyedRead(stale))).rows;
    stale.forEach((t, i) => (t.facts = again[i] as ReadRow));
  }
  return { now, heads, shared, taken, deferred };
}
