/** How long an app whose supervisor died may take to drain before it exits anyway. */
export const ORPHAN_GRACE_MS = 5000;

/**
 * Under the zero-setup supervisor (forked with an IPC channel): leave when the channel closes,
 * which happens however the supervisor dies, SIGKILL included. Call it first thing in `main`,
 * before any `await`: a supervisor killed while the app is still starting (connecting to a
 * database that may be gone, retrying) must not leave it running with nobody to stop it.
 *
 * The app's own shutdown (`onShutdown`, or the API's handler) listens for the same event and
 * drains what it can; this bounds that to ORPHAN_GRACE_MS, since a drain that waits on a
 * database that went with the supervisor would otherwise take the whole shutdown timeout, or
 * longer when retries keep the event loop busy. With no such handler yet (still starting),
 * the process exits at once. Without an IPC channel (run on its own) this does nothing.
 */
export function leaveWithSupervisor(onOrphaned: (message: string) => void = () => undefined): void {
  if (!process.send) return;
  // The channel may have closed while the modules were loading, before anyone could listen.
  if (!process.connected) exitNow(onOrphaned, 'the supervisor was gone before the app started: exiting');
  process.once('disconnect', () => {
    // Ours is the first listener; any other is the app's shutdown, which starts after this returns.
    if (process.listenerCount('disconnect') === 0) exitNow(onOrphaned, 'the supervisor is gone while the app was starting: exiting');
    setTimeout(
      () => exitNow(onOrphaned, `the supervisor is gone and the app did not stop within ${ORPHAN_GRACE_MS} ms: exiting`),
      ORPHAN_GRACE_MS,
    ).unref();
  });
}

function exitNow(onOrphaned: (message: string) => void, message: string): never {
  onOrphaned(message);
  process.exit(1);
}
