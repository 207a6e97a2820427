import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';

/**
 * quotactl as it is published: the one file `npm run build:quotactl` writes, copied alone into an
 * empty directory (no package.json, no node_modules) under the names kubectl looks for, run as
 * an executable against a real service.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLE = join(ROOT, 'dist/quotactl/kubectl-quota');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let dir: string;
let api: RunningApi;
let env: Record<string, string>;

/** Run as kubectl runs a plugin: the file itself, found on PATH, its shebang choosing node. Not spawnSync: the API answers from this process. */
function plugin(args: readonly string[], program = 'kubectl-quota', cwd = dir): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

beforeAll(async () => {
  // Always from the current sources: it takes a fraction of a second.
  const build = spawnSync(process.execPath, [join(ROOT, 'apps/quotactl/bundle.mjs')], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
  dir = mkdtempSync(join(tmpdir(), 'ql-kubectl-quota-'));
  copyFileSync(BUNDLE, join(dir, 'kubectl-quota'));
  symlinkSync('kubectl-quota', join(dir, 'kubectl_complete-quota'));
  symlinkSync('kubectl-quota', join(dir, 'quotactl'));
  api = await startApi({}, 'qlbundle');
  // The node running the tests first on PATH (CI runs them on Node 20 and on Node 24); nothing else of the project's.
  env = { PATH: [dir, dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter), HOME: dir, QUOTA_LEDGER_SERVER: api.base };
}, 60_000);

afterAll(async () => {
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the quotactl bundle', () => {
  it('needs nothing but Node: every require is a built-in module', () => {
    const requires = [...readFileSync(BUNDLE, 'utf8').matchAll(/\brequire\(["']([^"']+)["']\)/g)].map((m) => m[1] ?? '');
    expect(requires.length).toBeGreaterThan(0);
    expect(requires.filter((name) => !isBuiltin(name))).toEqual([]);
  });

  it('is an executable with a shebang that runs alone from an empty directory', async () => {
    expect(readFileSync(BUNDLE, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    expect(statSync(join(dir, 'kubectl-quota')).mode & 0o111).toBe(0o111);
    const help = await plugin(['--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('Commands:\n  apply');
    expect((await plugin(['version'])).stdout).toBe(`Client Version: v${VERSION}\n`);
    // Also when node is named explicitly, from elsewhere.
    const direct = await plugin([join(dir, 'kubectl-quota'), 'version', '-o', 'json'], process.execPath, tmpdir());
    expect(JSON.parse(direct.stdout)).toEqual({ clientVersion: { gitVersion: `v${VERSION}` } });
  });

  it('prints kind/name with -o name against the service, and takes reservation/ID back', async () => {
    writeFileSync(join(dir, 'quota.yaml'), 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: demo}\nspec: {hard: {pods: "2"}}\n');
    const apply = await plugin(['apply', '-f', 'quota.yaml', '-o', 'name']);
    expect(apply.status, apply.stderr).toBe(0);
    expect(apply.stdout).toBe('resourcequota/compute\n');
    expect((await plugin(['get', 'quota', '-n', 'demo', '-o', 'name'])).stdout).toBe('resourcequota/compute\n');

    const reserve = await plugin(['reserve', '-n', 'demo', '--kind', 'Pod', '--name', 'web-1', '--resources', 'pods=1', '-o', 'name']);
    expect(reserve.status, reserve.stderr).toBe(0);
    expect(reserve.stdout).toMatch(/^reservation\/[A-Za-z0-9._-]+\n$/);
    const commit = await plugin(['commit', '-n', 'demo', reserve.stdout.trim()]);
    expect(commit.status, commit.stderr).toBe(0);
    expect(commit.stdout).toBe(`${reserve.stdout.trim()} committed\n`);

    const describeOnly = await plugin(['describe', 'quota', '-n', 'demo', '-o', 'name']);
    expect(describeOnly.status).toBe(2);
  });

  it('completes as kubectl_complete-quota (what kubectl runs for `kubectl quota <TAB>`), as __complete does', async () => {
    const viaKubectl = await plugin(['get', 'quota', '-o', ''], 'kubectl_complete-quota');
    expect(viaKubectl.status, viaKubectl.stderr).toBe(0);
    expect(viaKubectl.stdout).toBe('table\njson\nyaml\nname\n:4\n');
    expect((await plugin(['__complete', 'get', 'quota', '-o', ''])).stdout).toBe(viaKubectl.stdout);
  });

  it('completes in bash through the script `completion bash` prints', async () => {
    const script = [
      'source <(quotactl completion bash)',
      // What bash sets before it calls the function for `quotactl get quota -o <TAB>` and the others.
      'try() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _quotactl_complete; echo "${COMPREPLY[*]}"; }',
      'try quotactl de',
      'try kubectl-quota get ""',
      'try quotactl get quota -o ""',
      'try quotactl apply -f quota.',
      'try quotactl reserve -n ""',
    ].join('\n');
    const bash = await plugin(['-c', script], 'bash');
    expect(bash.status, bash.stderr).toBe(0);
    expect(bash.stdout.split('\n')).toEqual(['describe decisions', 'quota limitrange clusterresourcequota hrq', 'table json yaml name', 'quota.yaml', '', '']);
  });
});
