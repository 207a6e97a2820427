import type pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import { LedgerError } from '../ledger-error.js';

/**
 * Synchronous replication as the ledger relies on it (DATABASE_REQUIRE_SYNCHRONOUS_STANDBY): an
 * admission is acknowledged only once a standby holds its commit, so that losing the primary
 * loses no acknowledged reservation (an acknowledged reservation that is lost is an
 * over-admission: its object exists, the ledger no longer counts it).
 *
 * Which `synchronous_commit` levels count: `on` (the standby has flushed the commit to its disk)
 * and `remote_apply` (flushed and replayed: visible to reads there too). Not `remote_write`: the
 * standby has handed the WAL to its operating system but not flushed it, so the loss of the
 * primary together with a crash of the standby's machine (one power cut) loses acknowledged
 * admissions. Not `local` or `off`: nothing waits for a standby.
 */
export const SYNCHRONOUS_COMMIT_LEVELS: readonly string[] = ['on', 'remote_apply'];

interface Settings {
  readonly names: string;
  readonly level: string;
  readonly standbys: { name: string; state: string | null; sync: string | null }[] | null;
}

/**
 * Resolves when the session's commits wait for a synchronous standby that is streaming now;
 * otherwise throws an Error that says what is missing (the boot error and the `/readyz` line).
 */
export async function checkSynchronousStandby(dataSource: DataSource): Promise<void> {
  const [row] = (await dataSource.query(
    `SELECT current_setting('synchronous_standby_names') AS names, current_setting('synchronous_commit') AS level,
            (SELECT json_agg(json_build_object('name', application_name, 'state', state, 'sync', sync_state) ORDER BY application_name) FROM pg_stat_replication) AS standbys`,
  )) as Settings[];
  const problem = row ? synchronousProblem(row) : 'the database did not answer';
  if (problem) throw new Error(problem);
}

function synchronousProblem({ names, level, standbys }: Settings): string | undefined {
  if (names.trim() === '')
    return 'synchronous_standby_names is empty: commits wait for no standby (set it on the primary, e.g. ANY 1 (standby_a, standby_b))';
  if (!SYNCHRONOUS_COMMIT_LEVELS.includes(level)) {
    return `synchronous_commit is ${level}: a commit is acknowledged before a standby has flushed it (needs ${SYNCHRONOUS_COMMIT_LEVELS.join(' or ')})`;
  }
  const all = standbys ?? [];
  if (all.length > 0 && all.every((s) => s.sync === null)) {
    return "pg_stat_replication's details are hidden from this role: GRANT pg_monitor (or pg_read_all_stats) to it, so that it can see its synchronous standbys";
  }
  if (all.some((s) => s.state === 'streaming' && (s.sync === 'sync' || s.sync === 'quorum'))) return undefined;
  const seen = all.map((s) => `${s.name || '(unnamed)'} ${s.state ?? '?'}/${s.sync ?? '?'}`).join(', ');
  return `no synchronous standby is streaming (synchronous_standby_names = '${names}'; pg_stat_replication: ${seen || 'no standby connected'}): commits wait until one is`;
}

/** The warning PostgreSQL sends when a commit stops waiting for the standby (a cancel). */
const SYNC_WAIT_CANCELLED = /canceling (the )?wait for synchronous replication/i;

/**
 * COMMIT, refusing to call it acknowledged if PostgreSQL stopped waiting for the synchronous
 * standby. While no standby confirms, a COMMIT waits (statement_timeout does not end that wait);
 * cancelled (pg_cancel_backend: what an operator does to commits that seem stuck), it commits
 * locally and answers with a WARNING only. Then the decision is in the primary's ledger but no
 * standby is known to hold it, so its caller is answered 503 instead of "allowed" (the same
 * request again, with the same request id or review uid, reads the stored answer).
 */
export async function commitReplicated(runner: QueryRunner, client: pg.ClientBase): Promise<void> {
  let cancelled: string | undefined;
  const onNotice = (notice: { message?: string }): void => {
    if (SYNC_WAIT_CANCELLED.test(notice.message ?? '')) cancelled = notice.message;
  };
  client.on('notice', onNotice);
  try {
    await runner.commitTransaction();
  } finally {
    client.removeListener('notice', onNotice);
  }
  if (cancelled !== undefined) {
    throw new LedgerError(
      'Unavailable',
      'the ledger committed the decision, but no synchronous standby confirmed it in time (PostgreSQL: "' +
        cancelled +
        '"); repeat the request with the same request id to learn it',
      { retryAfterSeconds: 1 },
    );
  }
}
