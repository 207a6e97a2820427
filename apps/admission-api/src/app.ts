import 'reflect-metadata';
import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { readAfterContext } from './common/ledger/read-after.js';
import { type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express, RequestHandler } from 'express';
import { DataSource } from 'typeorm';
import type { AppConfig } from '@quota/config';
import { checkSynchronousStandby } from '@quota/ledger';
import type { Logger } from '@quota/ops';
import { AdmissionApiModule } from './admission-api.module.js';
import { Authenticator } from './auth/authenticator.js';
import { answerContinueWhenRead } from './common/edge/expect-continue.js';
import { applyTimeouts } from './common/edge/timeouts.js';
import { rateLimit } from './common/rate-limit/rate-limit.js';
import { httpsOptions, reloadOnChange } from './common/tls/tls.js';
import { serveDashboard } from './dashboard.js';
import { serveDocs } from './docs.js';
import { KubeStatusFilter } from './errors/kube-status.filter.js';
import { closeConnectionsWhenShuttingDown, endUnusedConnectionsOnClose, ShutdownState } from './health/shutdown.js';
import { timeAdmissions } from './observability/admission-timing.js';
import { createLogger, NestPinoLogger, requestContext } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';

export const API_VERSION = '0.1.0';

export interface AdmissionApiOptions {
  /** Where JSON log lines go (default stdout); tests pass a stream to read them. */
  readonly logDestination?: NodeJS.WritableStream;
}

/** DATABASE_REQUIRE_SYNCHRONOUS_STANDBY: the boot error that says what the database lacks. */
async function requireSynchronousStandby(app: INestApplication): Promise<void> {
  try {
    await checkSynchronousStandby(app.get(DataSource));
  } catch (error) {
    await app.close().catch(() => undefined);
    throw new Error(`DATABASE_REQUIRE_SYNCHRONOUS_STANDBY=true, but ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

/** Builds the HTTP application; main.ts and the e2e tests share it. */
/** Longer than kube-apiserver's webhook client keeps an idle connection (90 s): the client, not us, closes it. */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;

/** Every answer is what its Content-Type says (a Status that echoes a query value is JSON, never a page to render). */
const noSniffing: RequestHandler = (_request, response, next) => {
  response.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};

export async function createAdmissionApi(config: AppConfig, options: AdmissionApiOptions = {}): Promise<INestApplication> {
  const logger: Logger = createLogger(config.logLevel, 'admission-api', options.logDestination);
  const app = await NestFactory.create<NestExpressApplication>(AdmissionApiModule.forRoot(config), {
    bodyParser: false,
    // A configuration mistake is thrown to the caller (main.ts prints it and exits 2) instead of Nest exiting the process.
    abortOnError: false,
    logger: new NestPinoLogger(logger),
    ...(config.tls ? { httpsOptions: httpsOptions(config.tls) } : {}),
  });
  if (config.requireSynchronousStandby) await requireSynchronousStandby(app);
  // Order matters: the admissions' clock first, so that every answer is timed, those sent
  // before any handler runs too (401, 413, 429); the request id next (every later line and
  // error carries it); then the rate limit, by authenticated principal. No body is parsed
  // here: the handlers that take one read it after their guard (common/edge/json-body.ts).
  const authenticator = app.get(Authenticator);
  const everyRequest: RequestHandler[] = [
    timeAdmissions(app.get(Metrics)),
    noSniffing,
    requestContext(logger),
    closeConnectionsWhenShuttingDown(app.get(ShutdownState)),
    // Read-your-writes for history reads that may go to the read replica (DATABASE_READ_URL).
    readAfterContext(),
    rateLimit({
      perSecond: config.rateLimitPerSecond,
      burst: config.rateLimitBurst,
      unauthenticatedWebhook: config.webhookUnauthenticatedRate,
      // Headers and the TLS session only: who it is is settled before any body is read.
      principalOf: (request) => authenticator.identify(request),
    }),
  ];
  // Express middleware, before Nest's router; the guards (auth, query hygiene, the body read)
  // are Nest's APP_GUARDs, in AdmissionApiModule's order.
  for (const handler of everyRequest) app.use(handler);
  app.useGlobalFilters(new KubeStatusFilter());
  const express = app.getHttpAdapter().getInstance() as Express;
  // A client that waits for `100 Continue` gets it when its body is read, never before its guard.
  answerContinueWhenRead(app.getHttpServer() as Server, express);
  // No enableShutdownHooks(): main.ts owns the signals, to drain before app.close() (which
  // runs the same hooks) and to exit 0 once closed.
  express.disable('x-powered-by');
  // No ETag on JSON answers: nothing asks for one (no client sends If-None-Match), and the
  // webhook's answers have carried none since they were first served around Express. The
  // dashboard's static files keep theirs (express.static has its own).
  express.set('etag', false);
  serveDocs(app, API_VERSION);
  serveDashboard(app);

  const server = app.getHttpServer() as Server;
  // Slow clients cannot hold a connection open: whole request within the timeout, headers sooner.
  applyTimeouts(server, config);
  // An idle keep-alive connection stays open longer than kube-apiserver keeps one for its next
  // review (Go's default transport: 90 s). With Node's 5 s, the server closed connections the
  // apiserver was sending a review on at that moment: 'failed calling webhook … connection reset
  // by peer', a refused write under failurePolicy Fail.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  endUnusedConnectionsOnClose(server);
  if (config.tls) {
    const stop = reloadOnChange(server as unknown as HttpsServer, config.tls, (level, message) => logger[level](message));
    server.once('close', stop);
  }
  if (!config.tokensFile && config.insecureDev) {
    logger.warn('QUOTA_LEDGER_INSECURE_DEV=true and no TOKENS_FILE: EVERY CALLER IS AN ADMIN. Development only; never expose this port.');
  }
  return app;
}
