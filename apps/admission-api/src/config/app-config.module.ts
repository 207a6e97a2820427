import { type DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '@quota/config';

/** Injection token of the typed configuration. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** The configuration, validated once at boot (libs/config), for every module of the API to inject. */
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: AppConfigModule, global: true, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
