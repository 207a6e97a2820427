import type { GroupResource } from '@quota/domain';
import pg from 'pg';
import { InventoryError, type Inventory, type InventorySource } from './inventory.js';
import { DEFAULT_RESOURCES, knownKindOf } from './kinds.js';
import { toInventoryObjects } from './objects.js';

export interface PostgresInventoryOptions {
  /** The platform's database. */
  readonly url: string;
  /** A table or view with columns (namespace, kind, name, uid, object jsonb): `name` or `schema.name`. */
  readonly relation: string;
  readonly resources?: readonly GroupResource[];
  readonly timeoutMs?: number;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** `schema.table` → a quoted identifier; anything else is a configuration error. */
export function quoteRelation(relation: string): string {
  const parts = relation.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p))) {
    throw new Error(`INVENTORY_RELATION "${relation}" must be a table or view name, optionally schema-qualified (letters, digits, _; e.g. platform.objects)`);
  }
  return parts.map((p) => pg.escapeIdentifier(p)).join('.');
}

/**
 * Lists objects from a table or view in the platform's own PostgreSQL: the platform keeps a
 * row per object (namespace, kind, name, uid, object). `kind` selects the rows; `object`
 * is the Kubernetes object as stored (its apiVersion decides the group).
 */
export function createPostgresInventory(options: PostgresInventoryOptions): InventorySource {
  const relation = quoteRelation(options.relation);
  const covers = options.resources ?? DEFAULT_RESOURCES;
  const kinds = covers.map((c) => knownKindOf(c)?.kind).filter((k): k is string => k !== undefined);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const pool = new pg.Pool({ connectionString: options.url, max: 2, statement_timeout: timeoutMs, connectionTimeoutMillis: timeoutMs, application_name: 'quota-ledger-inventory' });
  pool.on('error', () => undefined);
  return {
    kind: 'postgres',
    covers,
    async list(namespace: string): Promise<Inventory> {
      let rows: { uid: string; name: string; kind: string; object: unknown }[];
      try {
        ({ rows } = await pool.query(`SELECT uid, name, kind, object FROM ${relation} WHERE namespace = $1 AND kind = ANY($2::text[])`, [namespace, kinds]));
      } catch (error) {
        throw new InventoryError(`postgres: listing ${options.relation} for namespace ${namespace} failed: ${(error as Error).message}`, 'postgres', { cause: error });
      }
      // The row's columns are the platform's index; the object is what quota evaluates.
      const objects = rows.map((row) => {
        const object = (typeof row.object === 'object' && row.object !== null ? row.object : {}) as Record<string, unknown>;
        const metadata = (object['metadata'] ?? {}) as Record<string, unknown>;
        return { ...object, kind: object['kind'] ?? row.kind, metadata: { ...metadata, name: metadata['name'] ?? row.name, uid: metadata['uid'] ?? row.uid } };
      });
      return { namespace, covers, objects: toInventoryObjects('postgres', namespace, objects, covers) };
    },
    close: () => pool.end(),
  };
}
