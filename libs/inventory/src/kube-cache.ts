import { selectObject, type KubeObject } from '@quota/domain';
import { mergeKinds } from './discovery.js';
import { Informer, InformerForbidden, InformerNotServed, type InformerTransport, type RelistChange } from './informer.js';
import { InventoryError, type CacheState, type Inventory, type SettleSignal, type WatchState } from './inventory.js';
import { formatResource, needsWholeObject, sameResource, type KnownKind } from './kinds.js';
import { ContinueExpired, Forbidden, page } from './kube-list-page.js';
import type { Listing } from './kube-requests.js';
import { collectionPath, collectionTransport } from './kube-watch.js';
import { messageOf } from './limits.js';
import { isRecord, toInventoryObjects } from './objects.js';
import { Tombstones } from './tombstones.js';
import { sleepFor, WatchGone, type WatchEvent } from './watch.js';
import { watchDiscoveredKinds } from './watch-kinds.js';

/**
 * The cluster as the reconciler reads it when it keeps a cache (INVENTORY_CACHE, the default):
 * one Informer per charged and discovered kind (informer.ts), each one paged LIST across the
 * cluster and then one WATCH, holding of every object only what its charge reads (fields-read.ts:
 * a pod's containers' resources and phase, a PVC's request and class, a Service's type, and the
 * identity of everything else). A namespace's listing is then read from memory: no request to
 * the kube-apiserver per settle or per periodic pass.
 *
 * It fails closed as the LIST did. A fixed kind whose cache is not synced (being listed, its watch
 * broken, over its ceiling) fails the listing; a discovered kind's is left out of its covers (its
 * reservations are left alone). A synced cache is current (a silent watch is reopened, informer.ts),
 * so a listing is as of when it was read (`asOf`), less the time an event takes to arrive, which
 * the reconciler allows for (listing-time.ts). The same caches' events are the settle signals (an object deleted or added, a pod
 * finished), and so are the differences a relist finds (a watch that missed them).
 */
export interface KindCachesOptions {
  readonly fixed: readonly KnownKind[];
  /** Every kind mapped (KNOWN_KINDS and the custom ones), for reading listed objects. */
  readonly all: readonly KnownKind[];
  readonly discover?: (signal: AbortSignal) => Promise<readonly KnownKind[]>;
  readonly discoveryTtlMs: number;
  /** Objects and bytes (the kept facts' JSON) one kind's cache may hold; past them it is emptied and fails closed. */
  readonly maxObjects: number;
  readonly maxBytes: number;
  /** How long a listing waits for a cache that is being filled (a start, a relist), in ms. */
  readonly syncWaitMs: number;
  /** Each cache's state changes (for the log): a kind that fails, is forbidden, or is over its ceiling. */
  readonly onState?: (state: CacheState) => void;
}

const SOURCE = 'kubernetes';

/** How long, and how many, deleted uids the caches remember (tombstones.ts): past any grace period, about 10 MiB at most. */
export const TOMBSTONE_KEEP_MS = 600_000;
export const TOMBSTONES_MAX = 100_000;

interface Cache {
  readonly kind: KnownKind;
  readonly fixed: boolean;
  readonly informer: Informer<KubeObject>;
  /** When a listing last asked a not-served kind's cache to list again. */
  asked: number;
}

type Listener = { readonly onSignal: (change: SettleSignal) => void; readonly onState?: (state: WatchState) => void };

export class KindCaches {
  private readonly caches = new Map<string, Cache>();
  private readonly listeners = new Set<Listener>();
  private readonly tombstones = new Tombstones({ keepMs: TOMBSTONE_KEEP_MS, max: TOMBSTONES_MAX });
  private running: { readonly stop: AbortController; readonly done: Promise<void> } | undefined;
  private applied: Promise<void> | undefined;
  private markApplied: (() => void) | undefined;

  constructor(
    private readonly ctx: Listing,
    private readonly options: KindCachesOptions,
  ) {}

