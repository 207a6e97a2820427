import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional } from 'class-validator';
import type { AppConfig } from '@quota/config';
import { ClusterWriter, LedgerCommands, QueueQueries } from '@quota/ledger';
import { APP_CONFIG } from '../config/app-config.module.js';
import { OptionalWholeNumber, ReadAfterQuery } from '../common/kube/query-formats.js';

/** Longest a `?watch=true` read of a queued reservation holds the request. */
export const WATCH_TIMEOUT_MAX_SECONDS = 300;
const WATCH_TIMEOUT_DEFAULT_SECONDS = 30;
/** Namespaces the sweep visits per period, at most. */
const SWEEP_NAMESPACES_MAX = 500;

const toBoolean = ({ value }: { value: unknown }): unknown => (value === 'true' ? true : value === 'false' ? false : value);

/** `GET /v1/namespaces/{ns}/reservations/{id}` query: `watch=true` long-polls a queued one until it is admitted, expires or is cancelled. */
export class ReservationQueryDto extends ReadAfterQuery {
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'watch must be true or false' })
  watch?: boolean;

  @OptionalWholeNumber('timeoutSeconds', 1, WATCH_TIMEOUT_MAX_SECONDS)
  timeoutSeconds?: number;
}

export const watchTimeoutMs = (query: ReservationQueryDto): number => (query.timeoutSeconds ?? WATCH_TIMEOUT_DEFAULT_SECONDS) * 1000;

/**
 * The queue's periodic sweep (an event per change, never an edit): every QUEUE_SWEEP_INTERVAL_MS
 * each namespace with a waiter past its deadline gets a SweepQueue command, which expires it
 * (`Expired`, with the reason), and each shared quota covering a namespace with waiters, whose use,
 * members or spec changed since the sweep last looked, gets its fair drain.
 * Between sweeps, a write of this process that frees room in a shared quota runs its fair drain
 * at once (the next transaction); the sweep is the backstop for other processes' writes.
 */
@Injectable()
export class QueueSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('queue');
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    @Inject(LedgerCommands) private readonly ledger: LedgerCommands,
    @Inject(QueueQueries) private readonly queue: QueueQueries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(ClusterWriter) private readonly writer: ClusterWriter,
  ) {
    ledger.onSharedFreed((keys) => {
      for (const key of keys) this.freed.add(key);
      void this.drainFreed();
    });
  }

  /** Shared quotas freed by this process's writes, whose fair drain has not run since. */
  private readonly freed = new Set<string>();
  /** Per shared quota, its head's revision when the sweep last drained it. */
  private readonly drainedAt = new Map<string, string>();
  private draining = false;

  private async drainFreed(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let key = first(this.freed); key !== undefined; key = first(this.freed)) {
        this.freed.delete(key);
        await this.writer.drainSharedQueue(key, { actor: 'system:queue-fair-share' }).catch((error: unknown) => this.warn('a fair drain', error));
      }
    } finally {
      this.draining = false;
    }
  }

  private warn(what: string, error: unknown): void {
    this.logger.warn(`${what} failed, retried by the next sweep: ${error instanceof Error ? error.message : String(error)}`);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.config.queue.sweepIntervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One period's sweep; a period that finds the last one still running skips. */
  async sweep(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const namespace of await this.queue.namespacesWithExpiredWaiters(await this.ledger.now(), SWEEP_NAMESPACES_MAX)) {
        await this.ledger.sweepQueue(namespace, { actor: 'system:queue-sweeper' });
      }
      for (const { key, revision } of await this.queue.sharedKeysWithWaiters(SWEEP_NAMESPACES_MAX)) {
        if (this.drainedAt.get(key) === revision) continue;
        await this.writer.drainSharedQueue(key, { actor: 'system:queue-sweeper' });
        this.drainedAt.set(key, revision);
      }
    } catch (error) {
      this.warn('the queue sweep', error);
    } finally {
      this.running = false;
    }
  }
}

const first = <T>(set: ReadonlySet<T>): T | undefined => set.values().next().value;
