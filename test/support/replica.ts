import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';

/**
 * A PostgreSQL primary and a hot standby of it, made by the test on this machine from Debian's
 * PostgreSQL binaries: `initdb` a primary in a temporary directory, `pg_basebackup -R` a second
 * data directory from it, and start both on free ports (no Docker). Real streaming replication,
 * so a test sees what DATABASE_READ_URL will see: replay lag, a paused replay, a standby gone.
 * As root, the servers run as `postgres` (PostgreSQL refuses root).
 */
export interface ReplicaPair {
  readonly primaryUrl: string;
  readonly standbyUrl: string;
  /** Stops WAL replay on the standby (`pg_wal_replay_pause()`): it lags from now on. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  stopStandby(): Promise<void>;
  stop(): Promise<void>;
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').filter((v) => existsSync(join('/usr/lib/postgresql', v, 'bin', 'pg_basebackup')));
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql (Debian's postgresql package)");
  return join('/usr/lib/postgresql', newest, 'bin');
}

function owner(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

async function ready(url: string, child: ChildProcess, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited during start (code ${child.exitCode})`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${what} did not accept connections within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

async function query(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT'); // fast shutdown
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const bin = binDir();
  const ids = owner();
  const root = mkdtempSync(join(tmpdir(), 'ql-replica-'));
  if (ids) chownSync(root, ids.uid, ids.gid);
  const run = (tool: string, args: readonly string[]): void => {
    // In the servers' own directory: `postgres` may not enter the test's working directory.
    execFileSync(join(bin, tool), args, { stdio: 'pipe', cwd: root, ...(ids ?? {}) });
  };
  const primaryDir = join(root, 'primary');
  const standbyDir = join(root, 'standby');
  run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  // Replication connections from this machine only; the standby's base backup streams its WAL.
  appendFileSync(join(primaryDir, 'pg_hba.conf'), '\nhost replication all 127.0.0.1/32 trust\n');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const serve = (dir: string, port: number): ChildProcess =>
    spawn(
      join(bin, 'postgres'),
      [
        '-D',
        dir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${root}`,
        '-c',
        'fsync=off',
        '-c',
        'max_connections=60',
      ],
      {
        stdio: 'ignore',
        cwd: root,
        ...(ids ?? {}),
      },
    );
  const primary = serve(primaryDir, primaryPort);
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  await ready(primaryUrl, primary, 'the primary');
  run('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primaryPort),
    '-U',
    'postgres',
    '-D',
    standbyDir,
    '-R',
    '-X',
    'stream',
    '--no-sync',
  ]);
  writeFileSync(join(standbyDir, 'standby.signal'), '');
  const standby = serve(standbyDir, standbyPort);
  const standbyUrl = `postgres://postgres@127.0.0.1:${standbyPort}/postgres`;
  await ready(standbyUrl, standby, 'the standby');

  return {
    primaryUrl,
    standbyUrl,
    async pauseReplay() {
      await query(standbyUrl, 'SELECT pg_wal_replay_pause()');
    },
    async resumeReplay() {
      await query(standbyUrl, 'SELECT pg_wal_replay_resume()');
    },
    async caughtUp() {
      const { rows } = await query(primaryUrl, 'SELECT pg_current_wal_lsn()::text AS lsn');
      const target = rows[0].lsn as string;
      const deadline = Date.now() + 15_000;
      for (;;) {
        const { rows: replayed } = await query(standbyUrl, `SELECT pg_last_wal_replay_lsn() >= '${target}'::pg_lsn AS done`);
        if (replayed[0].done) return;
        if (Date.now() > deadline) throw new Error('the standby did not catch up within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stopStandby() {
      await stopServer(standby);
    },
    async stop() {
      await stopServer(standby);
      await stopServer(primary);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
