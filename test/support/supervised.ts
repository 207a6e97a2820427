import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Long-lived test binaries (etcd, kube-apiserver, ...) that must never outlive the test process,
 * however it ends: a test runner killed with SIGKILL runs no `afterAll`, no `exit` handler.
 *
 * Two guards, both outside this process:
 * - each binary is exec'd through util-linux's `setpriv --pdeathsig KILL`, so the kernel kills it
 *   the moment the thread that spawned it dies (Node spawns from its main thread);
 * - a detached janitor (`sh`, in its own session so a process-group kill spares it) polls this
 *   process; once it is gone it SIGKILLs every pid listed in `<dir>/pids` and deletes `dir`.
 *   That also covers a machine without setpriv, and the temporary files.
 */

const SETPRIV = '/usr/bin/setpriv';

// dash: a pid is alive while /proc has it and it is not a zombie (PID 1 here may be slow to reap).
const JANITOR_SCRIPT = `
parent=$1 dir=$2 afterwards=$3
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  read -r stat < "/proc/$1/stat" 2>/dev/null || return 1
  state=\${stat##*") "}
  [ "\${state%% *}" != Z ]
}
while alive "$parent"; do sleep 0.2; done
pids=$(cat "$dir/pids" 2>/dev/null)
[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
tries=0
while [ $tries -lt 50 ]; do
  left=
  for pid in $pids; do alive "$pid" && left=1; done
  [ -z "$left" ] && break
  tries=$((tries + 1)); sleep 0.1
done
rm -rf "$dir"
[ -n "$afterwards" ] && eval "$afterwards"
exit 0
`;

export interface Janitor {
  readonly pid: number;
  /** Called after an orderly stop: nothing is left for it to do. */
  dismiss(): void;
}

/**
 * Starts the janitor for `dir` (see above); call before starting anything it should clean up.
 * `afterwards`, a shell command, runs last (e.g. dropping the test's database).
 */
export function startJanitor(dir: string, afterwards = ''): Janitor {
  const janitor = spawn('/bin/sh', ['-c', JANITOR_SCRIPT, 'janitor', String(process.pid), dir, afterwards], {
    detached: true,
    stdio: 'ignore',
  });
  janitor.unref();
  if (janitor.pid === undefined) throw new Error('could not start the janitor (/bin/sh)');
  return { pid: janitor.pid, dismiss: () => void janitor.kill('SIGKILL') };
}

/** True while the process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export interface Supervised {
  readonly name: string;
  readonly pid: number;
  /** Its stdout and stderr, in `<dir>/<name>.log`. */
  readonly logFile: string;
  exited(): boolean;
  /** The last `bytes` of its log, for error messages. */
  logTail(bytes?: number): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `binary` with its output in `<dir>/<name>.log` and its pid in `<dir>/pids` (the janitor's list);
 * `env` replaces this process's environment (node apps get their configuration there).
 */
export function supervise(dir: string, name: string, binary: string, args: readonly string[], env?: NodeJS.ProcessEnv): Supervised {
  const logFile = join(dir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const [command, argv] = existsSync(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'KILL', '--', binary, ...args]] : [binary, [...args]];
  let child: ChildProcess;
  try {
    // Output goes straight to the file: no pipe for this process to drain, none to break.
    child = spawn(command, argv, { cwd: dir, stdio: ['ignore', fd, fd], ...(env ? { env } : {}) });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${binary}`);
  appendFileSync(join(dir, 'pids'), `${pid}\n`);
  child.on('error', () => undefined); // reported through exited() and the log
  const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
  return {
    name,
    pid,
    logFile,
    exited,
    logTail: (bytes = 4000) => {
      try {
        return readFileSync(logFile, 'utf8').slice(-bytes);
      } catch {
        return '';
      }
    },
    stop: async (graceMs = 10_000) => {
      if (exited()) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await gone;
      clearTimeout(timer);
    },
  };
}
