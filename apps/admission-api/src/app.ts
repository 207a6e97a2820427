import 'reflect-metadata';
import { type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from '@quota/config';
import { AdmissionApiModule } from './admission-api.module.js';
import { KubeStatusFilter } from './errors/kube-status.filter.js';

/** Builds the HTTP application; main.ts and the e2e tests share it. */
export async function createAdmissionApi(config: AppConfig): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AdmissionApiModule, {
    bodyParser: false,
    logger: config.logLevel === 'debug' ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn', 'log'],
  });
  app.useBodyParser('json', { limit: config.bodyLimitBytes, strict: true });
  app.useGlobalFilters(new KubeStatusFilter());
  app.enableShutdownHooks();
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  return app;
}
