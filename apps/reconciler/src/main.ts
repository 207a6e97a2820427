import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@quota/config';
import { createLogger, leaveWithSupervisor, NestPinoLogger, onShutdown } from '@quota/ops';
import { ReconcilerModule } from './reconciler.module.js';

/**
 * The reconciler process: registers the every-namespace job scheduler (idempotent; any
 * number of replicas), works namespace jobs, and appends commit / release / adopt events.
 * BullMQ runs on REDIS_URL when set, else on BullMQ's PostgreSQL backend in the ledger's
 * database.
 */
const config = loadConfig();
const logger = createLogger(config.logLevel, 'reconciler');
leaveWithSupervisor((message) => logger.warn(message));
if (!config.databaseUrl) {
  logger.fatal('DATABASE_URL is not set: the reconciler needs the ledger database');
  process.exit(2);
}
const log = (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void => logger[level](fields, msg);
const app = await NestFactory.createApplicationContext(ReconcilerModule.forRoot(config, log), {
  logger: new NestPinoLogger(logger),
  abortOnError: false,
});

// No enableShutdownHooks(): onShutdown owns the signals and bounds the close by SHUTDOWN_TIMEOUT_MS.
onShutdown(() => app.close(), { timeoutMs: config.shutdownTimeoutMs, logger });
