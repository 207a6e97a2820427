import { runWatchLoop, type WatchEvent } from '@quota/inventory';
import { LedgerError, type WriteOptions } from '@quota/ledger';
import type { ClusterObject, ClusterObjectApi, ObjectStatus } from './cluster-object-api.js';
import {
  authorOf,
  condition,
  generation,
  ledgerMetadata,
  sameStatus,
  type Author,
  type LedgerMetadata,
  type LedgerTotals,
} from './definition-object.js';
import { KeyedQueue } from './keyed-queue.js';

/**
 * One kind of cluster object, as the sync copies it into the ledger: how an object becomes the
 * ledger's definition `D` (what the REST PUT stores of the same body), and the ledger's commands
 * for `D`, whose put answers a view `V`. The sync does the rest, the same for every kind.
 */
export interface SyncedKind<D, V> {
  /** What logs call its objects ("ledger quotas"). */
  readonly label: string;
  /** The quota-ledger.io/managed-by its ledger definitions from the cluster carry. */
  readonly managedBy: string;
  /** The object as the ledger's definition, with `metadata` (its labels and annotations, marked as managed); throws when its spec is invalid. */
  definitionOf(object: ClusterObject, metadata: LedgerMetadata): D;
  /** Puts it into the ledger through the REST PUT's command; throws when the ledger refuses it. */
  put(namespace: string, definition: D, author: Author): Promise<{ readonly changed: boolean; readonly view: V }>;
  /** A kind whose objects have a status the reconciler writes: the ledger's hard and used in a view. */
  totals?(view: V): LedgerTotals;
  /**
   * Every ledger definition of the kind marked as managed by `managedBy` (namespace '' for a
   * cluster-wide one); given `namespace`, at least those of it (a deletion's check reads one namespace, not every one).
   */
  held(managedBy: string, namespace?: string): Promise<readonly { readonly namespace: string; readonly name: string }[]>;
  remove(namespace: string, name: string, options: WriteOptions): Promise<unknown>;
}

export interface DefinitionSyncOptions {
  /** Who removals are recorded as (the cluster does not say who deleted an object). */
  readonly actor?: string;
  readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /** Objects synced at once (default DEFAULT_SYNC_CONCURRENCY). */
  readonly concurrency?: number;
}

/** How many objects of a kind are synced at once: a change waits for at most these in hand. */
export const DEFAULT_SYNC_CONCURRENCY = 4;

export interface DefinitionSyncOutcome {
  /** Definitions put or changed in the ledger from their object. */
  readonly put: number;
  /** Ledger definitions from the cluster whose object is gone, removed. */
  readonly removed: number;
  /** Objects whose status was written. */
  readonly statuses: number;
  /** Objects the ledger refused (invalid spec): their status, if the kind has one, says why. */
  readonly refused: number;
}

/**
 * What the queue holds of a key: the object as last seen, or that it is gone from the cluster
 * (`held`: the pass just read that the cluster holds its ledger definition, so it is not asked again).
 */
type Seen = ClusterObject | { readonly gone: true; readonly held: boolean };

const NOTHING: DefinitionSyncOutcome = { put: 0, removed: 0, statuses: 0, refused: 0 };

/**
 * Cluster objects of one kind → the ledger, and the ledger's usage → their status. The cluster
 * object is the source of truth of a definition that came from it: each object is put into the
 * ledger through the REST PUT's command (an unchanged one appends nothing), recorded as made by its
 * author (authorOf); a ledger definition marked as from the cluster whose object is gone is
 * removed; a kind with a status gets the ledger's hard and used in it, written only when they
 * differ.
 *
 * As Kubernetes' controllers work: the kind is watched whole, and each event queues its object by
 * key (namespace/name) in a KeyedQueue, ahead of routine work; a worker syncs that one object (or,
 * for a DELETED, removes its definition if the cluster held it). A change governs admission after
 * the keys in hand, never after a pass over the kind. The periodic pass (the safety net, and the
 * status's used) lists the kind and queues every object behind the changes; it leaves alone the
 * keys an event touched since its listing began (the event's object is at least as new), and acts
 * only on a complete listing.
 */
