import { openDataSource } from './database/data-source.js';
import { buildLedgerParts, type LedgerParts } from './ledger-parts.js';
import { ledgerSettings, type LedgerConfig, type LedgerHooks, type LedgerRole } from './ledger-settings.js';

/** A ledger that owns its data source: `close` finishes the batches in flight, then closes the pool. */
export interface Ledger extends LedgerParts {
  readonly role: LedgerRole;
}

/**
 * The ledger of a process without Nest (a test, a bench, a one-shot tool): the same settings and
 * the same parts LedgerModule gives a Nest application, on a data source of its own.
 */
export async function createLedger(config: LedgerConfig, role: LedgerRole, hooks: LedgerHooks = {}): Promise<Ledger> {
  const settings = ledgerSettings(config, role, hooks);
  const dataSource = await openDataSource(settings.database);
  const parts = buildLedgerParts(dataSource, settings);
  return {
    ...parts,
    role,
    close: async () => {
      await parts.close();
      await dataSource.destroy();
    },
  };
}
