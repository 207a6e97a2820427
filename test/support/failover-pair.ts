import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';

/**
 * Two PostgreSQL servers of the test's own that can trade the primary's role, made with Debian's
 * PostgreSQL binaries (no Docker): `initdb` node a, `pg_basebackup -R` node b from it, each on a
 * free port in a temporary directory. A test kills the primary as a crash would (SIGKILL of the
 * postmaster and of every process it started), promotes the standby (`pg_ctl promote`), and makes
 * the old primary a standby of the new one (`pg_rewind`, which wal_log_hints allows). Synchronous
 * replication is switched per primary (ALTER SYSTEM synchronous_standby_names = '*'). Each node's
 * `cluster_name` is its name, so pg_stat_replication shows the standby as node_a or node_b. As
 * root the servers run as `postgres` (PostgreSQL refuses root). fsync is off, as in the other
 * tests: a process killed loses nothing the kernel holds, and the machine is shared.
 */
export interface FailoverNode {
  readonly name: 'node_a' | 'node_b';
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:PORT/<database>`. */
  url(database?: string): string;
  readonly running: boolean;
}

export interface FailoverPair {
  readonly nodes: readonly [FailoverNode, FailoverNode];
  /** Both hosts, a first: `postgres://postgres@127.0.0.1:A,127.0.0.1:B/<database>?target_session_attrs=read-write`. */
  multiHostUrl(database: string): string;
  /** The node that is primary now (the last promoted, or a). */
  readonly primary: FailoverNode;
  readonly standby: FailoverNode;
  /** Commits on the primary wait for the standby (synchronous_standby_names '*'), or not (''). */
  setSynchronous(on: boolean): Promise<void>;
  /** Waits until the primary's pg_stat_replication shows the standby streaming (synchronously when it is on). */
  streaming(timeoutMs?: number): Promise<void>;
  /** SIGKILL of the primary's postmaster and every process it started (a crash). */
  killPrimary(): void;
  /** `pg_ctl promote -w` of the standby; resolves once it accepts writes. Returns the milliseconds it took. */
  promote(): Promise<number>;
  /** The killed old primary made a standby of the new one (pg_rewind, then started), streaming. Returns the milliseconds it took. */
  rejoin(): Promise<number>;
  /** The servers' log lines (for failure messages). */
  logs(): string;
  destroy(): Promise<void>;
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').filter((v) => existsSync(join('/usr/lib/postgresql', v, 'bin', 'pg_rewind')));
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql (Debian's postgresql package)");
  return join('/usr/lib/postgresql', newest, 'bin');
}

function owner(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

async function query(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${last})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pids of the processes whose parent is `pid` (a postmaster's backends and helpers). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

interface Node extends FailoverNode {
  readonly dir: string;
  child: ChildProcess | undefined;
}

export async function startFailoverPair(): Promise<FailoverPair> {
  const bin = binDir();
  const ids = owner();
  const root = mkdtempSync(join(tmpdir(), 'ql-failover-'));
  if (ids) chownSync(root, ids.uid, ids.gid);
  /** As `run`, without blocking the event loop (the test's clients keep sending meanwhile). */
  const runAsync = (tool: string, args: readonly string[]): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn(join(bin, tool), args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], ...(ids ?? {}) });
      let printed = '';
      child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        code === 0 ? resolve(printed) : reject(new Error(`${tool} ${args.join(' ')} failed (${code ?? signal}): ${printed}`)),
      );
    });
  /** Runs a PostgreSQL tool; returns what it printed (stdout and stderr), throws with it when it fails. */
  const run = (tool: string, args: readonly string[]): string => {
    // In the servers' own directory: `postgres` may not enter the test's working directory.
    const result = spawnSync(join(bin, tool), args, { cwd: root, encoding: 'utf8', ...(ids ?? {}) });
    const printed = `${result.stdout ?? ''}${result.stderr ?? ''}`;
    if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${result.status ?? result.signal}): ${printed}`);
    return printed;
  };
  const makeNode = async (name: 'node_a' | 'node_b'): Promise<Node> => {
    const port = await freePort();
    const node: Node = {
      name,
      port,
      dir: join(root, name),
      child: undefined,
      url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
      get running() {
        return node.child !== undefined && node.child.exitCode === null && node.child.signalCode === null;
      },
    };
    return node;
  };
  const a = await makeNode('node_a');
  const b = await makeNode('node_b');
  // A test run that dies without its afterAll leaves no server behind.
  const killOnExit = (): void => {
    for (const node of [a, b]) if (node.running) node.child?.kill('SIGQUIT');
  };
  process.once('exit', killOnExit);
  const start = async (node: Node): Promise<void> => {
    const child = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        node.dir,
        '-p',
        String(node.port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${root}`,
        '-c',
        `cluster_name=${node.name}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], cwd: root, ...(ids ?? {}) },
    );
    child.stderr?.on('data', (chunk: Buffer) => appendFileSync(join(root, `${node.name}.log`), chunk));
    node.child = child;
    await poll(
      `${node.name} accepts connections`,
      async () => {
        if (child.exitCode !== null) throw new Error(`${node.name} exited during start (code ${child.exitCode})`);
        await query(node.url(), 'SELECT 1');
        return true;
      },
      60_000,
    );
  };

  run('initdb', ['-D', a.dir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  appendFileSync(
    join(a.dir, 'postgresql.conf'),
    [
      '',
      'fsync = off',
      'max_connections = 80',
      'shared_buffers = 32MB',
      // pg_rewind needs hint-bit changes in the WAL; the new primary keeps enough WAL for the old one to catch up.
      'wal_log_hints = on',
      'wal_keep_size = 512MB',
      'max_wal_senders = 6',
      'hot_standby = on',
      // A standby that lost its primary retries the connection every wal_retrieve_retry_interval
      // (5 s by default), and PostgreSQL 15 notices a promotion request only between two tries:
      // pg_ctl promote took 0.2 s or 5 s depending on when it came.
      'wal_retrieve_retry_interval = 200ms',
      '',
    ].join('\n'),
  );
  // Replication connections from this machine only.
  appendFileSync(join(a.dir, 'pg_hba.conf'), '\nhost replication all 127.0.0.1/32 trust\n');
  await start(a);
  run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(a.port), '-U', 'postgres', '-D', b.dir, '-R', '-X', 'stream', '--no-sync']);
  await start(b);

  let primary: Node = a;
  let standby: Node = b;

  const pair: FailoverPair = {
    nodes: [a, b],
    multiHostUrl: (database) => `postgres://postgres@127.0.0.1:${a.port},127.0.0.1:${b.port}/${database}?target_session_attrs=read-write`,
    get primary() {
      return primary;
    },
    get standby() {
      return standby;
    },
    async setSynchronous(on) {
      await query(primary.url(), on ? `ALTER SYSTEM SET synchronous_standby_names = '*'` : 'ALTER SYSTEM RESET synchronous_standby_names');
      await query(primary.url(), 'SELECT pg_reload_conf()');
      await poll(
        'synchronous_standby_names in effect',
        async () => {
          const { rows } = await query(primary.url(), `SELECT current_setting('synchronous_standby_names') AS names`);
          return (rows[0].names !== '') === on ? true : undefined;
        },
        10_000,
      );
    },
    async streaming(timeoutMs = 30_000) {
      await poll(
        `${standby.name} streaming from ${primary.name}`,
        async () => {
          const { rows } = await query(
            primary.url(),
            `SELECT state, sync_state, current_setting('synchronous_standby_names') <> '' AS synchronous FROM pg_stat_replication WHERE application_name = '${standby.name}'`,
          );
          const row = rows[0];
          return row && row.state === 'streaming' && (!row.synchronous || row.sync_state === 'sync') ? true : undefined;
        },
        timeoutMs,
      );
    },
    killPrimary() {
      const pid = primary.child?.pid;
      if (pid === undefined || !primary.running) throw new Error(`${primary.name} is not running`);
      const children = childrenOf(pid);
      process.kill(pid, 'SIGKILL');
      for (const child of children) {
        try {
          process.kill(child, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
    async promote() {
      const started = Date.now();
      await runAsync('pg_ctl', ['promote', '-w', '-t', '60', '-D', standby.dir]);
      const promoted = standby;
      await poll(
        `${promoted.name} accepts writes`,
        async () => {
          const { rows } = await query(promoted.url(), 'SELECT pg_is_in_recovery() AS recovery');
          return rows[0].recovery ? undefined : true;
        },
        30_000,
      );
      [primary, standby] = [promoted, primary];
      return Date.now() - started;
    },
    async rejoin() {
      const started = Date.now();
      const old = standby;
      await poll(`${old.name} exited`, async () => (old.running ? undefined : true), 10_000);
      // pg_rewind reads the new primary's timeline from its control file, which says the new
      // timeline only after a checkpoint (else: "no rewind required", and the old primary, ahead on
      // the old timeline, can never follow). It runs the killed server's crash recovery first, then
      // copies what diverged, and writes standby.signal and primary_conninfo (-R).
      await query(primary.url(), 'CHECKPOINT');
      const rewound = await runAsync('pg_rewind', [
        '-D',
        old.dir,
        '--source-server',
        `host=127.0.0.1 port=${primary.port} user=postgres dbname=postgres`,
        '-R',
        '--no-sync',
        '--progress',
      ]);
      appendFileSync(join(root, `${old.name}.log`), `pg_rewind: ${rewound}\n`);
      writeFileSync(join(old.dir, 'standby.signal'), '');
      if (ids) chownSync(join(old.dir, 'standby.signal'), ids.uid, ids.gid);
      await start(old);
      await pair.streaming();
      return Date.now() - started;
    },
    logs() {
      return ['node_a', 'node_b']
        .map((name) => {
          const file = join(root, `${name}.log`);
          return existsSync(file) ? `--- ${name}\n${readFileSync(file, 'utf8').split('\n').slice(-40).join('\n')}` : '';
        })
        .join('\n');
    },
    async destroy() {
      process.removeListener('exit', killOnExit);
      for (const node of [a, b]) {
        const child = node.child;
        if (!child || !node.running) continue;
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGINT'); // fast shutdown
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (node.running) child.kill('SIGKILL');
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  return pair;
}
