import 'reflect-metadata';
import { type INestApplication, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from '@quota/config';
import { AdmissionApiModule } from './admission-api.module.js';
import { KubeStatusFilter } from './errors/kube-status.filter.js';

const NEST_LOG_LEVELS: Record<AppConfig['logLevel'], LogLevel[]> = {
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  info: ['fatal', 'error', 'warn', 'log'],
  warn: ['fatal', 'error', 'warn'],
  error: ['fatal', 'error'],
};

/** Builds the HTTP application; main.ts and the e2e tests share it. */
export async function createAdmissionApi(config: AppConfig): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AdmissionApiModule.forRoot(config), {
    bodyParser: false,
    logger: NEST_LOG_LEVELS[config.logLevel],
  });
  app.useBodyParser('json', { limit: config.bodyLimitBytes, strict: true });
  app.useGlobalFilters(new KubeStatusFilter());
  app.enableShutdownHooks();
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  return app;
}
