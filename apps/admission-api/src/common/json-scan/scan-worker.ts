import type { FieldSelection } from '@quota/domain';
import { scanJson, type JsonLimits, type JsonScan } from './json-scan.js';

/** One large body to scan off the event loop (scan-pool.ts): its bytes (a copy), its limits and what to find in it. */
export interface ScanTask {
  readonly bytes: Uint8Array;
  readonly limits: JsonLimits;
  readonly selection?: FieldSelection;
}

/** The worker thread's task (piscina): the same scan the event loop does for a small body. */
export default function scan(task: ScanTask): JsonScan {
  return scanJson(Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength), task.limits, task.selection);
}
