import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Ledger, UsageProjection } from '@quota/ledger';
import { ReconcileTrigger } from '../reconcile/reconcile-trigger.js';
import { Metrics } from './metrics.js';

/** Points the scrape-time gauges at the ledger, the projection's checkpoint and the queue. */
@Injectable()
export class MetricsWiring implements OnModuleInit {
  constructor(
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject(ReconcileTrigger) private readonly queue: ReconcileTrigger,
  ) {}

  onModuleInit(): void {
    const projection = new UsageProjection(this.ledger.connectionPool);
    this.metrics.attach({
      projectionLag: () => projection.lag(),
      queueDepth: () => this.queue.depth(),
      ledgerStats: () => this.ledger.stats,
    });
  }
}
