export * from './data-source.js';
export * from './entities/ledger-event.entity.js';
