import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { LedgerModule } from '@quota/ledger';
import { ConfigModule } from '@quota/ops';
import { reconcileQueueBackend } from './reconcile-queue.provider.js';
import { RECONCILER_LOG, ReconcilerService, type ReconcilerLog } from './reconciler-service.js';

/**
 * The reconciler as a Nest application: the configuration, the ledger (LedgerModule, as every app
 * builds it: its syncs decide with the API's limits), the queue's backend, and the service.
 */
@Module({})
export class ReconcilerModule {
  static forRoot(config: AppConfig, log: ReconcilerLog): DynamicModule {
    return {
      module: ReconcilerModule,
      imports: [ConfigModule.forRoot(config), LedgerModule.forRoot(config, 'reconciler', { log })],
      providers: [{ provide: RECONCILER_LOG, useValue: log }, reconcileQueueBackend, ReconcilerService],
    };
  }
}
