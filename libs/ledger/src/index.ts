export * from './data-source.js';
export * from './entities/ledger-event.entity.js';
export * from './ledger.types.js';
export * from './ledger-error.js';
export * from './ledger.js';
export * from './projection.js';
export * from './projection-runner.js';
export * from './audit-queries.js';
export { isConnectionError } from './postgres-errors.js';
