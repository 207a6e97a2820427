import type { GroupResource } from '@quota/domain';
import pg from 'pg';
import { InventoryError, type Inventory, type InventorySource } from './inventory.js';
import { checkResources, groupOfApiVersion, kindsWith, type KnownKind } from './kinds.js';
import { callDeadline, DEFAULT_MAX_OBJECTS, DEFAULT_TIMEOUT_MS, messageOf, positiveInteger } from './limits.js';
import { isRecord, toInventoryObjects } from './objects.js';
import { quoteRelation } from './relation.js';

export interface PostgresInventoryOptions {
  /** The platform's database (not the ledger's). */
  readonly url: string;
  /**
   * A table or view, `name` or `schema.name`, with the columns
   * `namespace text, kind text, name text, uid text|uuid, object jsonb|json|text`.
   */
  readonly relation: string;
  /** What to list; default every well-known kind (DEFAULT_RESOURCES). */
  readonly resources?: readonly GroupResource[];
  /** Custom resources to map besides the known kinds (CUSTOM_RESOURCES); with no `resources`, they are covered too. */
  readonly customKinds?: readonly KnownKind[];
  /** Connecting plus the query, in milliseconds; also the session's statement_timeout. Default 10 s. */
  readonly timeoutMs?: number;
  /** Rows in one listing. Default 50,000. */
  readonly maxObjects?: number;
}

const SOURCE = 'postgres';

interface Row {
  readonly namespace: string;
  readonly kind: string;
  readonly name: string | null;
  readonly uid: string | null;
  readonly object: unknown;
}

/**
 * Lists objects from a table or view in the platform's own PostgreSQL, one row per object:
 * `SELECT namespace, kind, name, uid, object FROM <relation> WHERE namespace = $1` (only
 * the covered kinds are fetched). The `kind` column names the resource and the object's
 * apiVersion must be in that kind's group; `name` and `uid` fill the object's metadata when
 * it lacks them and must agree with it otherwise. A row that contradicts itself fails the
 * listing rather than be read as "absent".
 */
export function createPostgresInventory(options: PostgresInventoryOptions): InventorySource {
  const relation = quoteRelation(options.relation);
  const all = kindsWith(options.customKinds);
  const kinds = checkResources(SOURCE, options.resources ?? all.map((k) => k.groupResource), all);
  const covers = kinds.map((k) => k.groupResource);
  const timeoutMs = positiveInteger(SOURCE, 'timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
  const maxObjects = positiveInteger(SOURCE, 'maxObjects', options.maxObjects, DEFAULT_MAX_OBJECTS);
  // One more row than allowed tells "too many" from "exactly the limit".
  const sql = `SELECT namespace, kind, name, uid::text AS uid, object FROM ${relation} WHERE namespace = $1 AND kind = ANY($2::text[]) LIMIT ${maxObjects + 1}`;
  const kindNames = kinds.map((k) => k.kind);
  const pool = new pg.Pool({
    Client: InventoryClient,
    connectionString: options.url,
    max: 2,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: 'quota-ledger-inventory',
  });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  let closed: Promise<void> | undefined;

  return {
    kind: SOURCE,
    covers,
    async list(namespace: string, signal?: AbortSignal): Promise<Inventory> {
      const fail = (message: string, cause?: unknown) =>
        new InventoryError(
          `postgres: namespace ${namespace}: ${options.relation}: ${message}`,
          SOURCE,
          cause === undefined ? undefined : { cause },
        );
      const call = callDeadline(timeoutMs, signal);
      let rows: Row[];
      try {
        rows = await query<Row>(pool, sql, [namespace, kindNames], call.signal);
      } catch (error) {
        throw fail(call.why() ?? messageOf(error), error);
      }
      if (rows.length > maxObjects) throw fail(`more than the ${maxObjects} rows a listing may hold`);
      const objects = rows.map((row, index) => objectOfRow(row, index, kinds, fail));
      return { namespace, covers, objects: toInventoryObjects(SOURCE, namespace, objects, covers, maxObjects, all) };
    },
    close: () => (closed ??= pool.end()),
  };
}

/** The row's object, with the row's name and uid filled in, or a failure when the row contradicts itself. */
function objectOfRow(
  row: Row,
  index: number,
  kinds: readonly KnownKind[],
  fail: (message: string) => InventoryError,
): Record<string, unknown> {
  const where = `row ${row.kind} ${row.name ?? `#${index} (no name)`}`;
  let object = row.object;
  if (typeof object === 'string') {
    try {
      object = JSON.parse(object);
    } catch {
      throw fail(`${where}: the object column is not JSON`);
    }
  }
  if (!isRecord(object)) throw fail(`${where}: the object column holds no object`);
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  if (object['kind'] !== undefined && object['kind'] !== row.kind)
    throw fail(`${where}: the kind column says ${row.kind}, the object says ${String(object['kind'])}`);
  // The query fetched only covered kinds, so the row's kind is a known one.
  const known = kinds.find((k) => k.kind === row.kind);
  const apiVersion = object['apiVersion'] ?? known?.apiVersion;
  if (known && (typeof apiVersion !== 'string' || groupOfApiVersion(apiVersion) !== known.groupResource.group)) {
    throw fail(`${where}: apiVersion ${String(apiVersion)} is not in the ${known.groupResource.group || 'core'} group of ${known.kind}`);
  }
  for (const field of ['name', 'uid'] as const) {
    if (metadata[field] !== undefined && row[field] !== null && metadata[field] !== row[field]) {
      throw fail(`${where}: the ${field} column says ${row[field]}, metadata.${field} says ${String(metadata[field])}`);
    }
  }
  return {
    ...object,
    apiVersion,
    kind: row.kind,
    metadata: { ...metadata, name: metadata['name'] ?? row.name ?? undefined, uid: metadata['uid'] ?? row.uid ?? undefined },
  };
}

/**
 * A connection that always listens for its own errors. pg-pool listens only while a client is
 * idle: a session the platform's server ended mid-query (a restart, pg_terminate_backend) emitted
 * an 'error' nobody heard, which ends the reconciler. The error still fails the query, and the
 * pool drops the client on release (libs/ledger/src/database/pool-client.ts tells the same story).
 */
class InventoryClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

/**
 * One query on a pooled connection that `signal` can cut short. pg has no cancellation of
 * its own: an abandoned connection is destroyed rather than returned mid-protocol, and the
 * session's statement_timeout stops the server's side.
 */
async function query<T>(pool: pg.Pool, text: string, values: readonly unknown[], signal: AbortSignal): Promise<T[]> {
  const client = await abortable(pool.connect(), signal, (late) => late.release());
  let broken: Error | undefined;
  try {
    const result = await abortable(client.query(text, values as unknown[]), signal);
    return result.rows as T[];
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(broken);
  }
}

/** `promise`, or a rejection as soon as `signal` fires; a value that arrives too late goes to `late`. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal, late?: (value: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      promise.then(late, () => undefined);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
