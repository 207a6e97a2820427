export * from './inventory.js';
export {
  KNOWN_KINDS,
  DEFAULT_RESOURCES,
  FULL_OBJECT_RESOURCES,
  needsWholeObject,
  kindsWith,
  resourceOfKind,
  knownKindOf,
  groupOfApiVersion,
  sameResource,
  formatResource,
  type KnownKind,
} from './kinds.js';
export { DEFAULT_TIMEOUT_MS, DEFAULT_MAX_OBJECTS, DEFAULT_MAX_BYTES } from './limits.js';
export { quoteRelation } from './relation.js';
export {
  createKubernetesInventory,
  DEFAULT_PAGE_SIZE,
  DEFAULT_DISCOVERY_TTL_MS,
  METADATA_ACCEPT,
  type KubernetesInventoryOptions,
} from './kubernetes.js';
export { createPostgresInventory, type PostgresInventoryOptions } from './postgres.js';
export { createHttpInventory, type HttpInventoryOptions } from './http.js';
export { createInventorySource, NO_INVENTORY, type InventorySourceConfig } from './factory.js';
export { runWatchLoop, WatchGone, type WatchEvent, type WatchTransport, type WatchLoopOptions } from './watch.js';
export { settleSignalOf, kubeTransport, collectionTransport, type KubeWatchContext } from './kube-watch.js';