export class DefinitionSync<D = unknown, V = unknown> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** A relist came while a pass ran: one more pass follows it. */
  private again = false;
  private stopped = false;
  private readonly watching = new AbortController();
  private watch: Promise<void> | undefined;
  private listings = 0;
  private failing = false;
  /**
   * The resourceVersions our status writes gave objects, in this pass and the one before: their
   * MODIFIED events are our own, and queue nothing (else, while admissions move `used`, each
   * write would queue the object for another write, back to back).
   */
  private ownNow = new Set<string>();
  private ownBefore = new Set<string>();
  /** MODIFIED events of a key in hand (its status write not answered yet): judged when the worker lets it go. */
  private readonly heldBack = new Map<string, ClusterObject>();
  /** Keys a watch event queued since the pass in hand began its listing. */
  private readonly touched = new Set<string>();
  private readonly tally = { ...NOTHING };
  private readonly queue: KeyedQueue<Seen>;

  constructor(
    private readonly kind: SyncedKind<D, V>,
    private readonly api: ClusterObjectApi,
    private readonly options: DefinitionSyncOptions = {},
  ) {
    this.queue = new KeyedQueue((key, seen) => this.work(key, seen), {
      concurrency: options.concurrency ?? DEFAULT_SYNC_CONCURRENCY,
      onError: (key, error) =>
        this.options.log?.('warn', `one of the ${this.kind.label} not synced this time`, { key, error: (error as Error).message }),
    });
  }

  /**
   * A pass now and every `intervalMs` (the safety net, and the status's used); between them each
   * change the kind's watch reports is synced at once (an object applied with kubectl governs
   * within a second). Never two passes at once; a failed pass is logged, the next one tries again.
   */
  start(intervalMs: number): void {
    this.pass(false);
    this.timer = setInterval(() => this.pass(false), intervalMs);
    const changes = this.api.changes;
    if (changes)
      this.watch = runWatchLoop(changes, this.watching.signal, {
        onEvent: (event) => this.onEvent(event),
        onState: (state, detail) => this.watchState(state, detail),
      });
  }

  /** Stops the passes and the watch, drops what is queued, and waits for the work in hand. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.watching.abort();
    const drained = this.queue.stop();
    await this.watch;
    await this.running;
    await drained;
  }

  /** A watch event: its object queued ahead of routine work, unless it is a MODIFIED our own status write caused. */
  private onEvent(event: WatchEvent): void {
    const object = clusterObjectOf(event.object);
    if (!object) return;
    this.failing = false;
    const key = keyOf(object.metadata);
    const version = object.metadata.resourceVersion;
    if (event.type === 'MODIFIED' && version !== undefined) {
      if (this.own(version)) return;
      if (this.queue.holds(key)) {
        this.touched.add(key);
        this.heldBack.set(key, object);
        return;
      }
    }
    this.touched.add(key);
    this.queue.add(key, event.type === 'DELETED' ? { gone: true, held: false } : object, true);
  }

  private own(version: string | undefined): boolean {
    return version !== undefined && (this.ownNow.has(version) || this.ownBefore.has(version));
  }

  /** One key: its object synced, or its definition removed if the cluster held it and the object is gone. */
  private async work(key: string, seen: Seen): Promise<void> {
    try {
      if ('gone' in seen) await this.removeIfHeld(key, seen.held);
      else await this.syncOne(seen);
    } finally {
      const held = this.heldBack.get(key);
      this.heldBack.delete(key);
      // Queued again (after this worker lets the key go) unless it was our own write's.
      if (held && !this.own(held.metadata.resourceVersion)) this.queue.add(key, held, true);
    }
  }

  /** A pass now, unless one runs: then a relist (`follow`) gets one right after it, a tick none. */
  private pass(follow: boolean): void {
    if (this.stopped) return;
    if (this.running) {
      this.again ||= follow;
      return;
    }
    this.running = this.sync()
      .catch((error: unknown) => this.options.log?.('warn', `${this.kind.label} not synced this time`, { error: (error as Error).message }))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.pass(false);
        }
      });
  }

  /** Logs the watch starting, and its first failure in a row (it retries with a backoff up to 30 s). */
  private watchState(state: 'listed' | 'relist' | 'failed' | 'resumed', detail?: { error?: unknown; waitMs?: number }): void {
    if (state === 'listed') {
      if (this.listings === 0 || this.failing) this.options.log?.('info', `watching ${this.kind.label}`);
      // A listing after the first (the server forgot the watch's point): changes may have been missed.
      if (this.listings++ > 0) this.pass(true);
      this.failing = false;
      return;
    }
    if (state !== 'failed' || this.failing) return;
    this.failing = true;
    const error = (detail?.error as Error | undefined)?.message ?? '';
    // A CRD not installed: the periodic pass finds nothing either, and the watch starts once it is served.
    const why = /HTTP 404\b/.test(error)
      ? 'not served by the cluster (its CRD not installed?); watched once it is'
      : 'the watch failed; the periodic pass still syncs them';
    this.options.log?.(/HTTP 404\b/.test(error) ? 'info' : 'warn', `${this.kind.label}: ${why}`, { error, retryInMs: detail?.waitMs });
  }

  /**
   * One pass: every object of the kind queued behind the changes, every ledger definition the
   * cluster held whose object is gone queued for removal, and the queue worked through. What it
   * did (and the changes synced meanwhile) is its outcome.
   */
  async sync(): Promise<DefinitionSyncOutcome> {
    this.ownBefore = this.ownNow;
    this.ownNow = new Set();
    this.touched.clear();
    const before = { ...this.tally };
    const objects = await this.api.list();
    // The kind is not served (a CRD not installed): nothing comes from the cluster, and nothing is removed.
    if (!objects) return NOTHING;
    const listed = new Set<string>();
    for (const object of objects) {
      const key = keyOf(object.metadata);
      listed.add(key);
      if (!this.touched.has(key)) this.queue.add(key, object, false);
    }
    for (const held of await this.kind.held(this.kind.managedBy)) {
      const key = keyOf(held);
      if (!listed.has(key) && !this.touched.has(key)) this.queue.add(key, { gone: true, held: true }, false);
    }
    await this.queue.idle();
    const outcome = {
      put: this.tally.put - before.put,
      removed: this.tally.removed - before.removed,
      statuses: this.tally.statuses - before.statuses,
      refused: this.tally.refused - before.refused,
    };
    if (outcome.put + outcome.removed + outcome.refused > 0)
      this.options.log?.('info', `${this.kind.label} synced from the cluster`, { ...outcome });
    return outcome;
  }

  private async syncOne(object: ClusterObject): Promise<void> {
    const { namespace, name } = object.metadata;
    let status: ObjectStatus;
    try {
      const definition = this.kind.definitionOf(object, ledgerMetadata(object, this.kind.managedBy));
      const result = await this.kind.put(namespace, definition, authorOf(object, this.options.actor));
      if (result.changed) this.tally.put++;
      const { hard, used } = this.kind.totals?.(result.view) ?? { hard: {}, used: {} };
      status = { hard, used, ...generation(object), conditions: [condition(object, 'True', 'Synced', 'the ledger holds this definition')] };
    } catch (error) {
      // An invalid spec (or one the ledger refuses): the ledger keeps what it had, the status (if any) says why.
      this.tally.refused++;
      const message = (error as Error).message;
      this.options.log?.('warn', `one of the ${this.kind.label} was not put into the ledger`, { namespace, name, error: message });
      status = { ...object.status, ...generation(object), conditions: [condition(object, 'False', 'Refused', message)] };
    }
    if (!this.kind.totals || sameStatus(object.status, status)) return;
    const written = await this.api.updateStatus(object, status, (version) => this.ownNow.add(version));
    // A conflict or a deletion since it was seen: its watch event (or the next pass) brings it as it is now.
    if (written === 'updated') this.tally.statuses++;
  }

  /** The ledger definition of `key` removed, if the cluster held it (a REST-made one of the same name stays); `known`: the caller just read that it does. */
  private async removeIfHeld(key: string, known: boolean): Promise<void> {
    const slash = key.indexOf('/');
    const [namespace, name] = [key.slice(0, slash), key.slice(slash + 1)];
    if (!known && !(await this.kind.held(this.kind.managedBy, namespace)).some((h) => h.namespace === namespace && h.name === name)) return;
    try {
      await this.kind.remove(namespace, name, { actor: this.options.actor ?? 'system:reconciler' });
      this.tally.removed++;
    } catch (error) {
      // Another replica removed it first.
      if (!(error instanceof LedgerError && error.code === 'NotFound')) throw error;
    }
  }
}

/** namespace/name ('' for a cluster-wide object's namespace): names hold no '/'. */
const keyOf = (at: { readonly namespace: string; readonly name: string }): string => `${at.namespace}/${at.name}`;

/** A watch event's object as the sync reads it (a cluster-wide one's namespace ''), or undefined without a name. */
function clusterObjectOf(raw: Record<string, unknown>): ClusterObject | undefined {
  const metadata = raw['metadata'] as (Record<string, unknown> & ClusterObject['metadata']) | undefined;
  if (typeof metadata !== 'object' || metadata === null || typeof metadata.name !== 'string' || metadata.name === '') return undefined;
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  return { ...(raw as unknown as ClusterObject), metadata: { ...metadata, namespace } };
}

/** The sync of one kind, made of the ledger's commands `ledger` gives it: `new (ledger, api, options)`. */
export function syncOf<L, D, V>(kindOf: (ledger: L) => SyncedKind<D, V>) {
  return class extends DefinitionSync<D, V> {
    constructor(ledger: L, api: ClusterObjectApi, options: DefinitionSyncOptions = {}) {
      super(kindOf(ledger), api, options);
    }
  };
}
