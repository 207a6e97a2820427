import type { CacheState } from './inventory.js';
import { isRecord } from './objects.js';
import { isGoneStatus, resourceVersionOf, sleepFor, WatchGone, type WatchEvent } from './watch.js';

/**
 * The cache of one kind across the cluster, as Kubernetes' informers keep it: one paged LIST,
 * then one WATCH from the list's resourceVersion, each event applied to the cache; a LIST again
 * only when the server has forgotten that point (410) or after a failure. Only what `keep` takes
 * of each object is held (the facts a charge needs, not whole objects), by namespace and uid.
 *
 * It fails closed. The cache answers (`objectsIn`) only while it is synced: listed whole and its
 * watch open. While it lists, while its watch is broken, or past its ceiling of objects or bytes
 * (then emptied), it answers undefined, and a caller must treat the namespace's listing as
 * incomplete (release nothing). While it is synced it is current, less the time an event takes
 * to arrive: a watch that stays silent longer than `silentAfterMs` (the server sends a bookmark
 * about every minute) is taken for stalled and opened again from its last resourceVersion, so a
 * cache never answers for long from a connection that stopped delivering unseen.
 */

export interface ListPage {
  readonly items: readonly Record<string, unknown>[];
  readonly resourceVersion?: string;
  readonly continue?: string;
}

export interface InformerTransport {
  /**
   * One page of the cluster-wide list (`token`: the continue token), or the whole list in one
   * answer (`whole`). Rejects with WatchGone (410), InformerForbidden (403), InformerNotServed (404) or any error.
   */
  listPage(token: string | undefined, signal: AbortSignal, whole?: boolean): Promise<ListPage>;
  /**
   * The events after `resourceVersion`, until the server ends the watch; `onOpen` once the server
   * has accepted it (before any event: a quiet kind may send none for minutes). Throws WatchGone when it answers 410.
   */
  watch(resourceVersion: string, signal: AbortSignal, onOpen: () => void): AsyncIterable<WatchEvent>;
}

/** The reconciler may not list this kind (403): the informer stops, unsynced, until it is started again (the next discovery). */
export class InformerForbidden extends Error {
  override name = 'InformerForbidden';
}

/** The server does not serve this kind (404): no object of it can exist; listed again after `overCeilingWaitMs`. */
export class InformerNotServed extends Error {
  override name = 'InformerNotServed';
}

/** What an informer is doing (the one list of states, in inventory.ts where the metrics read them). */
export type InformerState = CacheState['state'];

/** One object whose kept facts a relist changed: `before` absent, it appeared; `after` absent, it is gone. */
export interface RelistChange<T> {
  readonly namespace: string;
  readonly uid: string;
  readonly before?: T;
  readonly after?: T;
}

export interface InformerOptions<T> {
  /** What is kept of an object (undefined: nothing; the object is not cached, say one without a uid). */
  readonly keep: (object: Record<string, unknown>) => T | undefined;
  /** Objects the cache may hold; past it the cache is emptied and stays unsynced until a later list fits. */
  readonly maxObjects: number;
  /** Bytes the cache may hold, measured as the kept facts' JSON. */
  readonly maxBytes: number;
  /** Each change after the first list (not bookmarks), with what the cache held of the object before it. */
  readonly onEvent?: (event: WatchEvent, before: T | undefined) => void;
  /**
   * After a relist that was not the first (after a 410; not after the cache was emptied): every
   * object that appeared, went or is held in both (a watch missed what happened meanwhile; client-go's
   * Replace tells its handlers the same way). The caller compares `before` and `after`.
   */
  readonly onRelist?: (changes: Iterable<RelistChange<T>>) => void;
  readonly onState?: (state: InformerState, detail?: { readonly error?: unknown; readonly waitMs?: number }) => void;
  /** First wait after a failure, in ms, doubled at each failure in a row up to `maxBackoffMs`. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** A watch silent this long (no event, no bookmark) is opened again from where it was, in ms (default 90 s). */
  readonly silentAfterMs?: number;
  /** How long an over-ceiling cache waits before it lists again, in ms (default 5 minutes). */
  readonly overCeilingWaitMs?: number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly now?: () => number;
}

class OverCeiling extends Error {}
class ContinueExpired extends Error {}

/** Longer than the kube-apiserver's bookmark period (about a minute) with room to spare. */
export const DEFAULT_SILENT_AFTER_MS = 90_000;

interface Entry<T> {
  readonly value: T;
  readonly bytes: number;
}

