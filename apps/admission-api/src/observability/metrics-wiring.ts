import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ClusterQueries, ClusterWriter, LedgerCommands, QueueQueries, ReadPath } from '@quota/ledger';
import { Metrics } from './metrics.js';

/** Points the scrape-time series at the ledger's and the read path's running totals, and the shared heads. */
@Injectable()
export class MetricsWiring implements OnModuleInit {
  constructor(
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(LedgerCommands) private readonly ledger: LedgerCommands,
    @Inject(ReadPath) private readonly reads: ReadPath,
    @Inject(ClusterQueries) private readonly cluster: ClusterQueries,
    @Inject(QueueQueries) private readonly queue: QueueQueries,
    @Inject(ClusterWriter) private readonly writer: ClusterWriter,
  ) {}

  onModuleInit(): void {
    this.ledger.onCommitted((commands) => this.metrics.committedBatch(commands));
    this.ledger.onDequeued((outcome, waitedMs) => this.metrics.dequeued(outcome, waitedMs));
    this.writer.onDequeued((outcome, waitedMs) => this.metrics.dequeued(outcome, waitedMs));
    this.metrics.attach({
      ledgerStats: () => this.ledger.stats,
      readStats: () => this.reads.stats,
      sharedQuotasOverHard: () => this.cluster.sharedQuotasOverHard(),
      queuedReservations: () => this.queue.total(),
    });
  }
}
