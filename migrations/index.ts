import { CreateLedgerEvents1795293483763 } from './1795293483763-CreateLedgerEvents.js';

/** Every migration, in order, as classes (no globs: bundlers and ESM both see them). */
export const MIGRATIONS = [CreateLedgerEvents1795293483763];
