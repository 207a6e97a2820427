import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { LedgerModule } from '@quota/ledger';
import { ConfigModule, type Logger } from '@quota/ops';
import { ProjectionFollower, WORKER_LOGGER } from './projection-follower.js';

/**
 * The projection worker as a Nest application: the configuration, the ledger (LedgerModule, as
 * every app builds it), and the follower. `rebuild` is the one-shot replay: the ledger alone,
 * without the follower (main.ts runs it and exits).
 */
@Module({})
export class ProjectionWorkerModule {
  static forRoot(config: AppConfig, logger: Logger, mode: 'follow' | 'rebuild'): DynamicModule {
    const log = (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void => logger[level](fields, msg);
    return {
      module: ProjectionWorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        LedgerModule.forRoot(config, mode === 'rebuild' ? 'projection-rebuild' : 'projection-worker', { log }),
      ],
      providers: mode === 'rebuild' ? [] : [{ provide: WORKER_LOGGER, useValue: logger }, ProjectionFollower],
    };
  }
}
