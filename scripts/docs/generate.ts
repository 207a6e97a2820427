import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cliPage } from './cli-page.js';
import { configurationPage } from './config-page.js';
import { httpApiPage, type OpenApi } from './http-api-page.js';
import { metricsPage } from './metrics-page.js';
import { configuration, metricsByProcess, openApiDocument, quotactlHelp, ROOT } from './sources.js';

/** docs/reference/*.md, each generated from what the code itself declares. */
export async function referencePages(): Promise<Record<string, string>> {
  const { VARIABLES, VARIABLE_GROUPS } = await configuration();
  return {
    'docs/reference/configuration.md': configurationPage(VARIABLES, VARIABLE_GROUPS),
    'docs/reference/metrics.md': metricsPage(await metricsByProcess()),
    'docs/reference/http-api.md': httpApiPage((await openApiDocument()) as unknown as OpenApi),
    'docs/reference/cli.md': cliPage(await quotactlHelp()),
  };
}

/** The pages whose file differs from what would be generated now. */
export async function stalePages(): Promise<string[]> {
  const stale: string[] = [];
  for (const [path, text] of Object.entries(await referencePages())) {
    let current = '';
    try {
      current = readFileSync(join(ROOT, path), 'utf8');
    } catch {
      // missing: stale
    }
    if (current !== text) stale.push(path);
  }
  return stale;
}

/** `npm run docs:generate` writes the pages; `-- --check` only says which are stale (exit 1). */
async function main(): Promise<void> {
  if (process.argv.includes('--check')) {
    const stale = await stalePages();
    for (const path of stale) console.error(`${path} is stale: run npm run docs:generate`);
    process.exit(stale.length > 0 ? 1 : 0);
  }
  for (const [path, text] of Object.entries(await referencePages())) {
    mkdirSync(dirname(join(ROOT, path)), { recursive: true });
    writeFileSync(join(ROOT, path), text);
    console.log(`wrote ${path}`);
  }
  // The registries' default metrics keep timers: nothing else is left to do.
  process.exit(0);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
