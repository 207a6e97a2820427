export * from './inventory.js';
export * from './kinds.js';
export { createHttpInventory, type HttpInventoryOptions } from './http.js';
export { createKubernetesInventory, type KubernetesInventoryOptions } from './kubernetes.js';
export { createPostgresInventory, quoteRelation, type PostgresInventoryOptions } from './postgres.js';
export { createInventorySource, NO_INVENTORY, type InventorySourceConfig } from './factory.js';
