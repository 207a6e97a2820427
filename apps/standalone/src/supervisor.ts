import { fork, type ChildProcess } from 'node:child_process';

export interface ChildSpec {
  readonly name: string;
  readonly script: string;
  readonly env: Record<string, string>;
}

const RESTARTS_MAX = 5;
const RESTART_WINDOW_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * Runs each app as a child process with an IPC channel (a child exits when the channel closes,
 * so a killed supervisor leaves no orphans), restarts one that dies (at most RESTARTS_MAX times
 * a minute, then gives up and stops everything), and on stop sends SIGTERM and waits.
 */
export class Supervisor {
  private readonly children = new Map<string, ChildProcess>();
  private readonly restarts = new Map<string, number[]>();
  private stopping = false;

  constructor(
    private readonly log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void,
    private readonly onGiveUp: (name: string) => void,
  ) {}

  start(spec: ChildSpec): void {
    const child = fork(spec.script, [], { env: spec.env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.children.set(spec.name, child);
    child.once('exit', (code, signal) => {
      this.children.delete(spec.name);
      if (this.stopping) return;
      const recent = (this.restarts.get(spec.name) ?? []).filter((at) => Date.now() - at < RESTART_WINDOW_MS);
      if (recent.length >= RESTARTS_MAX) {
        this.log('error', `${spec.name} keeps exiting; giving up`, { code, signal });
        this.onGiveUp(spec.name);
        return;
      }
      recent.push(Date.now());
      this.restarts.set(spec.name, recent);
      const delayMs = 500 * 2 ** (recent.length - 1);
      this.log('warn', `${spec.name} exited; restarting in ${delayMs} ms`, { code, signal });
      setTimeout(() => {
        if (!this.stopping) this.start(spec);
      }, delayMs);
    });
  }

  /** SIGTERM to every child (each drains its own work), SIGKILL to any still running after the timeout. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.children.entries()].map(
        ([name, child]) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(() => {
              this.log('warn', `${name} did not stop within ${STOP_TIMEOUT_MS} ms: killing it`);
              child.kill('SIGKILL');
            }, STOP_TIMEOUT_MS);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
  }
}
