import { type DynamicModule, Module } from '@nestjs/common';

/** Injection token of the typed configuration (libs/config's AppConfig, loaded once at boot). */
export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * The configuration for every module of an app to inject, given once at boot. Every app (the
 * admission API, the projection worker, the reconciler) imports it; it takes the configuration
 * it is given (ops imports no lib, so loading stays libs/config's).
 */
@Module({})
export class ConfigModule {
  static forRoot(config: object): DynamicModule {
    return { module: ConfigModule, global: true, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
