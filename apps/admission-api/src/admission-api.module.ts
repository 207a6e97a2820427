import { type DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { AdmissionReviewController } from './admission-review/admission-review.controller.js';
import { AuditController } from './audit/audit.controller.js';
import { HistoryController } from './audit/history.controller.js';
import { HealthController } from './health/health.controller.js';
import { LimitRangesController } from './limit-ranges/limit-ranges.controller.js';
import { ProjectionsController } from './projections/projections.controller.js';
import { ReconcileTrigger } from './reconcile/reconcile-trigger.js';
import { ReservationsController } from './reservations/reservations.controller.js';
import { ResourceQuotasController } from './resource-quotas/resource-quotas.controller.js';
import { APP_CONFIG, LedgerShutdown, ledgerProviders } from './ledger/ledger.provider.js';

@Module({})
export class AdmissionApiModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AdmissionApiModule,
      controllers: [HealthController, AdmissionReviewController, ResourceQuotasController, LimitRangesController, ReservationsController, AuditController, HistoryController, ProjectionsController],
      providers: [{ provide: APP_CONFIG, useValue: config }, ...ledgerProviders, LedgerShutdown, ReconcileTrigger],
    };
  }
}
