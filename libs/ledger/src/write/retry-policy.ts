import { conflictCause, type ConflictCause } from '../database/postgres-errors.js';

/**
 * The one retry policy of every writer (the group committer, the cluster writer): a transaction
 * that lost to a concurrent one (SQLSTATE 40001 or 40P01, a moved head, a unique key another
 * writer took) is retried whole, after an exponential backoff with full jitter, at most
 * `retryMax` times; after `pessimisticAfter` conflicts a writer that can stops hoping and takes
 * its locks before its snapshot. The error can arrive at COMMIT, so what is retried is always
 * the whole transaction (docs/style.md, habit 4).
 */
export interface RetryPolicyOptions {
  /** Attempts of one transaction before its caller is answered Unavailable. */
  readonly retryMax: number;
  /** The ceiling of the first backoff, in milliseconds; it doubles per attempt. */
  readonly retryBaseMs: number;
  /** The largest ceiling of a backoff, in milliseconds. */
  readonly retryMaxDelayMs: number;
  /** Conflicts after which an attempt is pessimistic (`pessimistic`); absent: never. */
  readonly pessimisticAfter?: number;
}

export class RetryPolicy {
  constructor(readonly options: RetryPolicyOptions) {}

  get retryMax(): number {
    return this.options.retryMax;
  }

  /** The pause before the next attempt after `attempt` conflicts: uniform below a capped exponential ceiling. */
  backoff(attempt: number): number {
    const { retryBaseMs, retryMaxDelayMs } = this.options;
    return Math.random() * Math.min(retryMaxDelayMs, retryBaseMs * 2 ** Math.max(0, attempt - 1));
  }

  /** After this many conflicts, no more attempts. */
  exhausted(attempts: number): boolean {
    return attempts >= this.options.retryMax;
  }

  /** Whether attempt number `attempt` (from 1) should lock before its snapshot instead of hoping for no conflict. */
  pessimistic(attempt: number): boolean {
    return this.options.pessimisticAfter !== undefined && attempt > this.options.pessimisticAfter;
  }

  /**
   * Runs `transaction` until it commits, for a writer that waits for its own answer (the group
   * committer instead puts its commands back in their queues and uses `backoff` and `exhausted`).
   * A conflict is counted (`conflicted`) and retried after the backoff; once the attempts are
   * exhausted, `gaveUp` says what to throw. Any other error is thrown as it is.
   */
  async run<R>(
    transaction: (attempt: number) => Promise<R>,
    on: {
      readonly conflicted: (cause: ConflictCause) => void;
      readonly retrying: () => void;
      readonly gaveUp: (attempts: number, error: unknown) => Error;
    },
  ): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await transaction(attempt);
      } catch (error) {
        const cause = conflictCause(error);
        if (!cause) throw error;
        on.conflicted(cause);
        if (this.exhausted(attempt)) throw on.gaveUp(attempt, error);
        on.retrying();
        await new Promise((resolve) => setTimeout(resolve, this.backoff(attempt)));
      }
    }
  }
}
