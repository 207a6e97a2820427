import type { DataSource } from 'typeorm';
import { AuditQueries } from './read/audit-queries.js';
import { ClusterQueries } from './read/cluster-queries.js';
import { ClusterWriter } from './write/cluster-writer.js';
import type { LedgerSettings } from './ledger-settings.js';
import { DefinitionQueries } from './read/definition-queries.js';
import { LedgerClock } from './write/ledger-clock.js';
import { LedgerCommands } from './write/ledger-commands.js';
import { ProjectionRunner, type ProjectionRunnerOptions } from './projection/projection-runner.js';
import { UsageProjection } from './projection/projection.js';
import { QueueQueries } from './read/queue-queries.js';
import { ReadPath, routedReads } from './database/read-path.js';
import { SharedUsageQueries } from './read/shared-usage-queries.js';
import { UsageQueries } from './read/usage-queries.js';

/** The rooms of the ledger a process uses, all on one data source, built once from one LedgerSettings. */
export interface LedgerParts {
  readonly dataSource: DataSource;
  readonly commands: LedgerCommands;
  readonly clock: LedgerClock;
  readonly cluster: ClusterWriter;
  readonly reads: ReadPath;
  readonly clusterQueries: ClusterQueries;
  readonly usage: UsageQueries;
  readonly sharedUsage: SharedUsageQueries;
  readonly definitions: DefinitionQueries;
  readonly audit: AuditQueries;
  readonly queue: QueueQueries;
  readonly projection: UsageProjection;
  /** The projection's follower, paced as configured; the process's metrics and logs are its hooks. */
  projectionRunner(hooks?: Pick<ProjectionRunnerOptions, 'onApplied' | 'onError'>): ProjectionRunner;
  /** Finishes the batches in flight and closes the notifiers and the standby's pool (not `dataSource`, which its owner closes). */
  close(): Promise<void>;
}

const AUDIT_HISTORY = [
  'readEvents',
  'listDecisions',
  'getDecision',
  'getReservation',
  'listReservations',
  'unsettledReservations',
  'listNamespaces',
] as const;

/** The only place the ledger's classes are constructed for a process (an architecture test holds apps to it). */
export function buildLedgerParts(dataSource: DataSource, settings: LedgerSettings): LedgerParts {
  const commandOptions = settings.commands ?? {};
  const commands = new LedgerCommands(dataSource, commandOptions);
  const cluster = new ClusterWriter(dataSource, {
    ...(commandOptions.clock ? { clock: commandOptions.clock } : {}),
    ...(commandOptions.newId ? { newId: commandOptions.newId } : {}),
    ...(commandOptions.sharedQuotaNamespacesMax ? { sharedQuotaNamespacesMax: commandOptions.sharedQuotaNamespacesMax } : {}),
    ...(commandOptions.awaitFirstCount ? { awaitFirstCount: true } : {}),
    ...(commandOptions.queuePolicy ? { queuePolicy: commandOptions.queuePolicy } : {}),
  });
  const replica = settings.reads?.database ? ReadPath.replicaDataSource(settings.reads.database) : undefined;
  const reads = new ReadPath(dataSource, replica, {
    ...(settings.reads?.waitMs === undefined ? {} : { waitMs: settings.reads.waitMs }),
    ...(settings.reads?.log ? { log: settings.reads.log } : {}),
  });
  const { pollMs, stepMax, coalesceMs, onError, batchSize, snapshotEvery } = settings.projection ?? {};
  const projection = new UsageProjection(dataSource, {
    ...(batchSize ? { batchSize } : {}),
    ...(snapshotEvery ? { snapshotEvery } : {}),
    ...(onError ? { onError } : {}),
  });
  return {
    dataSource,
    commands,
    clock: new LedgerClock(dataSource, commandOptions.clock),
    cluster,
    reads,
    clusterQueries: new ClusterQueries(dataSource),
    // History goes to the standby when there is one (read-path.ts); usage now and definitions, which writes answer from, stay on the primary.
    usage: routedReads((ds) => new UsageQueries(ds), reads, ['usageAt', 'usageSeries', 'projectedUsage']),
    sharedUsage: routedReads((ds) => new SharedUsageQueries(ds), reads, ['usageAt', 'usageSeries']),
    definitions: routedReads((ds) => new DefinitionQueries(ds), reads, ['definitionHistory']),
    audit: routedReads((ds) => new AuditQueries(ds), reads, AUDIT_HISTORY),
    // The queue is read from the heads, on the primary: a watcher must see the write that admitted it.
    queue: new QueueQueries(dataSource),
    projection,
    projectionRunner: (hooks = {}) =>
      new ProjectionRunner(dataSource, projection, {
        pollMs: pollMs ?? 1000,
        ...(stepMax ? { stepMax } : {}),
        ...(coalesceMs === undefined ? {} : { coalesceMs }),
        ...hooks,
      }),
    close: async () => {
      await commands.close();
      await cluster.close();
      await reads.close();
    },
  };
}
