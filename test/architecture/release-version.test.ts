import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/deploy.js';

// One version (package.json's) for the lockfile, the API, the image tags of deploy/kubernetes,
// the Helm chart and the krew manifest, with a CHANGELOG.md section: scripts/release/version.mjs.

const SCRIPT = join(ROOT, 'scripts/release/version.mjs');
const WORK = mkdtempSync(join(tmpdir(), 'ql-version-'));
afterAll(() => rmSync(WORK, { recursive: true, force: true }));
const FILES = ['package.json', 'package-lock.json', 'apps/admission-api/src/app.ts', 'deploy', 'plugins', 'CHANGELOG.md'];

function copy(name: string): string {
  const root = join(WORK, name);
  for (const file of FILES) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    cpSync(join(ROOT, file), join(root, file), { recursive: true });
  }
  return root;
}

const run = (...args: string[]) => spawnSync('node', [SCRIPT, ...args], { encoding: 'utf8' });

describe('scripts/release/version.mjs', () => {
  it('finds every place agreeing with package.json in the repository', () => {
    const result = run('--check');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('names each place that disagrees', () => {
    const root = copy('drift');
    const chart = join(root, 'deploy/helm/quota-ledger/Chart.yaml');
    writeFileSync(chart, readFileSync(chart, 'utf8').replace(/^appVersion: ".*"$/m, 'appVersion: "9.9.9"'));
    const api = join(root, 'deploy/kubernetes/base/api.yaml');
    writeFileSync(api, readFileSync(api, 'utf8').replace('image: quota-ledger:', 'image: quota-ledger:9.9.9-'));
    const result = run('--check', '--root', root);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/deploy\/helm\/quota-ledger\/Chart\.yaml: 9\.9\.9, not \d/);
    expect(result.stderr).toMatch(/deploy\/kubernetes\/base\/api\.yaml: 9\.9\.9-\S+ \/ \S+, not/);
  });

  it('--set writes the version everywhere (the chart copies too), and wants a CHANGELOG section for it', () => {
    const root = copy('set');
    const first = run('--set', '0.2.0', '--root', root);
    expect(first.status).toBe(1);
    expect(first.stderr).toContain('CHANGELOG.md: no section "## [0.2.0]"');
    appendFileSync(join(root, 'CHANGELOG.md'), '\n## [0.2.0]\n');
    expect(run('--check', '--root', root).status).toBe(0);
    expect(readFileSync(join(root, 'deploy/helm/quota-ledger/files/base/reconciler.yaml'), 'utf8')).toContain('image: quota-ledger:0.2.0');
    expect(readFileSync(join(root, 'plugins/krew/quota.yaml'), 'utf8')).toMatch(
      / {2}version: v0\.2\.0\n[^]*\/v0\.2\.0\/kubectl-quota\.tar\.gz/,
    );
    expect(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages[''].version).toBe('0.2.0');
    expect(run('--set', 'two', '--root', root).stderr).toContain('not a semantic version');
  });
});
