import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/processes.js';

/**
 * The README's quick start, as a new user runs it: a clean copy of the repository in a
 * temporary directory under a private one (mode 700, as Debian's /root: as root, the embedded
 * PostgreSQL runs as "postgres", which cannot enter it), DATABASE_URL and REDIS_URL unset,
 * `npm install && npm start`. The service must answer /readyz (the time is printed: on an idle
 * machine ~70 s, most of it npm install and the build; the bounds below are for a loaded one), take an admission
 * through the CLI, stop cleanly on Ctrl-C (SIGINT to the whole process group, as a terminal
 * sends it), leave no process behind when its supervisor is SIGKILLed, whatever state the
 * database is in, and start again after such a run with the data of the first.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** npm install, the whole build, initdb and the migrations: a bound for a machine at load 8, not a goal. */
const INSTALLED_AND_READY_WITHIN_MS = 300_000;
/** A start of what is built, on the database a first start made. */
const READY_WITHIN_MS = 90_000;
/** The apps leave within ORPHAN_GRACE_MS (5 s) of their supervisor's death; the margin is for a loaded machine. */
const APPS_GONE_WITHIN_MS = 15_000;
/** The watchdog stops PostgreSQL 6 s after the supervisor's death. */
const POSTGRES_GONE_WITHIN_MS = 30_000;
const isRoot = process.getuid?.() === 0;

let home: string;
let dir: string;
/** Where the embedded PostgreSQL keeps its data, as the start printed it. */
let postgresDir: string;
let port: number;
let env: Record<string, string>;
let run: ChildProcess | undefined;
let output = '';

function copyRepository(to: string): void {
  // Tracked files plus new ones not ignored: what a clone of this work would hold.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter(Boolean);
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
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return Date.now() - started;
    if (Date.now() - started > withinMs) throw new Error(`/readyz did not answer 200 within ${withinMs} ms:\n${output.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null
      ? resolve({ code: child.exitCode, signal: child.signalCode })
      : child.once('exit', (code, signal) => resolve({ code, signal })),
  );
}

function quotactl(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(
    process.execPath,
    [join(dir, 'dist/apps/quotactl/src/main.js'), '--server', `http://127.0.0.1:${port}`, ...args],
    { cwd: dir, env, encoding: 'utf8' },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The node processes of this copy (the supervisor is started by a relative path, its apps by absolute ones): by their working directory. */
const appsOf = (d: string): number[] =>
  spawnSync('pgrep', ['-f', '--', 'dist/apps/'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        return realpathSync(`/proc/${pid}/cwd`) === realpathSync(d);
      } catch {
        return false;
      }
    });

const postgresOf = (d: string): string => spawnSync('pgrep', ['-f', '--', `-D ${d} `], { encoding: 'utf8' }).stdout.trim();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pids of `pids` still running after `withinMs` (polled; empty as soon as all are gone). */
async function stillRunning(pids: readonly number[], withinMs: number): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A supervisor's children by what they are: the three apps, the embedded PostgreSQL and its watchdog. */
function childrenOf(pid: number): { apps: number[]; postgres: number[]; watchdog: number[] } {
  const lines = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.trim());
  const of = (pattern: RegExp): number[] => lines.filter((l) => pattern.test(l)).map((l) => Number(l.trim().split(/\s+/)[0]));
  return {
    apps: of(/dist\/apps\/(admission-api|projection-worker|reconciler)\/src\/main\.js/),
    postgres: of(/bin\/postgres -D /),
    watchdog: of(/quota-ledger-postgres-watchdog/),
  };
}

async function startedSupervisor(): Promise<ChildProcess> {
  const supervisor = start('exec node dist/apps/standalone/src/main.js');
  await waitReady(supervisor, READY_WITHIN_MS);
  return supervisor;
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'ql-home-'));
  chmodSync(home, 0o700); // a private home: as root, "postgres" cannot enter it
  dir = join(home, 'quota-ledger');
  mkdirSync(dir);
  copyRepository(dir);
  port = await freePort();
  env = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && name !== 'DATABASE_URL' && name !== 'REDIS_URL') env[name] = value;
  Object.assign(env, { PORT: String(port), EMBEDDED_POSTGRES_PORT: String(await freePort()), LOG_LEVEL: 'warn' });
}, 30_000);

afterAll(async () => {
  if (run && run.exitCode === null && run.pid) {
    process.kill(-run.pid, 'SIGINT');
    await exited(run);
  }
  const leftover = postgresDir ? postgresOf(postgresDir) : '';
  if (leftover) for (const pid of leftover.split('\n')) process.kill(Number(pid), 'SIGINT');
  await stillRunning(leftover ? leftover.split('\n').map(Number) : [], 30_000);
  rmSync(home, { recursive: true, force: true });
  // Root's data directory outside the clone (/var/lib/quota-ledger/<project>-<digest>): this test's own.
  if (postgresDir && !postgresDir.startsWith(dir)) rmSync(dirname(postgresDir), { recursive: true, force: true });
}, 60_000);