export class Informer<T> {
  private byNamespace = new Map<string, Map<string, Entry<T>>>();
  private held = { objects: 0, bytes: 0 };
  private stateNow: InformerState = 'listing';
  private listedOnce = false;
  /** Ends the long wait after a not-served list (retryNow). */
  private wake: AbortController | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly transport: InformerTransport,
    private readonly options: InformerOptions<T>,
  ) {}

  get state(): InformerState {
    return this.stateNow;
  }

  /** Objects and bytes held now (for the memory gauge). */
  get size(): { readonly objects: number; readonly bytes: number } {
    return { ...this.held };
  }

  /** Up to when the cache is known current (a local clock reading: now, while it is synced), or undefined while it is not. */
  get currentAt(): number | undefined {
    return this.stateNow === 'synced' ? this.now() : undefined;
  }

  /** The kept facts of every object of the namespace, or undefined while the cache is not synced. */
  objectsIn(namespace: string): readonly T[] | undefined {
    if (this.stateNow !== 'synced') return undefined;
    return [...(this.byNamespace.get(namespace)?.values() ?? [])].map((entry) => entry.value);
  }

  /**
   * Resolves once the cache is no longer listing (synced, or failed and saying why), or after
   * `ms`: what a listing waits for before it reads a cache that is being filled.
   */
  settled(ms: number): Promise<void> {
    if (this.stateNow !== 'listing') return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /**
   * Lists again now if the cache waits after finding its kind not served (a CRD may have been
   * installed since): what a listing asks before it takes such a kind for empty. The state is
   * `listing` from this call on, so `settled()` waits for the answer.
   */
  retryNow(): void {
    if (this.stateNow !== 'not-served' || !this.wake) return;
    this.setState('listing');
    this.wake.abort();
  }

  /** Lists, then watches, until `signal` aborts or the kind is forbidden; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const sleep = this.options.sleep ?? sleepFor;
    let failures = 0;
    let version: string | undefined;
    while (!signal.aborted) {
      try {
        if (version === undefined) version = await this.relist(signal);
        const watched = { version, seen: 0, silent: false };
        try {
          await this.watchOnce(watched, signal, () => (failures = 0));
        } finally {
          version = watched.version; // where a broken watch is resumed from
        }
        if (signal.aborted) break;
        if (watched.seen === 0 && !watched.silent) throw new Error('the watch ended without an event');
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof InformerForbidden) return this.stop('forbidden', error);
        const longWait = this.options.overCeilingWaitMs ?? 5 * 60_000;
        if (error instanceof WatchGone) version = undefined;
        else if (error instanceof InformerNotServed || error instanceof OverCeiling) {
          version = undefined;
          this.clear();
          this.setState(error instanceof OverCeiling ? 'over-ceiling' : 'not-served', { error });
          const wake = new AbortController();
          this.wake = wake;
          await sleep(longWait, AbortSignal.any([signal, wake.signal]));
          this.wake = undefined;
        } else {
          const waitMs = Math.min(this.options.maxBackoffMs ?? 30_000, (this.options.backoffMs ?? 200) * 2 ** failures++);
          this.setState('broken', { error, waitMs });
          await sleep(waitMs, signal);
        }
      }
    }
    this.stop('stopped');
  }

  /**
   * One watch from `version` until the server ends it, or until it has been silent for
   * `silentAfterMs` (no event or bookmark: the server sends a bookmark about every minute, so a
   * connection that says nothing for longer may have stalled unseen; it is watched again from
   * where it was). `at` follows the resourceVersion it reached and the events it carried.
   */
  private async watchOnce(at: { version: string; seen: number; silent: boolean }, signal: AbortSignal, onEvent: () => void): Promise<void> {
    const silence = new AbortController();
    const silentAfterMs = this.options.silentAfterMs ?? DEFAULT_SILENT_AFTER_MS;
    let timer = setTimeout(() => silence.abort(), silentAfterMs);
    const heard = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => silence.abort(), silentAfterMs);
    };
    const opened = (): void => {
      heard();
      this.setState('synced');
    };
    try {
      for await (const event of this.transport.watch(at.version, AbortSignal.any([signal, silence.signal]), opened)) {
        heard();
        at.seen++;
        onEvent();
        at.version = this.apply(event) ?? at.version;
      }
    } catch (error) {
      if (!silence.signal.aborted || signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
      at.silent = silence.signal.aborted;
    }
  }

  /**
   * Every page of the list into a new cache, swapped in whole at the end; the list's
   * resourceVersion. A list whose continue token expired (410: etcd compacted the snapshot its
   * pages were read from) is read again whole, in one answer, as client-go's pager does: paged
   * again, under the same churn, it could expire again and again.
   */
  private async relist(signal: AbortSignal): Promise<string> {
    this.setState('listing');
    try {
      return await this.listInto(signal, false);
    } catch (error) {
      if (!(error instanceof ContinueExpired)) throw error;
      return this.listInto(signal, true);
    }
  }

  private async listInto(signal: AbortSignal, whole: boolean): Promise<string> {
    const fresh = new Map<string, Map<string, Entry<T>>>();
    const counted = { objects: 0, bytes: 0 };
    let token: string | undefined;
    let version: string | undefined;
    do {
      const page = await this.transport.listPage(token, signal, whole).catch((error: unknown) => {
        throw token !== undefined && error instanceof WatchGone ? new ContinueExpired(error.message) : error;
      });
      version ??= page.resourceVersion;
      for (const item of page.items) this.put(fresh, counted, item);
      token = page.continue;
    } while (token !== undefined);
    if (version === undefined) throw new Error('the list has no resourceVersion');
    const previous = this.listedOnce ? this.byNamespace : undefined;
    this.byNamespace = fresh;
    this.held = counted;
    this.listedOnce = true;
    if (previous && this.options.onRelist) this.options.onRelist(relistChanges(previous, fresh));
    return version;
  }

  /** One watch event applied; the resourceVersion it moves the cache to. */
  private apply(event: WatchEvent): string | undefined {
    if (event.type === 'ERROR')
      throw isGoneStatus(event.object) ? new WatchGone() : new Error(`watch error: ${JSON.stringify(event.object).slice(0, 300)}`);
    if (event.type === 'BOOKMARK') return resourceVersionOf(event);
    const { namespace, uid } = identityOf(event.object);
    const before = namespace !== undefined && uid !== undefined ? this.byNamespace.get(namespace)?.get(uid) : undefined;
    if (event.type === 'DELETED') this.remove(namespace, uid);
    else this.put(this.byNamespace, this.held, event.object);
    this.options.onEvent?.(event, before?.value);
    return resourceVersionOf(event);
  }

  /** Puts (or replaces) an object's kept facts, counting it in `counted`; throws OverCeiling past a ceiling. */
  private put(
    into: Map<string, Map<string, Entry<T>>>,
    counted: { objects: number; bytes: number },
    object: Record<string, unknown>,
  ): void {
    const { namespace, uid } = identityOf(object);
    const value = namespace !== undefined && uid !== undefined ? this.options.keep(object) : undefined;
    if (value === undefined || namespace === undefined || uid === undefined) return;
    const entry = { value, bytes: Buffer.byteLength(JSON.stringify(value)) + uid.length };
    let objects = into.get(namespace);
    if (!objects) into.set(namespace, (objects = new Map()));
    const previous = objects.get(uid);
    objects.set(uid, entry);
    counted.objects += previous ? 0 : 1;
    counted.bytes += entry.bytes - (previous?.bytes ?? 0);
    if (counted.objects > this.options.maxObjects || counted.bytes > this.options.maxBytes)
      throw new OverCeiling(
        `more than the cache's ceiling of ${this.options.maxObjects} objects or ${this.options.maxBytes} bytes (${counted.objects} objects, ${counted.bytes} bytes)`,
      );
  }

  private remove(namespace: string | undefined, uid: string | undefined): void {
    if (namespace === undefined || uid === undefined) return;
    const objects = this.byNamespace.get(namespace);
    const entry = objects?.get(uid);
    if (!objects || !entry) return;
    objects.delete(uid);
    if (objects.size === 0) this.byNamespace.delete(namespace);
    this.held.objects--;
    this.held.bytes -= entry.bytes;
  }

  /** Empties the cache; the next list is then a first one again (its objects are not told to onRelist). */
  private clear(): void {
    this.listedOnce = false;
    this.byNamespace = new Map();
    this.held = { objects: 0, bytes: 0 };
  }

  private stop(state: 'forbidden' | 'stopped', error?: unknown): void {
    this.clear();
    this.setState(state, error === undefined ? undefined : { error });
  }

  private setState(state: InformerState, detail?: { readonly error?: unknown; readonly waitMs?: number }): void {
    const changed = state !== this.stateNow;
    this.stateNow = state;
    if (changed || detail) this.options.onState?.(state, detail);
    if (state !== 'listing') for (const done of [...this.waiters]) done();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** An object's namespace and uid, where it has them. */
function identityOf(object: Record<string, unknown>): { namespace?: string; uid?: string } {
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  const namespace = typeof metadata['namespace'] === 'string' && metadata['namespace'] !== '' ? metadata['namespace'] : undefined;
  const uid = typeof metadata['uid'] === 'string' && metadata['uid'] !== '' ? metadata['uid'] : undefined;
  return { ...(namespace ? { namespace } : {}), ...(uid ? { uid } : {}) };
}

/** Every object a relist changed the cache's facts of, or held in both (the caller compares). */
function* relistChanges<T>(
  previous: Map<string, Map<string, Entry<T>>>,
  fresh: Map<string, Map<string, Entry<T>>>,
): Iterable<RelistChange<T>> {
  for (const [namespace, objects] of previous)
    for (const [uid, entry] of objects) {
      const now = fresh.get(namespace)?.get(uid);
      yield { namespace, uid, before: entry.value, ...(now ? { after: now.value } : {}) };
    }
  for (const [namespace, objects] of fresh)
    for (const [uid, entry] of objects) if (!previous.get(namespace)?.has(uid)) yield { namespace, uid, after: entry.value };
}
