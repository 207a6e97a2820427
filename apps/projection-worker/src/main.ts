import { loadConfig } from '@quota/config';
import { ensureLedgerPartitions, openDataSource, PARTITIONS_EVERY_MS, ProjectionRunner, UsageProjection } from '@quota/ledger';
import { createLogger, leaveWithSupervisor, onShutdown, startOpsServer } from '@quota/ops';
import { projectionMetrics } from './metrics.js';

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

// Four connections: the LISTEN, a step's transaction, the snapshot being written after its
// step (snapshot-writer.ts), and the lag reads beside them.
const dataSource = await openDataSource({ url: config.databaseUrl, poolSize: 4, applicationName: 'quota-ledger-projection' });
const projection = new UsageProjection(dataSource, {
  batchSize: config.projectionBatchSize,
  snapshotEvery: config.snapshotEvery,
  onError: (error) => logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'writing a usage snapshot failed; the next one is due after SNAPSHOT_EVERY more events'),
});

if (process.argv.includes('--rebuild')) {
  const started = Date.now();
  const applied = await projection.rebuild();
  logger.info({ events: applied, ms: Date.now() - started }, 'rebuilt every read model from the ledger');
  await dataSource.destroy();
  process.exit(0);
}

// Registered before the runner starts, so its first step is counted.
const metrics = projectionMetrics(
  () => projection.lag(),
  (error) => logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'lag query failed'),
);

const runner = new ProjectionRunner(dataSource, projection, {
  pollMs: config.projectionPollMs,
  // Pacing: at most this many events a step, after notifications gathered for a moment, so
  // the worker applies events in regular small steps instead of bursts that compete with
  // admissions for the cores.
  stepMax: config.projectionStepMax,
  coalesceMs: config.projectionCoalesceMs,
  onError: (error) => logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'projection step failed; retrying'),
  onApplied: (count, seconds) => metrics.applied(count, seconds),
});
runner.start();
// The runner's timers do not hold the event loop (tests run it in-process): without this, a
// database outage (no connection, no LISTEN) with METRICS_PORT=0 left nothing to wait for, and
// the worker exited 0 in the middle of a failover.
const alive = setInterval(() => undefined, 60_000);
logger.info({ pollMs: config.projectionPollMs, batchSize: config.projectionBatchSize, stepMax: config.projectionStepMax, coalesceMs: config.projectionCoalesceMs }, 'following the ledger');

// The ledger's monthly partitions, made months ahead (ledger-partitions.ts): a long-running
// process that reaches the database anyway, so a deployment that is rarely migrated still gets
// them. A failure (a lock not granted in time, a role that may not create tables) is logged and
// tried again at the next run; inserts never depend on it.
const makePartitions = async (): Promise<void> => {
  try {
    const made = await ensureLedgerPartitions(dataSource);
    if (made.length > 0) logger.info({ partitions: made }, 'made ledger partitions');
  } catch (error) {
    logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'making ledger partitions failed; trying again later');
  }
};
const partitions = setInterval(() => void makePartitions(), PARTITIONS_EVERY_MS);
partitions.unref();
await makePartitions();
// Alive while the event loop turns: a database outage is not cured by a restart, so it is
// reported by the lag series and the logs, not by failing the liveness probe.
const ops = config.metricsPort ? await startOpsServer({ port: config.metricsPort, host: config.host, registry: metrics.registry, healthy: () => true }) : undefined;
if (ops) logger.info({ port: ops.port }, 'GET /metrics and /healthz');

onShutdown(
  async () => {
    clearInterval(partitions);
    clearInterval(alive);
    await runner.stop();
    // A snapshot being written is let finish (a failure was logged already).
    await projection.snapshotsWritten().catch(() => undefined);
    await ops?.close();
    await dataSource.destroy();
  },
  { timeoutMs: config.shutdownTimeoutMs, logger },
);
