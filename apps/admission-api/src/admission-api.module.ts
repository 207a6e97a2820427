import { type DynamicModule, Module } from '@nestjs/common';
import { ClusterResourceQuotasController } from './cluster-resource-quotas/cluster-resource-quotas.controller.js';
import { HierarchicalResourceQuotasController } from './hierarchical-resource-quotas/hierarchical-resource-quotas.controller.js';
import { NamespaceObjectsController } from './namespaces/namespace-objects.controller.js';
import { APP_GUARD } from '@nestjs/core';
import type { AppConfig } from '@quota/config';
import { AdmissionReviewController } from './admission-review/admission-review.controller.js';
import { AuditController } from './audit/audit.controller.js';
import { HistoryController } from './audit/history.controller.js';
import { AuthGuard } from './auth/auth.guard.js';
import { JsonBodyGuard } from './common/edge/body-guard.js';
import { Authenticator } from './auth/authenticator.js';
import { HealthController } from './health/health.controller.js';
import { ShutdownState } from './health/shutdown.js';
import { LimitRangesController } from './limit-ranges/limit-ranges.controller.js';
import { NamespacesController } from './namespaces/namespaces.controller.js';
import { JsonHygiene } from './common/edge/json-hygiene.js';
import { HeavyReads } from './common/edge/heavy-reads.js';
import { Metrics } from './observability/metrics.js';
import { MetricsWiring } from './observability/metrics-wiring.js';
import { ProjectionsController } from './projections/projections.controller.js';
import { ReconcileTrigger } from './reconcile/reconcile-trigger.js';
import { ReservationsController } from './reservations/reservations.controller.js';
import { WhatIfController } from './reservations/what-if.controller.js';
import { QueueController } from './reservations/queue.controller.js';
import { QueueSweeper } from './reservations/queue-watch.js';
import { QueueWatchers } from './reservations/queue-watchers.js';
import { WhoAmIController } from './auth/whoami.controller.js';
import { ResourceQuotasController } from './resource-quotas/resource-quotas.controller.js';
import { LedgerModule } from '@quota/ledger';
import { AppConfigModule } from './config/app-config.module.js';

@Module({})
export class AdmissionApiModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AdmissionApiModule,
      imports: [AppConfigModule.forRoot(config), LedgerModule.forRoot(config, 'api')],
      controllers: [
        HealthController,
        NamespaceObjectsController,
        ClusterResourceQuotasController,
        HierarchicalResourceQuotasController,
        AdmissionReviewController,
        ResourceQuotasController,
        LimitRangesController,
        ReservationsController,
        QueueController,
        AuditController,
        HistoryController,
        NamespacesController,
        ProjectionsController,
        WhatIfController,
        WhoAmIController,
      ],
      providers: [
        Metrics,
        ShutdownState,
        ReconcileTrigger,
        MetricsWiring,
        QueueWatchers,
        QueueSweeper,
        Authenticator,
        { provide: HeavyReads, useValue: new HeavyReads() },
        // Guards run in this order: who is calling first, then the query's hygiene (a 400), then
        // the body is read (only for a caller allowed to send it).
        AuthGuard,
        JsonHygiene,
        JsonBodyGuard,
        { provide: APP_GUARD, useExisting: AuthGuard },
        { provide: APP_GUARD, useExisting: JsonHygiene },
        { provide: APP_GUARD, useExisting: JsonBodyGuard },
      ],
    };
  }
}
