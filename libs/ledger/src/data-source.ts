import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations/index.js';
import { LedgerEventEntity } from './entities/ledger-event.entity.js';

export const ENTITIES = [LedgerEventEntity];

export interface DataSourceSettings {
  readonly url: string;
  /** Connections this process may hold. */
  readonly poolSize?: number;
  readonly applicationName?: string;
}

/**
 * The one place a TypeORM data source is described. Never `synchronize`: the schema comes
 * from migrations/, run once per deployment (not per replica).
 */
export function buildDataSourceOptions(settings: DataSourceSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: settings.applicationName ?? 'quota-ledger',
    extra: { max: settings.poolSize ?? 10 },
  };
}
