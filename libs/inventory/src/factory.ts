import { createHttpInventory } from './http.js';
import type { InventorySource } from './inventory.js';
import { createKubernetesInventory } from './kubernetes.js';
import { createPostgresInventory } from './postgres.js';

/** The source as configured (INVENTORY_SOURCE and its variables). */
export type InventorySourceConfig =
  | { readonly source: 'none' }
  | { readonly source: 'kubernetes'; readonly kubeconfigPath?: string; readonly inCluster: boolean; readonly timeoutMs: number }
  | { readonly source: 'postgres'; readonly databaseUrl: string; readonly relation: string; readonly timeoutMs: number }
  | { readonly source: 'http'; readonly url: string; readonly token?: string; readonly timeoutMs: number };

/**
 * No inventory: the reconciler covers no resource, so it only releases REST reservations
 * whose TTL ran out. Nothing is committed, released as stale or adopted.
 */
export const NO_INVENTORY: InventorySource = {
  kind: 'none',
  covers: [],
  list: async (namespace) => ({ namespace, covers: [], objects: [] }),
  close: async () => undefined,
};

export function createInventorySource(config: InventorySourceConfig): InventorySource {
  switch (config.source) {
    case 'none':
      return NO_INVENTORY;
    case 'kubernetes':
      return createKubernetesInventory({ inCluster: config.inCluster, timeoutMs: config.timeoutMs, ...(config.kubeconfigPath ? { kubeconfigPath: config.kubeconfigPath } : {}) });
    case 'postgres':
      return createPostgresInventory({ url: config.databaseUrl, relation: config.relation, timeoutMs: config.timeoutMs });
    case 'http':
      return createHttpInventory({ url: config.url, timeoutMs: config.timeoutMs, ...(config.token ? { token: config.token } : {}) });
  }
}
