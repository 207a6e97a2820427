import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { AuditQueries, buildDataSourceOptions, Ledger } from '@quota/ledger';
import { DataSource } from 'typeorm';
import { Metrics } from '../observability/metrics.js';

/** Injection token of the typed configuration. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * The one data source and the ledger on it. The API never runs migrations (that is a
 * deployment step: `npm run migrate`), so a replica cannot race another over the schema.
 */
export const ledgerProviders: Provider[] = [
  {
    provide: DataSource,
    inject: [APP_CONFIG],
    useFactory: async (config: AppConfig): Promise<DataSource> => {
      if (!config.databaseUrl) throw new Error('DATABASE_URL is not set: the admission API needs a PostgreSQL database');
      const dataSource = new DataSource(
        buildDataSourceOptions({ url: config.databaseUrl, poolSize: config.databasePoolSize, applicationName: 'quota-ledger-api' }),
      );
      return dataSource.initialize();
    },
  },
  {
    provide: Ledger,
    inject: [DataSource, APP_CONFIG, Metrics],
    useFactory: (dataSource: DataSource, config: AppConfig, metrics: Metrics): Ledger =>
      new Ledger(dataSource, {
        batchSizeMax: config.admissionBatchMax,
        retryMax: config.admissionRetryMax,
        statementTimeoutMs: config.statementTimeoutMs,
        quotasPerNamespaceMax: config.quotasPerNamespaceMax,
        limitRangesPerNamespaceMax: config.limitRangesPerNamespaceMax,
        onCommitted: (commands) => metrics.committedBatch(commands),
      }),
  },
  { provide: AuditQueries, inject: [DataSource], useFactory: (dataSource: DataSource): AuditQueries => new AuditQueries(dataSource) },
];

/** Closes the ledger (finishing batches in flight) and then the pool, in that order. */
@Injectable()
export class LedgerShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject(DataSource) private readonly dataSource: DataSource,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.ledger.close();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
