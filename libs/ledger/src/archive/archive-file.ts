import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type pg from 'pg';
import { ident } from '../sql.js';

/**
 * The archive's files (ledger-archive.ts): a partition's rows written as NDJSON, a page at a
 * time, counted, hashed and fsynced; read back to check them before the detached table is dropped.
 */

/** Rows read per query while exporting (bounds memory, whatever the partition's size). */
const EXPORT_PAGE_ROWS = 5000;

/** One line of an archive: the audit export's EventView with the columns a restore needs besides. */
export interface ArchivedEvent {
  readonly position: string;
  readonly namespace: string;
  readonly version: number;
  readonly type: string;
  readonly schemaVersion: number;
  /** `recorded_at`, RFC 3339 with microseconds (the column's precision). */
  readonly time: string;
  readonly actor: string;
  readonly onBehalfOf?: string;
  readonly requestId?: string;
  readonly data: unknown;
  readonly transactionId: string;
}

export interface Exported {
  readonly events: number;
  readonly sha256: string;
  readonly firstPosition: string | null;
  readonly lastPosition: string | null;
}

interface ExportRow {
  readonly position: string;
  readonly namespace: string;
  readonly version: string;
  readonly type: string;
  readonly schema_version: number;
  readonly time: string;
  readonly actor: string;
  readonly on_behalf_of: string | null;
  readonly request_id: string | null;
  /** jsonb's own text: a number in it keeps every digit, which a JavaScript number would not. */
  readonly data: string;
  readonly transaction_id: string;
}

/** The partition's rows by position, a page at a time, into `file` (fsynced); its line count and SHA-256. */
export async function exportRows(client: pg.PoolClient, partition: string, file: string): Promise<Exported> {
  const handle = await open(file, 'w');
  const hash = createHash('sha256');
  let events = 0;
  let firstPosition: string | null = null;
  let after = '0';
  try {
    for (;;) {
      const { rows } = await client.query<ExportRow>(
        `SELECT position::text AS position, namespace, version::text AS version, type, schema_version,
                to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS time,
                actor, on_behalf_of, request_id, data::text AS data, transaction_id::text AS transaction_id
           FROM ${ident(partition)} AS e WHERE e.position > $1::bigint ORDER BY e.position LIMIT ${EXPORT_PAGE_ROWS}`,
        [after],
      );
      if (rows.length === 0) break;
      const chunk = rows.map((row) => `${archiveLine(row)}\n`).join('');
      hash.update(chunk);
      await handle.writeFile(chunk);
      events += rows.length;
      firstPosition ??= rows[0]?.position ?? null;
      after = rows[rows.length - 1]?.position ?? after;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { events, sha256: hash.digest('hex'), firstPosition, lastPosition: events > 0 ? after : null };
}

/** One ArchivedEvent as a line, `data` spliced in as the database wrote it. */
function archiveLine(row: ExportRow): string {
  const head: Omit<ArchivedEvent, 'data' | 'transactionId'> = {
    position: row.position,
    namespace: row.namespace,
    version: Number(row.version),
    type: row.type,
    schemaVersion: row.schema_version,
    time: row.time,
    actor: row.actor,
    ...(row.on_behalf_of === null ? {} : { onBehalfOf: row.on_behalf_of }),
    ...(row.request_id === null ? {} : { requestId: row.request_id }),
  };
  return `${JSON.stringify(head).slice(0, -1)},"data":${row.data},"transactionId":${JSON.stringify(row.transaction_id)}}`;
}

/** The file's line count and SHA-256, as exportRows recorded them. */
export async function readBack(file: string): Promise<{ lines: number; sha256: string }> {
  const hash = createHash('sha256');
  let lines = 0;
  const input = createReadStream(file);
  input.on('data', (chunk) => hash.update(chunk));
  for await (const _ of createInterface({ input, crlfDelay: Infinity })) lines++;
  return { lines, sha256: hash.digest('hex') };
}

/** The directory's entry for a renamed file reaches the disk too. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
