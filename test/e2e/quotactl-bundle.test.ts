import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
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
function plugin(
  args: readonly string[],
  program = 'kubectl-quota',
  cwd = dir,
  extraEnv: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
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
    writeFileSync(
      join(dir, 'quota.yaml'),
      'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: demo}\nspec: {hard: {pods: "2"}}\n',
    );
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
    expect(bash.stdout.split('\n')).toEqual([
      'describe delete decisions',
      'quota limitrange clusterresourcequota hrq namespace',
      'table json yaml name',
      'quota.yaml',
      '',
      '',
    ]);
  });
});

describe('quotactl against the service: what a new user tripped over', () => {
  const ok = (result: { status: number | null; stdout: string; stderr: string }) => {
    expect(result.status, result.stderr).toBe(0);
    return result;
  };

  it('prints the Warning of a reserve no quota charges on stderr, as kubectl does, with the standard name; still admitted', async () => {
    writeFileSync(
      join(dir, 'typo.yaml'),
      'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: typo}\nspec: {hard: {pods: "2", requests.cpu: "1"}}\n',
    );
    ok(await plugin(['apply', '-f', 'typo.yaml']));
    const reserve = ok(await plugin(['reserve', '-n', 'typo', '--kind', 'Pod', '--name', 'web-1', '--resources', 'requests.cpus=1,pod=1']));
    expect(reserve.stdout).toMatch(/^[A-Za-z0-9._-]+\n$/);
    expect(reserve.stderr).toBe(
      [
        'Warning: pod: no quota covering namespace "typo" limits this resource, so nothing is charged for it (did you mean pods?)',
        'Warning: requests.cpus: no quota covering namespace "typo" limits this resource, so nothing is charged for it (did you mean requests.cpu?)',
        '',
      ].join('\n'),
    );
    // Spelled right: charged, and nothing to warn of.
    const right = ok(
      await plugin(['reserve', '-n', 'typo', '--kind', 'Pod', '--name', 'web-2', '--resources', 'requests.cpu=500m,pods=1', '--dry-run']),
    );
    expect(right.stderr).toBe('');
    expect(right.stdout).toBe('dry run: allowed, would charge pods=1, requests.cpu=500m\n');
  });

  it('deletes what apply made, by name and by -f, and says so as kubectl does', async () => {
    writeFileSync(
      join(dir, 'gone.yaml'),
      'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q1, namespace: gone}\nspec: {hard: {pods: "2"}}\n---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: gone}\nspec: {limits: [{type: Container, default: {cpu: 100m}}]}\n',
    );
    ok(await plugin(['apply', '-f', 'gone.yaml']));
    const byName = ok(await plugin(['delete', 'quota', 'q1', '-n', 'gone']));
    expect(byName.stdout).toBe('resourcequota "q1" deleted\n');
    const missing = await plugin(['delete', 'quota', 'q1', '-n', 'gone']);
    expect(missing.status).toBe(4);
    expect(missing.stderr).toBe('Error from server (NotFound): resourcequotas "q1" not found\n');
    ok(await plugin(['delete', 'quota', 'q1', '-n', 'gone', '--ignore-not-found']));
    const byFile = await plugin(['delete', '-f', 'gone.yaml', '-o', 'name']);
    // The quota is gone already: reported, and the limit range deleted all the same.
    expect(byFile.status).toBe(4);
    expect(byFile.stdout).toBe('limitrange/lr\n');
    expect((await plugin(['get', 'limits', '-n', 'gone'])).stderr).toBe('No resources found in gone namespace.\n');
    // A reservation's DELETE is its release.
    writeFileSync(
      join(dir, 'r.yaml'),
      'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: gone}\nspec: {hard: {pods: "2"}}\n',
    );
    ok(await plugin(['apply', '-f', 'r.yaml']));
    const id = ok(await plugin(['reserve', '-n', 'gone', '--kind', 'Pod', '--resources', 'pods=1'])).stdout.trim();
    expect(ok(await plugin(['delete', 'reservation', id, '-n', 'gone'])).stdout).toBe(`reservation/${id} released (cancelled)\n`);
  });

  it('lists across namespaces with -A, and the namespaces themselves', async () => {
    for (const ns of ['across-a', 'across-b']) {
      writeFileSync(
        join(dir, `${ns}.yaml`),
        `apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: ${ns}}\nspec: {hard: {pods: "4"}}\n`,
      );
      ok(await plugin(['apply', '-f', `${ns}.yaml`]));
    }
    const across = ok(await plugin(['get', 'quota', '-A']));
    expect(across.stdout.split('\n')[0]).toMatch(/^NAMESPACE +NAME +AGE +REQUEST +LIMIT$/);
    expect(across.stdout).toMatch(/^across-a +compute +\S+ +pods: 0\/4$/m);
    expect(across.stdout).toMatch(/^across-b +compute +\S+ +pods: 0\/4$/m);
    const namespaces = ok(await plugin(['get', 'namespaces']));
    expect(namespaces.stdout.split('\n')[0]).toMatch(/^NAME +QUOTAS +TIGHTEST$/);
    expect(namespaces.stdout).toMatch(/^across-a +1 +compute: pods 0\/4$/m);
    expect(ok(await plugin(['get', 'ns', 'across-b', '-o', 'name'])).stdout).toBe('namespace/across-b\n');
  });

  it('lists decisions newest first; --order oldest from the start', async () => {
    writeFileSync(
      join(dir, 'order.yaml'),
      'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: order}\nspec: {hard: {pods: "9"}}\n',
    );
    ok(await plugin(['apply', '-f', 'order.yaml']));
    for (const name of ['first', 'second', 'third'])
      ok(await plugin(['reserve', '-n', 'order', '--kind', 'Pod', '--name', name, '--resources', 'pods=1']));
    const names = (stdout: string) =>
      stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(/ +/)[4]);
    expect(names(ok(await plugin(['decisions', '-n', 'order'])).stdout)).toEqual(['third', 'second', 'first']);
    const page = ok(await plugin(['decisions', '-n', 'order', '--limit', '2']));
    expect(names(page.stdout)).toEqual(['third', 'second']);
    const after = /--after (\d+)/.exec(page.stderr)?.[1] ?? '';
    expect(names(ok(await plugin(['decisions', '-n', 'order', '--after', after])).stdout)).toEqual(['first']);
    expect(names(ok(await plugin(['decisions', '-n', 'order', '--order', 'oldest'])).stdout)).toEqual(['first', 'second', 'third']);
  });

  it("takes the kubeconfig context's namespace as the default -n, as kubectl does", async () => {
    writeFileSync(
      join(dir, 'ctx.yaml'),
      'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: from-context, namespace: ctx-ns}\nspec: {hard: {pods: "3"}}\n',
    );
    ok(await plugin(['apply', '-f', 'ctx.yaml']));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\ncurrent-context: team\ncontexts:\n- name: team\n  context: {cluster: c, user: u, namespace: ctx-ns}\n- name: other\n  context: {cluster: c, user: u}\n',
    );
    const viaEnv = ok(await plugin(['get', 'quota', '-o', 'name'], 'kubectl-quota', dir, { KUBECONFIG: kubeconfig }));
    expect(viaEnv.stdout).toBe('resourcequota/from-context\n');
    const viaFlag = ok(await plugin(['get', 'quota', '--kubeconfig', 'kubeconfig', '--context', 'other']));
    expect(viaFlag.stderr).toBe('No resources found in default namespace.\n');
    // ~/.kube/config where KUBECONFIG is not set.
    mkdirSync(join(dir, '.kube'), { recursive: true });
    copyFileSync(kubeconfig, join(dir, '.kube', 'config'));
    try {
      expect(ok(await plugin(['get', 'quota', '-o', 'name'])).stdout).toBe('resourcequota/from-context\n');
    } finally {
      rmSync(join(dir, '.kube'), { recursive: true, force: true });
    }
  });
});
