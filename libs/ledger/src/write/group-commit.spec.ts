import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { LedgerError } from '../ledger-error.js';
import { GroupCommitter, type NamespaceJob } from './group-commit.js';
import { RetryPolicy } from './retry-policy.js';

/**
 * The group committer's state machine (retry, bisect, give up) over a fake client: the three
 * statements a group sends (the keyed prefetch, the locked head read, the write) are answered
 * by name, as PostgreSQL would answer them for namespaces with no head yet, and a test decides
 * which write or COMMIT fails and how. test/integration/group-commit.test.ts runs the same
 * machine over PostgreSQL.
 */

/** An error as pg raises it: a message and a SQLSTATE. */
const pgError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

interface WrittenDecision {
  readonly namespace: string;
  readonly name: string | null;
}

/** What a test does to a group's write statement, given the decisions it holds: throw to fail it. */
type WriteHook = (decisions: readonly WrittenDecision[], attempt: number) => void;

const WRITES_MAX = 100;

class FakeDatabase {
  /** Every write statement sent, with the decisions it held, and whether its transaction committed. */
  readonly writes: { decisions: WrittenDecision[]; committed: boolean }[] = [];
  rollbacks = 0;

  constructor(private readonly onWrite: WriteHook = () => undefined) {}

  /** The names whose decisions were committed, in commit order. */
  committed(): (string | null)[] {
    return this.writes.filter((w) => w.committed).flatMap((w) => w.decisions.map((d) => d.name));
  }

  readonly dataSource = { createQueryRunner: () => this.runner() } as unknown as DataSource;

  private runner(): unknown {
    let active = false;
    let written: { decisions: WrittenDecision[]; committed: boolean } | undefined;
    const client = {
      query: async (config: pg.QueryConfig): Promise<{ rows: unknown[] }> => {
        if (config.name === 'ledger_read') {
          const reads = JSON.parse(String(config.values?.[0])) as { ns: string }[];
          return { rows: reads.map((r) => ({ namespace: r.ns, head_version: null, decisions: null, reservations: null })) };
        }
        if (config.name === 'ledger_heads') return { rows: [{ now_ms: 1_000, heads: null, shared: null }] };
        if (config.name?.startsWith('ledger_flush_')) {
          // Decisions alone (no events): the values are [now, the decisions' rows as JSON].
          const decisions = JSON.parse(String(config.values?.[1])) as WrittenDecision[];
          // A committer that loops (never isolating the bad command) would starve the event loop
          // on these instant answers: past a bound, answer as a broken driver, which is retried
          // after a backoff and then given up, so the test fails instead of hanging.
          if (this.writes.length >= WRITES_MAX) throw new Error(`the fake client saw ${WRITES_MAX} writes: the committer loops`);
          written = { decisions, committed: false };
          this.writes.push(written);
          this.onWrite(decisions, this.writes.length);
          return { rows: [{ ids: decisions.map((_, i) => String(i + 1)), head_rows: 0, positions: null }] };
        }
        throw new Error(`the fake client does not know ${config.name ?? config.text}`);
      },
      on: () => client,
      removeListener: () => client,
      end: async () => undefined,
    };
    return {
      connect: async () => client,
      release: async () => undefined,
      get isTransactionActive() {
        return active;
      },
      startTransaction: async () => {
        active = true;
        written = undefined;
      },
      commitTransaction: async () => {
        active = false;
        if (written) written.committed = true;
      },
      rollbackTransaction: async () => {
        active = false;
        this.rollbacks++;
      },
    };
  }
}

function committer(db: FakeDatabase, retryMax = 5): GroupCommitter {
  return new GroupCommitter(db.dataSource, {
    batchSizeMax: 16,
    groupCommandsMax: 64,
    groupBytesMax: 1 << 20,
    groupsInFlightMax: 1,
    retries: new RetryPolicy({ retryMax, retryBaseMs: 1, retryMaxDelayMs: 2 }),
    headWaitMaxMs: 1_000,
    queueMax: 100,
  });
}

/** A command that records one denial named `name` (a decision, no events) and answers its name. */
const deny = (name: string): NamespaceJob<string> => ({
  async run(work) {
    work.recordDecision({
      source: 'rest',
      operation: 'CREATE',
      resource: 'pods',
      name,
      requester: 'alice',
      dryRun: false,
      result: { allowed: false, code: 403, dryRun: false },
    });
    return name;
  },
});

