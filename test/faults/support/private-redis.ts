import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { freePort } from '../../support/processes.js';

/**
 * A redis-server of the test's own on a free port, without persistence, so that a fault test
 * can stop it and start it again (empty, as a Redis without persistence comes back). The
 * machine's Redis on 6379 serves the other tests and is never touched.
 */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  readonly running: boolean;
  /** SIGTERM (SIGKILL after 5 s, or at once when asked); resolves once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port; resolves once it answers PING. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5000;

/** One PING over a raw socket: true when the server answers +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk: Buffer) => done(chunk.toString().startsWith('+PONG')));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const launch = async (): Promise<void> => {
    output = '';
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      {
        // Its working directory is where a dump would land; nothing is saved, but never the checkout.
        cwd: tmpdir(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child = started;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await ping(port))) {
      if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode} (port ${port} taken?): ${output}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer PING within ${READY_TIMEOUT_MS} ms: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const stopping = child;
    child = undefined;
    if (!stopping) return;
    const gone = exited(stopping);
    stopping.kill(signal);
    const timer = setTimeout(() => stopping.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await gone;
    clearTimeout(timer);
  };

  // A test run that dies without its afterAll must not leave a redis-server behind.
  const killOnExit = (): void => {
    child?.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get running() {
      return child !== undefined;
    },
    stop,
    async start() {
      if (!child) await launch();
    },
    async destroy() {
      process.removeListener('exit', killOnExit);
      await stop('SIGKILL');
    },
  };
}
