/**
 * An informer-style list+watch loop, without the cache: list to learn where the collection is
 * (its resourceVersion), watch from there with bookmarks (which move that point on without an
 * object changing), and when the server has forgotten that point (410 Gone, or an ERROR event
 * carrying 410) list again. A watch that ends is resumed from the last resourceVersion seen; a
 * failure (refused connection, 5xx, a broken stream, a watch ended without any event) waits a
 * backoff that doubles up to a cap and is reset by the next event, then watches again from the
 * last resourceVersion seen (or lists, if it has none). The transport is given (`WatchTransport`):
 * the Kubernetes one is kube-watch.ts, the tests give a fake stream.
 */

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: Record<string, unknown>;
}

export interface WatchTransport {
  /** The collection's resourceVersion now (a list; the items are not needed). Rejects with WatchGone or any error. */
  list(signal: AbortSignal): Promise<string>;
  /** The events after `resourceVersion`, until the server ends the watch (`onOpen` once it accepted it). Throws WatchGone when it answers 410. */
  watch(resourceVersion: string, signal: AbortSignal, onOpen?: () => void): AsyncIterable<WatchEvent>;
}

/** The server no longer has the resourceVersion asked for (410 Gone / Expired): list again. */
export class WatchGone extends Error {
  constructor(message = 'resourceVersion too old (410 Gone)') {
    super(message);
    this.name = 'WatchGone';
  }
}

export interface WatchLoopOptions {
  /** First wait after a failure, in ms (doubled at each failure in a row). Default 200. */
  readonly backoffMs?: number;
  /** Longest wait, in ms. Default 30 s. */
  readonly maxBackoffMs?: number;
  /** How the loop waits (the tests give a fake clock). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Every change of an object (not bookmarks or errors). */
  readonly onEvent: (event: WatchEvent) => void;
  /** What the loop did: `listed`, `relist` (410), `failed` (then waits), `resumed` (a watch ended). */
  readonly onState?: (
    state: 'listed' | 'relist' | 'failed' | 'resumed',
    detail?: { error?: unknown; waitMs?: number; resourceVersion?: string },
  ) => void;
}

export const DEFAULT_WATCH_BACKOFF_MS = 200;
export const DEFAULT_WATCH_MAX_BACKOFF_MS = 30_000;

/** Waits `ms`, or less when `signal` aborts first; never rejects. */
export const sleepFor = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** The resourceVersion an event carries (a bookmark's is all it carries). */
export function resourceVersionOf(event: WatchEvent): string | undefined {
  const metadata = event.object['metadata'];
  const version = typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>)['resourceVersion'] : undefined;
  return typeof version === 'string' && version !== '' ? version : undefined;
}

/** Whether an ERROR event is the server saying the resourceVersion is gone (a Status with code 410). */
export const isGoneStatus = (object: Record<string, unknown>): boolean =>
  object['code'] === 410 || object['reason'] === 'Expired' || object['reason'] === 'Gone';

/** Runs until `signal` aborts; never rejects (failures are waited out and retried). */
export async function runWatchLoop(transport: WatchTransport, signal: AbortSignal, options: WatchLoopOptions): Promise<void> {
  const sleep = options.sleep ?? sleepFor;
  const base = options.backoffMs ?? DEFAULT_WATCH_BACKOFF_MS;
  const cap = options.maxBackoffMs ?? DEFAULT_WATCH_MAX_BACKOFF_MS;
  let failures = 0;
  let version: string | undefined;
  while (!signal.aborted) {
    let listing = false;
    try {
      if (version === undefined) {
        listing = true;
        version = await transport.list(signal);
        listing = false;
        options.onState?.('listed', { resourceVersion: version });
      }
      let seen = 0;
      for await (const event of transport.watch(version, signal)) {
        if (event.type === 'ERROR')
          throw isGoneStatus(event.object) ? new WatchGone() : new Error(`watch error: ${JSON.stringify(event.object).slice(0, 300)}`);
        failures = 0;
        seen++;
        version = resourceVersionOf(event) ?? version;
        if (event.type !== 'BOOKMARK') options.onEvent(event);
      }
      if (signal.aborted) return;
      options.onState?.('resumed', { resourceVersion: version });
      // A server that ends every watch at once would be asked again in a tight loop.
      if (seen === 0) await wait(new Error('the watch ended without an event'));
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof WatchGone && !listing) {
        version = undefined;
        options.onState?.('relist', { error });
        continue;
      }
      // The watch is resumed from the last resourceVersion seen (a failed list starts over).
      await wait(error);
    }
  }

  async function wait(error: unknown): Promise<void> {
    const waitMs = Math.min(cap, base * 2 ** failures);
    failures++;
    options.onState?.('failed', { error, waitMs });
    await sleep(waitMs, signal);
  }
}
