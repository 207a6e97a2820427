import { AuditQueries, DefinitionQueries, LedgerCommands, UsageQueries, type LedgerOptions } from '@quota/ledger';
import type { DataSource } from 'typeorm';

/**
 * The ledger as the tests drive it: the command side and the query classes the service injects
 * separately (LedgerModule), on one data source, under one name. Production code never holds
 * them together; tests that write and then read back keep reading as they always did.
 */
export class Ledger {
  readonly commands: LedgerCommands;
  readonly usageQueries: UsageQueries;
  readonly definitions: DefinitionQueries;
  readonly audit: AuditQueries;

  constructor(dataSource: DataSource, options: LedgerOptions = {}) {
    this.commands = new LedgerCommands(dataSource, options);
    this.usageQueries = new UsageQueries(dataSource);
    this.definitions = new DefinitionQueries(dataSource);
    this.audit = new AuditQueries(dataSource);
  }

  get stats(): LedgerCommands['stats'] {
    return this.commands.stats;
  }

  now = (): Promise<number> => this.commands.now();
  close = (): Promise<void> => this.commands.close();
  admit: LedgerCommands['admit'] = (command) => this.commands.admit(command);
  commit: LedgerCommands['commit'] = (...args) => this.commands.commit(...args);
  release: LedgerCommands['release'] = (...args) => this.commands.release(...args);
  reconcile: LedgerCommands['reconcile'] = (...args) => this.commands.reconcile(...args);
  putQuota: LedgerCommands['putQuota'] = (...args) => this.commands.putQuota(...args);
  deleteQuota: LedgerCommands['deleteQuota'] = (...args) => this.commands.deleteQuota(...args);
  putLimitRange: LedgerCommands['putLimitRange'] = (...args) => this.commands.putLimitRange(...args);
  deleteLimitRange: LedgerCommands['deleteLimitRange'] = (...args) => this.commands.deleteLimitRange(...args);
  usage: UsageQueries['usage'] = (namespace) => this.usageQueries.usage(namespace);
  usageAt: UsageQueries['usageAt'] = (...args) => this.usageQueries.usageAt(...args);
  usageSeries: UsageQueries['usageSeries'] = (...args) => this.usageQueries.usageSeries(...args);
  projectedUsage: UsageQueries['projectedUsage'] = (namespace) => this.usageQueries.projectedUsage(namespace);
  getQuota: DefinitionQueries['getQuota'] = (...args) => this.definitions.getQuota(...args);
  listQuotas: DefinitionQueries['listQuotas'] = (namespace) => this.definitions.listQuotas(namespace);
  getLimitRange: DefinitionQueries['getLimitRange'] = (...args) => this.definitions.getLimitRange(...args);
  namespaceExists: DefinitionQueries['namespaceExists'] = (namespace) => this.definitions.namespaceExists(namespace);
  namespaces: DefinitionQueries['namespaces'] = (page) => this.definitions.namespaces(page);
  getReservation: AuditQueries['getReservation'] = (...args) => this.audit.getReservation(...args);
  listDecisions: AuditQueries['listDecisions'] = (...args) => this.audit.listDecisions(...args);
  readEvents: AuditQueries['readEvents'] = (...args) => this.audit.readEvents(...args);
}
