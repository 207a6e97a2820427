import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnvironment, loadConfig, loadStandaloneConfig } from '@quota/config';
import { createLogger } from '@quota/ops';
import { ensureDevToken } from './dev-token.js';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres.js';
import { portInUse } from './port-check.js';
import { Supervisor } from './supervisor.js';

/**
 * The zero-setup start (`npm start`): PostgreSQL (DATABASE_URL, else embedded under
 * QUOTA_LEDGER_DATA_DIR), the migrations, then the admission API, the projection worker and
 * the reconciler as supervised children. BullMQ runs on REDIS_URL, else on PostgreSQL.
 * Ctrl-C: the apps drain and stop, then PostgreSQL. Development only: it sets
 * QUOTA_LEDGER_INSECURE_DEV and makes a development token; production runs each app itself.
 */
const app = (name: string): string => fileURLToPath(new URL(`../../${name}/src/main.js`, import.meta.url));
const config = loadConfig();
const standalone = loadStandaloneConfig();
const logger = createLogger(config.logLevel, 'standalone');
const log = (level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}): void =>
  logger[level](fields, message);

if (await portInUse(standalone.apiHost, config.port)) {
  log(
    'error',
    `port ${config.port} on ${standalone.apiHost} is in use: an earlier start still running (stop it: Ctrl-C in its terminal, or kill its node process) or another server; or set PORT. Nothing was started or stopped`,
  );
  process.exit(1);
}

let postgres: RunningPostgres | undefined;
let databaseUrl = config.databaseUrl;
if (!databaseUrl) {
  postgres = await startEmbeddedPostgres({
    dataDir: standalone.dataDir,
    port: standalone.embeddedPostgresPort,
    database: 'quota_ledger',
    log: (message) => log('info', message),
    warn: (message) => log('warn', message),
  });
  databaseUrl = postgres.url;
}

let stopping = false;
const supervisor = new Supervisor(log, () => void stop(1));

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('info', 'stopping: draining the apps, then PostgreSQL');
  await supervisor.stop();
  await postgres?.stop();
  log('info', 'stopped');
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

const migrate = spawnSync(process.execPath, [app('admission-api').replace(/main\.js$/, 'migrate.js')], {
  env: childEnvironment({ DATABASE_URL: databaseUrl }),
  stdio: 'inherit',
});
if (migrate.status !== 0) {
  log('error', 'the migrations failed; nothing was started');
  await postgres?.stop();
  process.exit(1);
}

const devToken = config.tokensFile ? undefined : ensureDevToken(standalone.dataDir);
const host = standalone.apiHost;
const shared = {
  DATABASE_URL: databaseUrl,
  QUOTA_LEDGER_INSECURE_DEV: 'true',
  HOST: host,
  ...(devToken ? { TOKENS_FILE: devToken.tokensFile } : {}),
};
supervisor.start({ name: 'admission-api', script: app('admission-api'), env: childEnvironment(shared) });
// The workers' /metrics ports stay closed here (METRICS_PORT=0): a development start has no Prometheus; the lag is also at /v1/projections/usage.
supervisor.start({ name: 'projection-worker', script: app('projection-worker'), env: childEnvironment({ ...shared, METRICS_PORT: '0' }) });
supervisor.start({ name: 'reconciler', script: app('reconciler'), env: childEnvironment({ ...shared, METRICS_PORT: '0' }) });

const base = `${config.tls ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${config.port}`;
const lines = [
  '',
  '  quota-ledger is starting (development mode: QUOTA_LEDGER_INSECURE_DEV=true; do not expose it)',
  `  API        ${base}          (ready when ${base}/readyz answers 200)`,
  `  API docs   ${base}/docs`,
  `  dashboard  ${base}/ui/`,
  `  database   ${postgres ? `embedded PostgreSQL in ${relative(process.cwd(), postgres.dir).startsWith('..') ? postgres.dir : relative(process.cwd(), postgres.dir)}, port ${standalone.embeddedPostgresPort}` : 'DATABASE_URL'}`,
  ...(postgres?.outsideBecause
    ? [`             (outside the project: ${postgres.outsideBecause}; the same directory at every start)`]
    : []),
  `  queue      ${config.redisUrl ? 'Redis (REDIS_URL)' : 'BullMQ on PostgreSQL'}`,
  ...(devToken
    ? [`  token      ${devToken.token}`, `             (every role; kept in ${devToken.tokenFile}; quotactl run from here uses it)`]
    : ['  tokens     TOKENS_FILE']),
  `  try        npm run quotactl -- get quota -n default`,
  '  Ctrl-C stops everything.',
  '',
];
process.stderr.write(`${lines.join('\n')}\n`);

// Say so when it is ready to use (the first start builds the database; later ones take seconds).
if (!config.tls) {
  const started = Date.now();
  for (;;) {
    if (stopping) break;
    const ready = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) {
      log('info', `ready: ${base} (${Date.now() - started} ms)`);
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
