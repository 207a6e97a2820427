import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { LedgerCommands, ReadPath, UsageProjection } from '@quota/ledger';
import { ReconcileTrigger } from '../reconcile/reconcile-trigger.js';
import { Metrics } from './metrics.js';

/** Points the scrape-time gauges at the ledger, the projection's checkpoint and the queue. */
@Injectable()
export class MetricsWiring implements OnModuleInit {
  constructor(
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(LedgerCommands) private readonly ledger: LedgerCommands,
    @Inject(UsageProjection) private readonly projection: UsageProjection,
    @Inject(ReconcileTrigger) private readonly queue: ReconcileTrigger,
    @Inject(ReadPath) private readonly reads: ReadPath,
  ) {}

  onModuleInit(): void {
    this.ledger.onCommitted((commands) => this.metrics.committedBatch(commands));
    this.metrics.attach({
      projectionLag: () => this.projection.lag(),
      queueDepth: () => this.queue.depth(),
      ledgerStats: () => this.ledger.stats,
      readStats: () => this.reads.stats,
    });
  }
}
