import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@quota/config';
import { UsageProjection } from '@quota/ledger';
import { createLogger, leaveWithSupervisor, NestPinoLogger, onShutdown } from '@quota/ops';
import { ProjectionWorkerModule } from './projection-worker.module.js';

/**
 * The projection worker: keeps the read models (usage per namespace and quota, live
 * reservations, as-of snapshots) caught up with the ledger. Any number may run; their steps
 * serialize on the checkpoint row. `--rebuild` empties the read models, replays the whole
 * ledger, and exits (`npm run projections:rebuild`). GET /metrics and /healthz on METRICS_PORT.
 */
const config = loadConfig();
const logger = createLogger(config.logLevel, 'projection-worker');
leaveWithSupervisor((message) => logger.warn(message));
if (!config.databaseUrl) {
  logger.fatal('DATABASE_URL is not set: the projection worker needs the ledger database');
  process.exit(2);
}
const rebuild = process.argv.includes('--rebuild');
const app = await NestFactory.createApplicationContext(ProjectionWorkerModule.forRoot(config, logger, rebuild ? 'rebuild' : 'follow'), {
  logger: new NestPinoLogger(logger),
  abortOnError: false,
});

if (rebuild) {
  const started = Date.now();
  const applied = await app.get(UsageProjection).rebuild();
  logger.info({ events: applied, ms: Date.now() - started }, 'rebuilt every read model from the ledger');
  await app.close();
  process.exit(0);
}

// No enableShutdownHooks(): onShutdown owns the signals and bounds the close by SHUTDOWN_TIMEOUT_MS.
onShutdown(() => app.close(), { timeoutMs: config.shutdownTimeoutMs, logger });