describe('zero-setup start from a clean copy (DATABASE_URL and REDIS_URL unset)', () => {
  it(
    'answers /readyz after `npm install && npm start`',
    async () => {
      run = start('npm install --no-audit --no-fund && npm start');
      const ms = await waitReady(run, INSTALLED_AND_READY_WITHIN_MS);
      console.log(`zero-setup: /readyz 200 after ${ms} ms (npm install + build + embedded PostgreSQL init + migrations)`);
      expect(output).toMatch(/token {6}[0-9a-f]{64}/);
      expect(output).toContain(`http://127.0.0.1:${port}/docs`);
      const database = /database {3}embedded PostgreSQL in (\S+), port/.exec(output)?.[1];
      expect(database, output).toBeDefined();
      postgresDir = resolve(dir, database!);
      if (isRoot) {
        // "postgres" cannot enter the private home: the data went where it can, and the start said so.
        expect(output).toContain(`(outside the project: "postgres" cannot enter ${home} (mode 700); the same directory at every start)`);
        expect(postgresDir).toMatch(/^\/var\/lib\/quota-ledger\/quota-ledger-[0-9a-f]{12}\/postgres$/);
      } else {
        expect(postgresDir).toBe(join(dir, '.quota-ledger/postgres'));
      }
      expect(existsSync(join(postgresDir, 'PG_VERSION'))).toBe(true);
    },
    INSTALLED_AND_READY_WITHIN_MS + 30_000,
  );

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
    // A dry run that would be denied is logged, and told apart from the real denial.
    const dryRun = quotactl(
      'reserve',
      '-n',
      'demo',
      '--kind',
      'Pod',
      '--name',
      'web-3',
      '--resources',
      'pods=1,requests.cpu=500m',
      '--dry-run',
    );
    expect(dryRun.status).toBe(3);
    const denied = quotactl('decisions', '-n', 'demo', '--denied');
    expect(denied.status, denied.stderr).toBe(0);
    expect(denied.stdout).toMatch(/^\S+ +false +false +Pod +web-2 +CREATE /m);
    expect(denied.stdout).toMatch(/^\S+ +false +true +Pod +web-3 +CREATE /m);
    const real = quotactl('decisions', '-n', 'demo', '--denied', '--dry-run=false');
    expect(real.stdout.trim().split('\n').slice(1)).toEqual([expect.stringMatching(/ Pod +web-2 /)]);
    const describeQuota = quotactl('describe', 'quota', 'compute', '-n', 'demo');
    expect(describeQuota.status, describeQuota.stderr).toBe(0);
    expect(describeQuota.stdout).toMatch(/^pods\s+1\s+1$/m);
    expect(describeQuota.stdout).toMatch(/^requests\.cpu\s+500m\s+1$/m);
    // Without the token the service refuses the CLI: tokens are enforced even here.
    const anonymous = spawnSync(
      process.execPath,
      [join(dir, 'dist/apps/quotactl/src/main.js'), '--server', `http://127.0.0.1:${port}`, 'get', 'quota', '-n', 'demo'],
      {
        cwd: tmpdir(),
        env,
        encoding: 'utf8',
      },
    );
    expect(anonymous.status).toBe(5);
  });

  it('stops everything on Ctrl-C, PostgreSQL last, without an error', async () => {
    process.kill(-run!.pid!, 'SIGINT');
    // The shell that ran `npm install && npm start` dies of the SIGINT itself, as in a terminal; what matters is below.
    const { code, signal } = await exited(run!);
    expect(code === 0 || signal === 'SIGINT', `exit ${code} ${signal}`).toBe(true);
    expect(output).not.toMatch(/"level":"(error|fatal)"/);
    expect(postgresOf(postgresDir)).toBe('');
    expect(readFileSync(join(dir, '.quota-ledger/postgres.log'), 'utf8')).toContain('database system is shut down');
  }, 60_000);

  it(
    'leaves no process behind when the supervisor is SIGKILLed: the apps within seconds, PostgreSQL after them',
    async () => {
      const supervisor = await startedSupervisor();
      const children = childrenOf(supervisor.pid!);
      expect(children.apps).toHaveLength(3);
      expect(children.postgres).toHaveLength(1);
      supervisor.kill('SIGKILL');
      await exited(supervisor);
      expect(await stillRunning(children.apps, APPS_GONE_WITHIN_MS)).toEqual([]);
      expect(await stillRunning(children.postgres, POSTGRES_GONE_WITHIN_MS)).toEqual([]);
      expect(await stillRunning(children.watchdog, 5000)).toEqual([]);
    },
    READY_WITHIN_MS + 60_000,
  );

  it(
    'leaves no app behind when its database was gone before the supervisor was SIGKILLed',
    async () => {
      const supervisor = await startedSupervisor();
      const children = childrenOf(supervisor.pid!);
      expect(children.apps).toHaveLength(3);
      // Immediate shutdown of PostgreSQL: the apps lose their connections and retry.
      process.kill(children.postgres[0]!, 'SIGQUIT');
      expect(await stillRunning(children.postgres, 30_000)).toEqual([]);
      await new Promise((r) => setTimeout(r, 1000));
      supervisor.kill('SIGKILL');
      await exited(supervisor);
      expect(await stillRunning(children.apps, APPS_GONE_WITHIN_MS)).toEqual([]);
    },
    READY_WITHIN_MS + 60_000,
  );

  it(
    'leaves no app behind when the supervisor is SIGKILLed while the apps are still starting',
    async () => {
      const supervisor = start('exec node dist/apps/standalone/src/main.js');
      // As soon as the three are forked, long before any is ready.
      const apps = await (async () => {
        for (;;) {
          if (supervisor.exitCode !== null) throw new Error(`the supervisor exited with ${supervisor.exitCode}:\n${output.slice(-4000)}`);
          const forked = childrenOf(supervisor.pid!).apps;
          if (forked.length === 3) return forked;
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const postgres = childrenOf(supervisor.pid!).postgres;
      supervisor.kill('SIGKILL');
      await exited(supervisor);
      expect(await stillRunning(apps, APPS_GONE_WITHIN_MS)).toEqual([]);
      expect(await stillRunning(postgres, POSTGRES_GONE_WITHIN_MS)).toEqual([]);
    },
    READY_WITHIN_MS + 60_000,
  );

  it(
    'starts again after a run whose supervisor and watchdog were SIGKILLed, stopping the PostgreSQL it left, with the data of the first run',
    async () => {
      const killed = await startedSupervisor();
      const children = childrenOf(killed.pid!);
      // The watchdog dies first, so PostgreSQL is left running for the next start to find.
      for (const pid of children.watchdog) process.kill(pid, 'SIGKILL');
      killed.kill('SIGKILL');
      await exited(killed);
      expect(await stillRunning(children.apps, APPS_GONE_WITHIN_MS)).toEqual([]);
      expect(children.postgres.filter(alive)).toHaveLength(1);
      run = start('exec node dist/apps/standalone/src/main.js');
      await waitReady(run, READY_WITHIN_MS);
      expect(output).toContain('left running by an earlier run');
      const usage = quotactl('usage', '-n', 'demo', '-o', 'json');
      expect(usage.status, usage.stderr).toBe(0);
      expect(JSON.parse(usage.stdout).quotas[0].used).toMatchObject({ pods: '1' });
    },
    2 * READY_WITHIN_MS,
  );

  it('refuses a second start while the first one serves, stopping nothing of it', async () => {
    const postgres = postgresOf(postgresDir);
    expect(postgres).not.toBe('');
    const before = output;
    const second = start('exec node dist/apps/standalone/src/main.js');
    expect((await exited(second)).code).toBe(1);
    expect(output).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(output).not.toContain('left running by an earlier run');
    output = before;
    expect(postgresOf(postgresDir)).toBe(postgres);
    expect(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status)).toBe(200);
  }, 30_000);

  it(
    "stops everything when only npm start's npm process gets SIGTERM (what timeout and process managers send)",
    async () => {
      process.kill(-run!.pid!, 'SIGINT');
      await exited(run!);
      expect(await stillRunning(postgresOf(postgresDir).split('\n').filter(Boolean).map(Number), 30_000)).toEqual([]);
      run = start('exec npm start');
      await waitReady(run, READY_WITHIN_MS);
      const apps = appsOf(dir);
      const postgres = postgresOf(postgresDir).split('\n').filter(Boolean).map(Number);
      expect(apps.length).toBeGreaterThanOrEqual(4); // the supervisor and its three apps
      expect(postgres).toHaveLength(1);
      process.kill(run.pid!, 'SIGTERM'); // npm alone, not its process group
      await exited(run);
      expect(await stillRunning(apps, APPS_GONE_WITHIN_MS)).toEqual([]);
      expect(await stillRunning(postgres, POSTGRES_GONE_WITHIN_MS)).toEqual([]);
    },
    2 * READY_WITHIN_MS,
  );
});
