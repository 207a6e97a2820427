import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditQueries } from './read/audit-queries.js';
import { ClusterQueries } from './read/cluster-queries.js';
import { ClusterWriter } from './write/cluster-writer.js';
import { buildDataSourceOptions } from './database/data-source.js';
import { DefinitionQueries } from './read/definition-queries.js';
import { LedgerClock } from './write/ledger-clock.js';
import { LedgerCommands } from './write/ledger-commands.js';
import { buildLedgerParts, type LedgerParts } from './ledger-parts.js';
import { ledgerSettings, type LedgerConfig, type LedgerHooks, type LedgerRole, type LedgerSettings } from './ledger-settings.js';
import { UsageProjection } from './projection/projection.js';
import { QueueQueries } from './read/queue-queries.js';
import { ReadPath } from './database/read-path.js';
import { SharedUsageQueries } from './read/shared-usage-queries.js';
import { UsageQueries } from './read/usage-queries.js';

/** Every part of the ledger, for a provider that needs more than one class (the projection worker's runner). */
export const LEDGER_PARTS = Symbol('LEDGER_PARTS');

/** The classes a provider may inject alone, and where each is in LedgerParts. */
const INJECTABLE = [
  [LedgerCommands, 'commands'],
  [LedgerClock, 'clock'],
  [ClusterWriter, 'cluster'],
  [ReadPath, 'reads'],
  [ClusterQueries, 'clusterQueries'],
  [UsageQueries, 'usage'],
  [SharedUsageQueries, 'sharedUsage'],
  [DefinitionQueries, 'definitions'],
  [AuditQueries, 'audit'],
  [QueueQueries, 'queue'],
  [UsageProjection, 'projection'],
] as const satisfies readonly (readonly [abstract new (...args: never[]) => unknown, keyof LedgerParts])[];

/** Finishes the batches in flight before TypeORM's module destroys the data source (it shuts down after this module). */
@Injectable()
class LedgerShutdown implements OnApplicationShutdown {
  constructor(@Inject(LEDGER_PARTS) private readonly parts: LedgerParts) {}

  async onApplicationShutdown(): Promise<void> {
    await this.parts.close();
  }
}

/**
 * The ledger for a Nest application: the one TypeORM DataSource (`TypeOrmModule.forRootAsync`,
 * built by buildDataSourceOptions), and on it the parts buildLedgerParts makes from the
 * settings of ledgerSettings(config, role): the command side and the narrow query classes, each
 * injectable alone. Every app (the admission API, the projection worker, the reconciler)
 * imports it; a process without Nest calls createLedger, which builds the same parts.
 */
@Module({})
export class LedgerModule {
  static forRoot(config: LedgerConfig, role: LedgerRole, hooks: LedgerHooks = {}): DynamicModule {
    // Made when Nest builds the providers, not when the module is described: a module tree can
    // be read (its routes listed) without a database.
    let made: LedgerSettings | undefined;
    const settings = (): LedgerSettings => (made ??= ledgerSettings(config, role, hooks));
    return {
      module: LedgerModule,
      global: true,
      imports: [
        // A database that is not there at boot is a failed start (the caller exits and is
        // restarted): no minute of silent retries inside Nest.
        TypeOrmModule.forRootAsync({ useFactory: () => ({ ...buildDataSourceOptions(settings().database), retryAttempts: 1 }) }),
      ],
      providers: [
        { provide: LEDGER_PARTS, inject: [DataSource], useFactory: (dataSource: DataSource) => buildLedgerParts(dataSource, settings()) },
        ...INJECTABLE.map(([token, key]) => ({ provide: token, inject: [LEDGER_PARTS], useFactory: (parts: LedgerParts) => parts[key] })),
        LedgerShutdown,
      ],
      exports: [LEDGER_PARTS, ...INJECTABLE.map(([token]) => token)],
    };
  }
}
