import 'reflect-metadata';
import { loadConfig } from '@quota/config';
import { createInventorySource } from '@quota/inventory';
import { queueBackendOf } from '@quota/jobs';
import { buildDataSourceOptions, Ledger } from '@quota/ledger';
import { DataSource } from 'typeorm';
import { Reconciler } from './reconciler.js';

/**
 * The reconciler process: registers the every-namespace job scheduler (idempotent; any
 * number of replicas), works namespace jobs, and appends commit / release / adopt events.
 * BullMQ runs on REDIS_URL when set, else on BullMQ's PostgreSQL backend in the ledger's
 * database.
 */
const config = loadConfig();
if (!config.databaseUrl) {
  console.error('DATABASE_URL is not set: the reconciler needs the ledger database');
  process.exit(2);
}
const log = (level: string, msg: string, fields: Record<string, unknown> = {}): void => {
  console.log(JSON.stringify({ time: new Date().toISOString(), level, app: 'reconciler', msg, ...fields }));
};

const dataSource = new DataSource(buildDataSourceOptions({ url: config.databaseUrl, poolSize: Math.max(2, config.reconcileConcurrency), applicationName: 'quota-ledger-reconciler' }));
await dataSource.initialize();
const ledger = new Ledger(dataSource, { statementTimeoutMs: config.statementTimeoutMs, retryMax: config.admissionRetryMax });
const backend = queueBackendOf(config.redisUrl, config.databaseUrl);
const reconciler = new Reconciler(ledger, createInventorySource(config.inventory), backend, {
  intervalMs: config.reconcileIntervalSeconds * 1000,
  graceMs: config.reconcileGraceSeconds * 1000,
  concurrency: config.reconcileConcurrency,
  log,
});
await reconciler.start();
log('info', 'reconciling', { queue: backend.kind, inventory: config.inventory.source, intervalSeconds: config.reconcileIntervalSeconds, graceSeconds: config.reconcileGraceSeconds });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('info', 'stopping: finishing the jobs in hand', { signal, ...reconciler.stats });
  await reconciler.stop();
  await ledger.close();
  await dataSource.destroy();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
