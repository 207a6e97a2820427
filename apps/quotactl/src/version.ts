import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version in the project's package.json, found by walking up from this file: the compiled
 * CLI (dist/apps/quotactl/src) and the sources (apps/quotactl/src) sit at different depths.
 */
export async function packageVersion(from = dirname(fileURLToPath(import.meta.url))): Promise<string | undefined> {
  let dir = from;
  for (let depth = 0; depth < 8; depth++) {
    try {
      const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'quota-ledger' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // no package.json here (or not ours): keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}