  /** Starts the caches (once; later calls do nothing): the fixed kinds and, after each discovery, the kinds it serves. */
  start(): void {
    if (this.running) return;
    const stop = new AbortController();
    this.applied = new Promise((resolve) => (this.markApplied = resolve));
    const done = watchDiscoveredKinds(stop.signal, {
      fixed: this.options.fixed,
      ...(this.options.discover ? { discover: this.options.discover } : {}),
      everyMs: this.options.discoveryTtlMs,
      watch: (kind, signal) => this.runKind(kind, signal),
      onChange: ({ started, stopped }) => {
        for (const kind of started) this.tell({ resource: formatResource(kind.groupResource), state: 'started' });
        for (const kind of stopped) this.tell({ resource: formatResource(kind.groupResource), state: 'stopped' });
      },
      onDiscoveryFailed: (error) => this.tell({ resource: 'discovery', state: 'failed', error: messageOf(error) }),
    });
    this.running = { stop, done };
  }

  /** Every cached object of the namespace, as a listing; rejects (InventoryError) when a fixed kind's cache is not synced. */
  async list(namespace: string): Promise<Inventory> {
    this.start();
    const deadline = Date.now() + this.options.syncWaitMs;
    await Promise.race([this.applied, sleepFor(this.options.syncWaitMs, new AbortController().signal)]);
    const fixedMissing = this.options.fixed.find((kind) => !this.caches.has(keyOf(kind)));
    if (fixedMissing) throw this.unsynced(namespace, formatResource(fixedMissing.groupResource), 'not started');
    const covers = [];
    const raw: KubeObject[] = [];
    let asOf = Date.now();
    for (const cache of this.caches.values()) {
      const { informer, kind } = cache;
      // Not served when last listed: asked again (at most once a second) before it is taken for empty, as a CRD may be installed since.
      if (informer.state === 'not-served' && Date.now() - cache.asked >= 1000) {
        cache.asked = Date.now();
        informer.retryNow();
      }
      if (informer.state === 'listing') await informer.settled(Math.max(0, deadline - Date.now()));
      if (informer.state === 'not-served') {
        covers.push(kind.groupResource); // no object of it can exist, so none is missing
        continue;
      }
      const objects = informer.objectsIn(namespace);
      if (objects === undefined) {
        if (cache.fixed) throw this.unsynced(namespace, formatResource(kind.groupResource), informer.state);
        continue;
      }
      covers.push(kind.groupResource);
      raw.push(...objects);
      asOf = Math.min(asOf, informer.currentAt ?? asOf);
    }
    const mapped = mergeKinds(
      this.options.all,
      [...this.caches.values()].map((cache) => cache.kind),
    );
    const objects = toInventoryObjects(SOURCE, namespace, raw, covers, this.ctx.maxObjects, mapped);
    return { namespace, covers, objects, asOf, deleted: this.tombstones.in(namespace) };
  }

  /** Hears every settling change until `signal` aborts (the caches run on until close). */
  async watch(onSignal: (change: SettleSignal) => void, signal: AbortSignal, onState?: (state: WatchState) => void): Promise<void> {
    this.start();
    const listener = { onSignal, ...(onState ? { onState } : {}) };
    this.listeners.add(listener);
    await sleepFor(2 ** 31 - 1, signal).finally(() => this.listeners.delete(listener));
  }

  /** Each kind's cache now. */
  states(): CacheState[] {
    return [...this.caches.values()].map(({ kind, informer }) => ({
      resource: formatResource(kind.groupResource),
      state: informer.state,
      ...informer.size,
    }));
  }

  async close(): Promise<void> {
    this.running?.stop.abort();
    await this.running?.done;
  }

  private unsynced(namespace: string, resource: string, state: string): InventoryError {
    return new InventoryError(
      `kubernetes: namespace ${namespace}: the cache of ${resource} is not synced (${state}): nothing is settled from it until it is`,
      SOURCE,
    );
  }

  /** One kind's cache, run until its signal aborts; a forbidden kind is tried again after a discovery period, not at once. */
  private async runKind(kind: KnownKind, signal: AbortSignal): Promise<void> {
    const key = keyOf(kind);
    const fixed = this.options.fixed.some((known) => sameResource(known.groupResource, kind.groupResource));
    const resource = formatResource(kind.groupResource);
    const informer = new Informer<KubeObject>(informerTransport(this.ctx, kind, !fixed), {
      keep: (object) => keptFacts(kind, object),
      maxObjects: this.options.maxObjects,
      maxBytes: this.options.maxBytes,
      onEvent: (event, before) => this.signal(kind, event, before),
      onRelist: (changes) => this.relisted(kind, changes),
      onState: (state, detail) => {
        const error = detail?.error === undefined ? undefined : messageOf(detail.error);
        this.options.onState?.({
          resource,
          state,
          ...informer.size,
          ...(error ? { error } : {}),
          ...(detail?.waitMs ? { waitMs: detail.waitMs } : {}),
        });
        if (state === 'synced') this.tell({ resource, state: 'listed' });
        else if (state === 'broken' || state === 'over-ceiling')
          this.tell({ resource, state: 'failed', error: error ?? state, ...(detail?.waitMs ? { waitMs: detail.waitMs } : {}) });
      },
    });
    this.caches.set(key, { kind, fixed, informer, asked: 0 });
    if (this.options.fixed.every((known) => this.caches.has(keyOf(known)))) this.markApplied?.();
    try {
      while (!signal.aborted) {
        await informer.run(signal);
        if (informer.state !== 'forbidden') break;
        await sleepFor(this.options.discoveryTtlMs, signal);
      }
    } finally {
      if (this.caches.get(key)?.informer === informer) this.caches.delete(key);
    }
  }

