import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const API_MAIN = `${ROOT}dist/apps/admission-api/src/main.js`;

/** The compiled API (what production runs); built here when a test runs before `npm run build`. */
export function ensureBuilt(): void {
  if (existsSync(API_MAIN)) return;
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ApiProcess {
  readonly base: string;
  readonly child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** One admission-api process on its own port, ready when /healthz answers; `nodeArgs` go to node (`--max-old-space-size=256`). */
export async function startApiProcess(
  env: Record<string, string>,
  timeoutMs = 30_000,
  nodeArgs: readonly string[] = [],
): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, API_MAIN], {
    cwd: ROOT,
    // No drain on SIGTERM unless a test asks for one (sigterm-drain.test.ts): nothing here follows /readyz.
    env: {
      ...process.env,
      LOG_LEVEL: 'error',
      HOST: '127.0.0.1',
      PORT: String(port),
      QUOTA_LEDGER_INSECURE_DEV: 'true',
      RATE_LIMIT_PER_SECOND: '0',
      SHUTDOWN_DRAIN_SECONDS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`admission-api exited with ${child.exitCode}: ${output}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`admission-api did not become healthy within ${timeoutMs} ms: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    base,
    child,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}
