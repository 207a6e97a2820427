import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { referencePages } from '../../scripts/docs/generate.js';
import { ROOT } from '../../scripts/docs/sources.js';
import { ensureBuilt } from '../support/processes.js';

/**
 * The generated reference pages (docs/reference/) are what `npm run docs:generate` would write
 * now: the configuration from libs/config's table of variables, the metrics from the processes'
 * registries, the HTTP API from the OpenAPI document, quotactl from its own help, all as built in
 * dist/. A page that differs is stale: change the source, run `npm run docs:generate`, commit both.
 */

let pages: Record<string, string>;

beforeAll(async () => {
  ensureBuilt();
  pages = await referencePages();
}, 120_000);

describe('docs/reference/', () => {
  it('has the four generated pages', () => {
    expect(Object.keys(pages).sort()).toEqual([
      'docs/reference/cli.md',
      'docs/reference/configuration.md',
      'docs/reference/http-api.md',
      'docs/reference/metrics.md',
    ]);
  });

  it.each(['configuration', 'metrics', 'http-api', 'cli'])('reference/%s.md is not stale (npm run docs:generate)', (name) => {
    const path = `docs/reference/${name}.md`;
    expect(readFileSync(join(ROOT, path), 'utf8'), `${path} is stale: run npm run docs:generate and commit it`).toBe(pages[path]);
  });

  it('documents every variable, every series and every command', () => {
    for (const name of ['DATABASE_URL', 'METRICS_PORT', 'CUSTOM_RESOURCES', 'QUOTA_LEDGER_SERVER'])
      expect(pages['docs/reference/configuration.md']).toContain(`\`${name}\``);
    for (const name of [
      'quota_ledger_admission_duration_seconds',
      'quota_ledger_projection_lag_seconds',
      'quota_ledger_reconciler_queue_jobs',
      'process_cpu_seconds_total',
    ])
      expect(pages['docs/reference/metrics.md']).toContain(`\`${name}\``);
    expect(pages['docs/reference/http-api.md']).toContain('### POST `/v1/admission/validate`');
    expect(pages['docs/reference/cli.md']).toContain('## quotactl webhook-config');
  });
});
