import type { DataSource } from 'typeorm';

/** The channel a committed append is announced on (NOTIFY), which the projection worker LISTENs to. */
export const LEDGER_EVENTS_CHANNEL = 'quota_ledger_events';

/**
 * Wakes the projection worker after appends: a NOTIFY on the ledger's channel, sent from its
 * own short transaction after the batch committed, at most once per `intervalMs` however many
 * batches commit meanwhile.
 *
 * Why not a trigger on ledger_events (the first design): PostgreSQL makes a committing
 * transaction that has notified hold a database-wide lock until its commit record is flushed,
 * so every admission commit waited for the one before it to reach disk, and group commit was
 * lost (docs/design-decisions.md, "The ledger notifies from its own short transaction"). Here
 * only the notification itself is serialized. A notification lost to a crash or a dropped
 * connection only delays the worker until its next poll.
 */
export class AppendNotifier {
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly channel: string,
    private readonly intervalMs: number,
  ) {}

  /** Something was appended: notify within `intervalMs`. */
  poke(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sending = this.dataSource
        .query('SELECT pg_notify($1, $2)', [this.channel, ''])
        .then(() => undefined)
        .catch(() => undefined)
        .finally(() => (this.sending = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Sends what is pending now, and no more. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      await this.dataSource.query('SELECT pg_notify($1, $2)', [this.channel, '']).catch(() => undefined);
    }
    await this.sending;
  }
}
