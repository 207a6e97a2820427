import { loadConfig } from '@quota/config';
import { leaveWithSupervisor } from '@quota/ops';
import { createAdmissionApi } from './app.js';
import type { Server } from 'node:http';
import { listenUnauthenticatedWebhook } from './common/tls/unauthenticated-webhook.js';
import { CLOSE_GRACE_MS, ShutdownState, stopAccepting } from './health/shutdown.js';
import { createLogger } from './observability/logger.js';

const config = loadConfig();
const logger = createLogger(config.logLevel, 'admission-api');
leaveWithSupervisor((message) =>
  console.error(JSON.stringify({ time: new Date().toISOString(), level: 'warn', app: 'admission-api', msg: message })),
);
const app = await createAdmissionApi(config).catch((error: unknown) => {
  // On stderr, as an error thrown by loadConfig() is.
  console.error(
    JSON.stringify({
      time: new Date().toISOString(),
      level: 'fatal',
      app: 'admission-api',
      msg: error instanceof Error ? error.message : String(error),
    }),
  );
  process.exit(2);
});
await app.listen(config.port, config.host);
const scheme = config.tls ? 'https' : 'http';
const shown = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
logger.info({ url: `${scheme}://${shown}:${config.port}`, docs: `${scheme}://${shown}:${config.port}/docs` }, 'listening');
if (await listenUnauthenticatedWebhook(app, config)) {
  logger.warn(
    { url: `https://${shown}:${config.webhookUnauthenticatedPort}` },
    'the unauthenticated webhook listener is open: anyone who reaches it is the kube-apiserver (restrict it with a NetworkPolicy)',
  );
}

/**
 * A rollout that refuses nothing. On SIGTERM (or SIGINT) /readyz fails `[-]shutdown` at once
 * while every request is still served, for SHUTDOWN_DRAIN_SECONDS: long enough for load
 * balancers and the Service's endpoints to stop sending here (the Deployment's preStop sleep
 * covers the endpoints' own delay before the signal). Then it stops accepting, gives the
 * connections still open a moment to deliver their request (stopAccepting), and app.close() lets
 * the requests in flight finish and flushes the group commits in flight (LedgerShutdown), bounded
 * by SHUTDOWN_TIMEOUT_MS. A second signal ends the drain at once (a second Ctrl-C). Under the
 * zero-setup supervisor no load balancer follows /readyz: there is no drain.
 */
const shutdown = app.get(ShutdownState);
let endDrain: (() => void) | undefined;

async function stop(signal: string, drainMs: number): Promise<void> {
  if (shutdown.reason !== undefined) {
    endDrain?.();
    return;
  }
  shutdown.begin(signal);
  if (drainMs > 0) {
    logger.info({ signal, drainMs }, 'draining: /readyz fails [-]shutdown while requests are still served');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainMs);
      endDrain = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  logger.info({ signal }, 'closing: finishing the requests in flight');
  setTimeout(() => {
    logger.error({ timeoutMs: config.shutdownTimeoutMs }, `shutdown took longer than ${config.shutdownTimeoutMs} ms: exiting`);
    process.exit(1);
  }, config.shutdownTimeoutMs).unref();
  try {
    // Without a drain (Ctrl-C, the supervisor gone) nobody is still sending: no grace either.
    await stopAccepting(app.getHttpServer() as Server, drainMs > 0 ? CLOSE_GRACE_MS : 0);
    await app.close();
  } catch (error) {
    logger.error({ error: error instanceof Error ? error.message : String(error) }, 'shutdown failed');
    process.exit(1);
  }
  logger.info('stopped');
  process.exit(0);
}

const drainMs = process.send ? 0 : config.shutdownDrainSeconds * 1000;
process.on('SIGTERM', () => void stop('SIGTERM', drainMs));
process.on('SIGINT', () => void stop('SIGINT', drainMs));
// Under the zero-setup supervisor: when it dies (even by SIGKILL) the IPC channel closes and
// this process shuts down too, so a crashed run leaves no orphan holding the port (within
// ORPHAN_GRACE_MS: leaveWithSupervisor, above, also covers a supervisor gone during the start).
if (process.send) process.once('disconnect', () => void stop('supervisor gone', 0));
