import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { ensureLedgerPartitions, LEDGER_PARTS, PARTITIONS_EVERY_MS, type LedgerParts, type ProjectionRunner } from '@quota/ledger';
import { APP_CONFIG, startOpsServer, type Logger, type OpsServer } from '@quota/ops';
import { projectionMetrics } from './metrics.js';

export const WORKER_LOGGER = Symbol('WORKER_LOGGER');

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The worker's one job: follow the ledger with the projection (ProjectionRunner), make the
 * ledger's monthly partitions ahead, and serve GET /metrics and /healthz on METRICS_PORT. It
 * stops before the ledger closes (beforeApplicationShutdown runs ahead of every module's
 * onApplicationShutdown, where TypeORM destroys the data source).
 */
@Injectable()
export class ProjectionFollower implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private runner: ProjectionRunner | undefined;
  private partitions: NodeJS.Timeout | undefined;
  private alive: NodeJS.Timeout | undefined;
  private ops: OpsServer | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LEDGER_PARTS) private readonly ledger: LedgerParts,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { config, logger } = this;
    // Registered before the runner starts, so its first step is counted.
    const metrics = projectionMetrics(
      () => this.ledger.projection.lag(),
      (error) => logger.warn({ error: messageOf(error) }, 'lag query failed'),
    );
    // Pacing (PROJECTION_STEP_MAX, PROJECTION_COALESCE_MS): regular small steps instead of bursts that compete with admissions for the cores.
    this.runner = this.ledger.projectionRunner({
      onError: (error) => logger.warn({ error: messageOf(error) }, 'projection step failed; retrying'),
      onApplied: (count, seconds) => metrics.applied(count, seconds),
    });
    this.runner.start();
    // The runner's timers do not hold the event loop (tests run it in-process): without this, a
    // database outage (no connection, no LISTEN) with METRICS_PORT=0 left nothing to wait for, and
    // the worker exited 0 in the middle of a failover.
    this.alive = setInterval(() => undefined, 60_000);
    logger.info(
      {
        pollMs: config.projectionPollMs,
        batchSize: config.projectionBatchSize,
        stepMax: config.projectionStepMax,
        coalesceMs: config.projectionCoalesceMs,
      },
      'following the ledger',
    );
    this.partitions = setInterval(() => void this.makePartitions(), PARTITIONS_EVERY_MS);
    this.partitions.unref();
    await this.makePartitions();
    // Alive while the event loop turns: a database outage is not cured by a restart, so it is
    // reported by the lag series and the logs, not by failing the liveness probe.
    this.ops = config.metricsPort
      ? await startOpsServer({ port: config.metricsPort, host: config.host, registry: metrics.registry, healthy: () => true })
      : undefined;
    if (this.ops) logger.info({ port: this.ops.port }, 'GET /metrics and /healthz');
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.partitions);
    clearInterval(this.alive);
    await this.runner?.stop();
    // A snapshot being written is let finish (a failure was logged already).
    await this.ledger.projection.snapshotsWritten().catch(() => undefined);
    await this.ops?.close();
  }

  /**
   * The ledger's monthly partitions, made months ahead (ledger-partitions.ts): a long-running
   * process that reaches the database anyway, so a deployment that is rarely migrated still gets
   * them. A failure (a lock not granted in time, a role that may not create tables) is logged and
   * tried again at the next run; inserts never depend on it.
   */
  private async makePartitions(): Promise<void> {
    try {
      const made = await ensureLedgerPartitions(this.ledger.dataSource);
      if (made.length > 0) this.logger.info({ partitions: made }, 'made ledger partitions');
    } catch (error) {
      this.logger.warn({ error: messageOf(error) }, 'making ledger partitions failed; trying again later');
    }
  }
}
