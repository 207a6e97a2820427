import type { Logger } from 'pino';

/**
 * Runs `stop` once on SIGTERM, SIGINT, or — under the zero-setup supervisor — when the
 * parent's IPC channel closes (the parent died, even by SIGKILL: no orphan keeps a port or a
 * job). Exits 0 when `stop` finishes, 1 when it takes longer than `timeoutMs`.
 */
export function onShutdown(stop: (reason: string) => Promise<void>, options: { timeoutMs: number; logger: Logger }): void {
  let stopping = false;
  const run = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    options.logger.info({ reason }, 'stopping');
    setTimeout(() => {
      options.logger.error({ reason, timeoutMs: options.timeoutMs }, 'shutdown took too long: exiting');
      process.exit(1);
    }, options.timeoutMs).unref();
    stop(reason).then(
      () => process.exit(0),
      (error: unknown) => {
        options.logger.error({ error: error instanceof Error ? error.message : String(error) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => run('SIGTERM'));
  process.on('SIGINT', () => run('SIGINT'));
  if (process.send) process.once('disconnect', () => run('supervisor gone'));
}
