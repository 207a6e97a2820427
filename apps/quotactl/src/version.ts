import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Set by the bundler (bundle.mjs) to package.json's version: the single file has no package.json beside it. */
declare const __QUOTACTL_VERSION__: string | undefined;

/**
 * quotactl's version: the bundle's, else the one in the project's package.json, found by walking
 * up from this file (the compiled CLI, dist/apps/quotactl/src, and the sources, apps/quotactl/src,
 * sit at different depths).
 */
export async function packageVersion(from?: string): Promise<string | undefined> {
  if (from === undefined && typeof __QUOTACTL_VERSION__ === 'string') return __QUOTACTL_VERSION__;
  let dir = from ?? dirname(fileURLToPath(import.meta.url));
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
