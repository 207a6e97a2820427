import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/processes.js';

/**
 * The README's quick start, as a new user runs it: a clean copy of the repository in a
 * temporary directory, DATABASE_URL and REDIS_URL unset, `npm install && npm start`. The
 * service must answer /readyz within 90 s, take an admission through the CLI, stop cleanly on
 * Ctrl-C (SIGINT to the whole process group, as a terminal sends it), and start again after a
 * run that was SIGKILLed.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const READY_WITHIN_MS = 90_000;

let dir: string;
let port: number;
let env: Record<string, string>;
let run: ChildProcess | undefined;
let output = '';

function copyRepository(to: string): void {
  // Tracked files plus new ones not ignored: what a clone of this work would hold.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT }).toString().split('\0').filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    try {
      copyFileSync(join(ROOT, file), join(to, file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // deleted in the work tree, not yet in the index
    }
  }
}

function start(command: string): ChildProcess {
  output = '';
  const child = spawn('sh', ['-c', command], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return child;
}

async function waitReady(child: ChildProcess, withinMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the start command exited with ${child.exitCode}:\n${output.slice(-4000)}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false);
    if (ok) return Date.now() - started;
    if (Date.now() - started > withinMs) throw new Error(`/readyz did not answer 200 within ${withinMs} ms:\n${output.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve({ code: child.exitCode, signal: child.signalCode }) : child.once('exit', (code, signal) => resolve({ code, signal })),
  );
}

function quotactl(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [join(dir, 'dist/apps/quotactl/src/main.js'), '--server', `http://127.0.0.1:${port}`, ...args], { cwd: dir, env, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const postgresOf = (d: string): string => spawnSync('pgrep', ['-f', `${d}/.quota-ledger/postgres`], { encoding: 'utf8' }).stdout.trim();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ql-clone-'));
  chmodSync(dir, 0o755); // as root, the embedded PostgreSQL runs as "postgres", which must enter the directory
  copyRepository(dir);
  port = await freePort();
  env = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && name !== 'DATABASE_URL' && name !== 'REDIS_URL') env[name] = value;
  Object.assign(env, { PORT: String(port), EMBEDDED_POSTGRES_PORT: String(await freePort()), LOG_LEVEL: 'warn' });
}, 30_000);

afterAll(async () => {
  if (run && run.exitCode === null && run.pid) {
    process.kill(-run.pid, 'SIGINT');
    await exited(run);
  }
  const leftover = postgresOf(dir);
  if (leftover) for (const pid of leftover.split('\n')) process.kill(Number(pid), 'SIGINT');
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('zero-setup start from a clean copy (DATABASE_URL and REDIS_URL unset)', () => {
  it('answers /readyz within 90 s of `npm install && npm start`', async () => {
    run = start('npm install --no-audit --no-fund && npm start');
    const ms = await waitReady(run, READY_WITHIN_MS);
    console.log(`zero-setup: /readyz 200 after ${ms} ms (npm install + build + embedded PostgreSQL init + migrations)`);
    expect(output).toMatch(/token {6}[0-9a-f]{64}/);
    expect(output).toContain(`http://127.0.0.1:${port}/docs`);
  }, READY_WITHIN_MS + 30_000);

  it('admits through the CLI with the printed development token', () => {
    writeFileSync(
      join(dir, 'quota.yaml'),
      'apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: compute\n  namespace: demo\nspec:\n  hard:\n    pods: "1"\n    requests.cpu: "1"\n',
    );
    const apply = quotactl('apply', '-f', 'quota.yaml');
    expect(apply.status, apply.stderr).toBe(0);
    expect(apply.stdout).toContain('resourcequota/compute created');
    const first = quotactl('reserve', '-n', 'demo', '--kind', 'Pod', '--name', 'web-1', '--resources', 'pods=1,requests.cpu=500m');
    expect(first.status, first.stderr).toBe(0);
    const second = quotactl('reserve', '-n', 'demo', '--kind', 'Pod', '--name', 'web-2', '--resources', 'pods=1,requests.cpu=500m');
    expect(second.status).toBe(3);
    expect(second.stderr).toContain('exceeded quota: compute');
    const describeQuota = quotactl('describe', 'quota', 'compute', '-n', 'demo');
    expect(describeQuota.status, describeQuota.stderr).toBe(0);
    expect(describeQuota.stdout).toMatch(/^pods\s+1\s+1$/m);
    expect(describeQuota.stdout).toMatch(/^requests\.cpu\s+500m\s+1$/m);
    // Without the token the service refuses the CLI: tokens are enforced even here.
    const anonymous = spawnSync(process.execPath, [join(dir, 'dist/apps/quotactl/src/main.js'), '--server', `http://127.0.0.1:${port}`, 'get', 'quota', '-n', 'demo'], { cwd: tmpdir(), env, encoding: 'utf8' });
    expect(anonymous.status).toBe(5);
  });

  it('stops everything on Ctrl-C, PostgreSQL last, without an error', async () => {
    process.kill(-run!.pid!, 'SIGINT');
    // The shell that ran `npm install && npm start` dies of the SIGINT itself, as in a terminal; what matters is below.
    const { code, signal } = await exited(run!);
    expect(code === 0 || signal === 'SIGINT', `exit ${code} ${signal}`).toBe(true);
    expect(output).not.toMatch(/"level":"(error|fatal)"/);
    expect(postgresOf(dir)).toBe('');
    expect(readFileSync(join(dir, '.quota-ledger/postgres.log'), 'utf8')).toContain('database system is shut down');
  }, 60_000);

  it('starts again after a run that was SIGKILLed, with the data of the first run', async () => {
    const killed = start('exec node dist/apps/standalone/src/main.js');
    await waitReady(killed, READY_WITHIN_MS);
    // Only the supervisor dies: its children follow (IPC closed), PostgreSQL is left behind.
    killed.kill('SIGKILL');
    await exited(killed);
    run = start('exec node dist/apps/standalone/src/main.js');
    await waitReady(run, READY_WITHIN_MS);
    expect(output).toContain('left running by an earlier run');
    const usage = quotactl('usage', '-n', 'demo', '-o', 'json');
    expect(usage.status, usage.stderr).toBe(0);
    expect(JSON.parse(usage.stdout).quotas[0].used).toMatchObject({ pods: '1' });
  }, 2 * READY_WITHIN_MS);
});
