import type pg from 'pg';
import type { DataSource } from 'typeorm';

/**
 * Making `ledger_events`' monthly partitions ahead of time (migrations/1795900001000). An insert
 * never waits for this: a row whose month has no partition lands in DEFAULT. But a month whose
 * rows sit in DEFAULT can only get its partition by moving them (the database function does,
 * under the ledger's lock), so partitions are made months before they are needed: by
 * `npm run migrate` after the migrations, and by the projection worker at start and every
 * PARTITIONS_EVERY_MS.
 */

/** Months made beyond the current one. */
export const PARTITION_MONTHS_AHEAD = 2;

/** How often a long-running process makes sure the months ahead exist: hourly, where one is needed two months early. */
export const PARTITIONS_EVERY_MS = 60 * 60 * 1000;

/**
 * Longest the maintenance waits for a lock: attaching a partition locks DEFAULT, and moving
 * rows out of DEFAULT locks the whole ledger. Behind a waiting request, every later one queues,
 * so it gives up after this and is tried again at its next run.
 */
const LOCK_TIMEOUT_MS = 1_000;

/** Makes the current month's partition and the next ones that are missing; returns the partitions it made. */
export async function ensureLedgerPartitions(dataSource: DataSource, monthsAhead = PARTITION_MONTHS_AHEAD): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  try {
    const client = (await runner.connect()) as pg.PoolClient;
    await runner.startTransaction();
    try {
      await client.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
      const { rows } = await client.query<{ partition: string }>(`SELECT ledger_events_make_partitions($1) AS partition`, [monthsAhead]);
      await runner.commitTransaction();
      return rows.map((r) => r.partition);
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    }
  } finally {
    await runner.release();
  }
}
