import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional } from 'class-validator';
import type { AppConfig } from '@quota/config';
import { ClusterWriter, LedgerCommands, QueueDrainer, QueueQueries } from '@quota/ledger';
import { APP_CONFIG } from '../config/app-config.module.js';
import { OptionalWholeNumber, ReadAfterQuery } from '../common/kube/query-formats.js';

/** Longest a `?watch=true` read of a queued reservation holds the request. */
export const WATCH_TIMEOUT_MAX_SECONDS = 300;
const WATCH_TIMEOUT_DEFAULT_SECONDS = 30;

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
 * The queue's drains in this process, as Nest starts and stops them: the ledger's QueueDrainer
 * (libs/ledger queue-drainer.ts) owns when waiters are admitted — in each command's transaction,
 * after a write of this process that frees room in a shared quota, and every
 * QUEUE_SWEEP_INTERVAL_MS (the backstop for other processes' writes).
 */
@Injectable()
export class QueueSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('queue');
  private readonly drainer: QueueDrainer;

  constructor(
    @Inject(LedgerCommands) ledger: LedgerCommands,
    @Inject(QueueQueries) queue: QueueQueries,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(ClusterWriter) writer: ClusterWriter,
  ) {
    this.drainer = new QueueDrainer(ledger, writer, queue, {
      sweepIntervalMs: config.queue.sweepIntervalMs,
      warn: (message) => this.logger.warn(message),
    });
  }

  onApplicationBootstrap(): void {
    this.drainer.start();
  }

  onApplicationShutdown(): void {
    this.drainer.stop();
  }
}
