import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { FieldSelection } from '@quota/domain';
import { Piscina } from 'piscina';
import { scanJson, type JsonLimits, type JsonScan } from './json-scan.js';
import type { ScanTask } from './scan-worker.js';

/**
 * Large bodies are scanned on worker threads (piscina), never on the event loop that answers
 * everyone else: scanning 2 MB of a pod's environment takes some milliseconds of CPU, and under a
 * burst of such reviews the small ones beside them waited behind every scan in turn. A body
 * reaches a thread as a copy (its bytes stay here, to read the selected values from), and what
 * comes back is where the selected values lie: small. One thread for every core but one (at
 * least one, at most four): the event loop keeps a core.
 *
 * The worker is the compiled scan-worker-entry.cjs beside this file (CommonJS: see there), which
 * imports scan-worker.js. Under a test runner that runs the
 * TypeScript sources, it is the build's (dist/), when there is one; with neither, bodies are
 * scanned here, as small ones are.
 */
export class ScanPool {
  private readonly pool: Piscina<ScanTask, JsonScan> | undefined;

  constructor() {
    const filename = workerFile();
    this.pool = filename
      ? new Piscina<ScanTask, JsonScan>({
          filename,
          minThreads: 1,
          maxThreads: Math.min(4, Math.max(1, availableParallelism() - 1)),
          idleTimeout: 60_000,
        })
      : undefined;
  }

  /** Whether scans run on worker threads (false: on the event loop). */
  get threaded(): boolean {
    return this.pool !== undefined;
  }

  scan(bytes: Buffer, limits: JsonLimits, selection: FieldSelection | undefined): Promise<JsonScan> {
    if (!this.pool) return Promise.resolve(scanJson(bytes, limits, selection));
    return this.pool.run({ bytes, limits, ...(selection ? { selection } : {}) });
  }

  async close(): Promise<void> {
    await this.pool?.close({ force: true });
  }
}

function workerFile(): string | undefined {
  const here = fileURLToPath(new URL('./scan-worker-entry.cjs', import.meta.url));
  if (existsSync(here)) return here;
  const built = here.replace(
    /\/apps\/admission-api\/src\/common\/json-scan\/scan-worker-entry\.cjs$/,
    '/dist/apps/admission-api/src/common/json-scan/scan-worker-entry.cjs',
  );
  return built !== here && existsSync(built) ? built : undefined;
}
