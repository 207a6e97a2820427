import { Inject, Injectable, Module, type DynamicModule, type InjectionToken, type ModuleMetadata, type OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditQueries } from './read/audit-queries.js';
import { buildDataSourceOptions, type DataSourceSettings } from './database/data-source.js';
import { ClusterQueries } from './read/cluster-queries.js';
import { ClusterWriter } from './write/cluster-writer.js';
import { DefinitionQueries } from './read/definition-queries.js';
import { LedgerClock } from './write/ledger-clock.js';
import { LedgerCommands } from './write/ledger-commands.js';
import type { LedgerOptions } from './ledger.types.js';
import { UsageProjection } from './projection/projection.js';
import { UsageQueries } from './read/usage-queries.js';
import { QueueQueries } from './read/queue-queries.js';
import { SharedUsageQueries } from './read/shared-usage-queries.js';
import { ReadPath, routedReads, type ReadPathOptions } from './database/read-path.js';

/** What a process configures the ledger with: its database, and the command side's limits. */
export interface LedgerSettings {
  readonly database: DataSourceSettings;
  readonly commands?: LedgerOptions;
  /** A hot standby of `database` for history reads (DATABASE_READ_URL), and how long a read waits for it to replay a position. */
  readonly reads?: { readonly database?: DataSourceSettings; readonly waitMs?: number; readonly log?: ReadPathOptions['log'] };
}

export interface LedgerModuleOptions extends Pick<ModuleMetadata, 'imports'> {
  readonly inject?: InjectionToken[];
  readonly useFactory: (...args: never[]) => LedgerSettings;
}

const LEDGER_SETTINGS = Symbol('LEDGER_SETTINGS');

/** Finishes the batches in flight before TypeORM's module destroys the data source (it shuts down after this module). */
@Injectable()
class LedgerShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(LedgerCommands) private readonly commands: LedgerCommands,
    @Inject(ClusterWriter) private readonly cluster: ClusterWriter,
    @Inject(ReadPath) private readonly reads: ReadPath,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.commands.close();
    await this.cluster.close();
    await this.reads.close();
  }
}

/**
 * The ledger for a Nest application: the one TypeORM DataSource (`TypeOrmModule.forRootAsync`,
 * built by buildDataSourceOptions), and on it the command side and the narrow query classes,
 * each injectable alone. Processes without Nest (the projection worker, the reconciler, the
 * migration) take the same options through `openDataSource`.
 */
@Module({})
export class LedgerModule {
  static forRootAsync(options: LedgerModuleOptions): DynamicModule {
    const inject = options.inject ?? [];
    const settings = (...args: unknown[]): LedgerSettings => options.useFactory(...(args as never[]));
    return {
      module: LedgerModule,
      global: true,
      imports: [
        ...(options.imports ?? []),
        TypeOrmModule.forRootAsync({
          ...(options.imports ? { imports: options.imports } : {}),
          inject,
          // A database that is not there at boot is a failed start (the caller exits and is
          // restarted), as before: no minute of silent retries inside Nest.
          useFactory: (...args: unknown[]) => ({ ...buildDataSourceOptions(settings(...args).database), retryAttempts: 1 }),
        }),
      ],
      providers: [
        { provide: LEDGER_SETTINGS, inject, useFactory: settings },
        { provide: LedgerCommands, inject: [DataSource, LEDGER_SETTINGS], useFactory: (ds: DataSource, s: LedgerSettings) => new LedgerCommands(ds, s.commands) },
        { provide: LedgerClock, inject: [DataSource, LEDGER_SETTINGS], useFactory: (ds: DataSource, s: LedgerSettings) => new LedgerClock(ds, s.commands?.clock) },
        {
          provide: ClusterWriter,
          inject: [DataSource, LEDGER_SETTINGS],
          useFactory: (ds: DataSource, s: LedgerSettings) =>
            new ClusterWriter(ds, {
              ...(s.commands?.clock ? { clock: s.commands.clock } : {}),
              ...(s.commands?.newId ? { newId: s.commands.newId } : {}),
              ...(s.commands?.sharedQuotaNamespacesMax ? { sharedQuotaNamespacesMax: s.commands.sharedQuotaNamespacesMax } : {}),
              ...(s.commands?.awaitFirstCount ? { awaitFirstCount: true } : {}),
              ...(s.commands?.queuePolicy ? { queuePolicy: s.commands.queuePolicy } : {}),
            }),
        },
        {
          provide: ReadPath,
          inject: [DataSource, LEDGER_SETTINGS],
          useFactory: (ds: DataSource, s: LedgerSettings) =>
            new ReadPath(ds, s.reads?.database ? ReadPath.replicaDataSource(s.reads.database) : undefined, {
              ...(s.reads?.waitMs === undefined ? {} : { waitMs: s.reads.waitMs }),
              ...(s.reads?.log ? { log: s.reads.log } : {}),
            }),
        },
        { provide: ClusterQueries, inject: [DataSource], useFactory: (ds: DataSource) => new ClusterQueries(ds) },
        // History goes to the standby when there is one (read-path.ts); usage now and definitions, which writes answer from, stay on the primary.
        { provide: UsageQueries, inject: [ReadPath], useFactory: (reads: ReadPath) => routedReads((ds) => new UsageQueries(ds), reads, ['usageAt', 'usageSeries', 'projectedUsage']) },
        { provide: SharedUsageQueries, inject: [ReadPath], useFactory: (reads: ReadPath) => routedReads((ds) => new SharedUsageQueries(ds), reads, ['usageAt', 'usageSeries']) },
        { provide: DefinitionQueries, inject: [ReadPath], useFactory: (reads: ReadPath) => routedReads((ds) => new DefinitionQueries(ds), reads, ['definitionHistory']) },
        {
          provide: AuditQueries,
          inject: [ReadPath],
          useFactory: (reads: ReadPath) =>
            routedReads((ds) => new AuditQueries(ds), reads, ['readEvents', 'listDecisions', 'getDecision', 'getReservation', 'listReservations', 'unsettledReservations', 'listNamespaces']),
        },
        // The queue is read from the heads, on the primary: a watcher must see the write that admitted it.
        { provide: QueueQueries, inject: [DataSource], useFactory: (ds: DataSource) => new QueueQueries(ds) },
        { provide: UsageProjection, inject: [DataSource], useFactory: (ds: DataSource) => new UsageProjection(ds) },
        LedgerShutdown,
      ],
      exports: [LedgerCommands, ClusterWriter, ClusterQueries, LedgerClock, UsageQueries, SharedUsageQueries, DefinitionQueries, AuditQueries, QueueQueries, UsageProjection, ReadPath],
    };
  }
}