describe('GroupCommitter over a fake client: retry and bisect', () => {
  it('commits a batch of several namespaces whole, in one transaction', async () => {
    const db = new FakeDatabase();
    const group = committer(db);
    const answers = await Promise.all([
      group.submit('ns-a', deny('a1')),
      group.submit('ns-a', deny('a2')),
      group.submit('ns-b', deny('b1')),
    ]);
    await group.close();
    expect(answers).toEqual(['a1', 'a2', 'b1']);
    expect(db.writes).toHaveLength(1);
    expect(db.committed()).toEqual(['a1', 'a2', 'b1']);
    expect(group.stats).toMatchObject({ transactions: 1, commands: 3, retries: 0, unavailable: 0 });
  });

  it('rolls back a batch that hit a serialization failure and commits it on the retry', async () => {
    const db = new FakeDatabase((_, attempt) => {
      if (attempt === 1) throw pgError('40001', 'could not serialize access due to read/write dependencies among transactions');
    });
    const group = committer(db);
    const answers = await Promise.all([group.submit('ns-a', deny('a1')), group.submit('ns-b', deny('b1'))]);
    await group.close();
    expect(answers).toEqual(['a1', 'b1']);
    // Each namespace waits its own jittered backoff, so the retry is one transaction or two.
    const [first, ...retried] = db.writes.map((w) => w.committed);
    expect(first).toBe(false);
    expect(retried.length).toBeGreaterThanOrEqual(1);
    expect(retried.every(Boolean)).toBe(true);
    expect(db.rollbacks).toBe(1);
    expect([...db.committed()].sort()).toEqual(['a1', 'b1']);
    expect(group.stats).toMatchObject({ commands: 2, unavailable: 0 });
    expect(group.stats.conflicts.serialization).toBe(1);
  });

  it('bisects a batch whose write statement fails until only the bad command fails', async () => {
    const refused = pgError('22P05', 'unsupported Unicode escape sequence');
    const db = new FakeDatabase((decisions) => {
      if (decisions.some((d) => d.name === 'poison')) throw refused;
    });
    const group = committer(db);
    const submitted = [
      group.submit('ns-a', deny('a1')),
      group.submit('ns-b', deny('b1')),
      group.submit('ns-c', deny('c1')),
      group.submit('ns-c', deny('poison')),
      group.submit('ns-c', deny('c2')),
      group.submit('ns-d', deny('d1')),
    ];
    const settled = await Promise.allSettled(submitted);
    await group.close();
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : s.reason))).toEqual(['a1', 'b1', 'c1', refused, 'c2', 'd1']);
    // Every other command committed once, and the bad one never.
    expect([...db.committed()].sort()).toEqual(['a1', 'b1', 'c1', 'c2', 'd1']);
    // The group of four namespaces, its halves, the half holding ns-c split again, then ns-c's
    // three commands each alone: the poisoned one is the last write and the only one left.
    const failed = db.writes.filter((w) => !w.committed).map((w) => w.decisions.map((d) => d.name));
    expect(failed).toEqual([['a1', 'b1', 'c1', 'poison', 'c2', 'd1'], ['c1', 'poison', 'c2', 'd1'], ['c1', 'poison', 'c2'], ['poison']]);
    expect(group.stats.unavailable).toBe(1);
  });

  it('answers Unavailable once a command conflicted as often as the retry policy allows', async () => {
    const db = new FakeDatabase(() => {
      throw pgError('40001', 'could not serialize access due to concurrent update');
    });
    const group = committer(db, 3);
    const answer = group.submit('ns-a', deny('a1'));
    await expect(answer).rejects.toThrow(LedgerError);
    await expect(answer).rejects.toMatchObject({
      code: 'Unavailable',
      message: expect.stringContaining('conflicted with concurrent ones 3 times'),
    });
    await group.close();
    expect(db.writes).toHaveLength(3);
    expect(db.committed()).toEqual([]);
    expect(group.stats).toMatchObject({ transactions: 0, commands: 0, retries: 3, unavailable: 1 });
    expect(group.stats.conflicts.serialization).toBe(3);
  });
});