  private signal(kind: KnownKind, event: WatchEvent, before: KubeObject | undefined): void {
    const object = event.object as KubeObject;
    const why =
      event.type === 'DELETED'
        ? 'deleted'
        : event.type === 'ADDED'
          ? 'added'
          : event.type === 'MODIFIED' && finished(kind, object) && !finished(kind, before)
            ? 'terminal'
            : undefined;
    if (why) this.emit(kind, object, why);
  }

  private relisted(kind: KnownKind, changes: Iterable<RelistChange<KubeObject>>): void {
    for (const { before, after } of changes) {
      if (!after) this.emit(kind, before!, 'deleted');
      else if (!before) this.emit(kind, after, 'added');
      else if (finished(kind, after) && !finished(kind, before)) this.emit(kind, after, 'terminal');
    }
  }

  private emit(kind: KnownKind, object: KubeObject, why: SettleSignal['why']): void {
    const { namespace, uid, name } = object.metadata ?? {};
    if (typeof namespace !== 'string' || typeof uid !== 'string' || typeof name !== 'string') return;
    if (why === 'deleted') this.tombstones.add(namespace, uid);
    for (const listener of this.listeners) listener.onSignal({ namespace, groupResource: kind.groupResource, uid, name, why });
  }

  private tell(state: WatchState): void {
    for (const listener of this.listeners) listener.onState?.(state);
  }
}

const keyOf = (kind: KnownKind): string => formatResource(kind.groupResource);

const PODS = { group: '', resource: 'pods' };

/** Whether a pod has reached Succeeded or Failed (another kind never finishes). */
function finished(kind: KnownKind, object: KubeObject | undefined): boolean {
  if (!object || !sameResource(kind.groupResource, PODS)) return false;
  const status = isRecord(object['status']) ? object['status'] : {};
  return status['phase'] === 'Succeeded' || status['phase'] === 'Failed';
}

/** What a cache keeps of an object: the fields its charge reads, under the kind's own apiVersion and kind. */
export function keptFacts(kind: KnownKind, object: Record<string, unknown>): KubeObject | undefined {
  if (!isRecord(object['metadata'])) return undefined;
  return selectObject(kind.groupResource, { ...object, apiVersion: kind.apiVersion, kind: kind.kind } as KubeObject);
}

/** The cluster-wide list (paged, metadata-only where the charge needs no spec) and watch of one kind. */
export function informerTransport(ctx: Listing, kind: KnownKind, optional: boolean): InformerTransport {
  const path = collectionPath(kind);
  const watch = collectionTransport(ctx, path, needsWholeObject(kind.groupResource) ? 'whole' : 'metadata');
  return {
    async listPage(token, signal, whole) {
      try {
        const listed = await page(ctx, path, 'cluster', kind, token, signal, whole ? undefined : ctx.pageSize, optional);
        if (listed.notServed) throw new InformerNotServed(`the cluster does not serve ${formatResource(kind.groupResource)}`);
        const items = listed.items.filter(isRecord);
        return {
          items,
          ...(listed.resourceVersion ? { resourceVersion: listed.resourceVersion } : {}),
          ...(listed.next ? { continue: listed.next } : {}),
        };
      } catch (error) {
        if (error instanceof Forbidden) throw new InformerForbidden(error.message);
        if (error instanceof ContinueExpired) throw new WatchGone(error.message);
        throw error;
      }
    },
    watch: (resourceVersion, signal, onOpen) => watch.watch(resourceVersion, signal, onOpen),
  };
}
