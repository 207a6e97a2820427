import { createHttpInventory, type HttpInventoryOptions } from './http.js';
import type { InventorySource } from './inventory.js';
import { createKubernetesInventory, type KubernetesInventoryOptions } from './kubernetes.js';
import { createPostgresInventory, type PostgresInventoryOptions } from './postgres.js';

/**
 * The source as configured (INVENTORY_SOURCE and its variables; libs/config's
 * InventoryConfig is one of these). Postgres names its URL `databaseUrl`, as the variable
 * INVENTORY_DATABASE_URL does.
 */
export type InventorySourceConfig =
  | { readonly source: 'none' }
  | ({ readonly source: 'kubernetes' } & KubernetesInventoryOptions)
  | ({ readonly source: 'postgres'; readonly databaseUrl: string } & Omit<PostgresInventoryOptions, 'url'>)
  | ({ readonly source: 'http' } & HttpInventoryOptions);

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

/** The configured source; a configuration error throws here, at boot, not at the first listing. */
export function createInventorySource(config: InventorySourceConfig): InventorySource {
  switch (config.source) {
    case 'none':
      return NO_INVENTORY;
    case 'kubernetes': {
      const { source: _source, ...options } = config;
      return createKubernetesInventory(options);
    }
    case 'postgres': {
      const { source: _source, databaseUrl, ...options } = config;
      return createPostgresInventory({ ...options, url: databaseUrl });
    }
    case 'http': {
      const { source: _source, ...options } = config;
      return createHttpInventory(options);
    }
    default: {
      const unknown: never = config;
      throw new Error(`unknown inventory source ${JSON.stringify(unknown)}`);
    }
  }
}
