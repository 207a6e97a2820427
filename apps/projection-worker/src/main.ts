import { loadConfig } from '@quota/config';
import { ProjectionRunner, UsageProjection } from '@quota/ledger';
import pg from 'pg';

/**
 * The projection worker: keeps the read models (usage per namespace and quota, live
 * reservations, as-of snapshots) caught up with the ledger. Any number may run; their steps
 * serialize on the checkpoint row. `--rebuild` empties the read models, replays the whole
 * ledger, and exits (`npm run projections:rebuild`).
 */
const config = loadConfig();
if (!config.databaseUrl) {
  console.error('DATABASE_URL is not set: the projection worker needs the ledger database');
  process.exit(2);
}
const log = (level: string, msg: string, fields: Record<string, unknown> = {}): void => {
  console.log(JSON.stringify({ time: new Date().toISOString(), level, app: 'projection-worker', msg, ...fields }));
};

const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 3, application_name: 'quota-ledger-projection' });
pool.on('error', (error) => log('warn', 'idle connection failed', { error: error.message }));
const projection = new UsageProjection(pool, { batchSize: config.projectionBatchSize, snapshotEvery: config.snapshotEvery });

if (process.argv.includes('--rebuild')) {
  const started = Date.now();
  const applied = await projection.rebuild();
  log('info', 'rebuilt every read model from the ledger', { events: applied, ms: Date.now() - started });
  await pool.end();
  process.exit(0);
}

const runner = new ProjectionRunner(pool, projection, {
  pollMs: config.projectionPollMs,
  onError: (error) => log('warn', 'projection step failed; retrying', { error: error instanceof Error ? error.message : String(error) }),
});
runner.start();
log('info', 'following the ledger', { pollMs: config.projectionPollMs, batchSize: config.projectionBatchSize });

const report = setInterval(() => {
  projection.lag().then(
    (lag) => log('info', 'lag', { ...lag }),
    (error: unknown) => log('warn', 'lag query failed', { error: error instanceof Error ? error.message : String(error) }),
  );
}, 30_000);
report.unref();

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('info', 'stopping', { signal });
  await runner.stop();
  await pool.end();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
