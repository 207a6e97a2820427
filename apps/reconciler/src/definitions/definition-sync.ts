import { LAST_APPLIED_BY_ANNOTATION, MANAGED_BY_ANNOTATION } from '@quota/domain';
import { runWatchLoop, type WatchEvent } from '@quota/inventory';
import { LedgerError, type WriteOptions } from '@quota/ledger';
import type { ClusterObject, ClusterObjectApi, ObjectStatus } from './cluster-object-api.js';

/** Annotations of the object never copied into the ledger: ours, and kubectl's copy of the whole object. */
const DROPPED_ANNOTATION = /^quota-ledger\.io\/|^kubectl\.kubernetes\.io\/last-applied-configuration$/;

/** Who a ledger change from the cluster is recorded as. */
export interface Author {
  readonly actor: string;
  readonly onBehalfOf?: string;
}

/** An object's labels and annotations as the ledger keeps them (ledgerMetadata). */
export type LedgerMetadata = ReturnType<typeof ledgerMetadata>;

/** What a status shows of the ledger: the definition's hard and used. */
export interface LedgerTotals {
  readonly hard: Record<string, string>;
  readonly used: Record<string, string>;
}

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
  /** Every ledger definition of the kind marked as managed by `managedBy` (namespace '' for a cluster-wide one). */
  held(managedBy: string): Promise<readonly { readonly namespace: string; readonly name: string }[]>;
  remove(namespace: string, name: string, options: WriteOptions): Promise<unknown>;
}

export interface DefinitionSyncOptions {
  /** Who removals are recorded as (the cluster does not say who deleted an object). */
  readonly actor?: string;
  readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

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
 * Cluster objects of one kind → the ledger, and the ledger's usage → their status. The cluster
 * object is the source of truth of a definition that came from it: each object is put into the
 * ledger through the REST PUT's command (an unchanged one appends nothing), recorded as made by its
 * author (authorOf); a ledger definition marked as from the cluster whose object is gone is
 * removed; a kind with a status gets the ledger's hard and used in it, written only when they
 * differ. A pass acts only on a complete listing.
 */
export class DefinitionSync<D = unknown, V = unknown> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** A change was reported while a pass ran: one more pass follows it. */
  private again = false;
  private stopped = false;
  private readonly watching = new AbortController();
  private watch: Promise<void> | undefined;
  private listings = 0;
  private failing = false;
  /**
   * The resourceVersions our status writes gave objects, in this pass and the one before: their
   * MODIFIED events are our own, and start no pass (else, while admissions move `used`, each pass's
   * writes would start the next one, back to back).
   */
  private ownNow = new Set<string>();
  private ownBefore = new Set<string>();
  /** MODIFIED events that came while a pass ran (its writes not all answered yet): judged when it ends. */
  private heldBack: string[] = [];

  constructor(
    private readonly kind: SyncedKind<D, V>,
    private readonly api: ClusterObjectApi,
    private readonly options: DefinitionSyncOptions = {},
  ) {}

  /**
   * A pass now, after every change the kind's watch reports (an object applied with kubectl
   * governs within a second), and every `intervalMs` (the safety net, and the status's used).
   * Never two passes at once; a failed pass is logged, the next one tries again.
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

  /** A watch event: a pass, unless it is a MODIFIED our own status write caused. */
  private onEvent(event: WatchEvent): void {
    const metadata = event.object['metadata'] as { resourceVersion?: unknown } | undefined;
    const version = typeof metadata?.resourceVersion === 'string' ? metadata.resourceVersion : undefined;
    if (event.type !== 'MODIFIED' || version === undefined) return this.changed();
    if (this.running) this.heldBack.push(version);
    else if (!this.own(version)) this.changed();
  }

  private own(version: string): boolean {
    return this.ownNow.has(version) || this.ownBefore.has(version);
  }

  /** Told of a change of one of the kind's objects: a pass as soon as none runs. */
  changed(): void {
    this.failing = false;
    this.pass(true);
  }

  /** Stops the passes and the watch, and waits for the pass in hand. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.watching.abort();
    await this.watch;
    await this.running;
  }

  /** A pass now, unless one runs: then a change (`follow`) gets one right after it, a tick none. */
  private pass(follow: boolean): void {
    if (this.stopped) return;
    if (this.running) {
      this.again ||= follow;
      return;
    }
    this.ownBefore = this.ownNow;
    this.ownNow = new Set();
    this.running = this.sync()
      .catch((error: unknown) => this.options.log?.('warn', `${this.kind.label} not synced this time`, { error: (error as Error).message }))
      .finally(() => {
        this.running = undefined;
        const foreign = this.heldBack.some((version) => !this.own(version));
        this.heldBack = [];
        if (this.again || foreign) {
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
      if (this.listings++ > 0) this.changed();
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

  async sync(): Promise<DefinitionSyncOutcome> {
    const objects = await this.api.list();
    // The kind is not served (a CRD not installed): nothing comes from the cluster, and nothing is removed.
    if (!objects) return { put: 0, removed: 0, statuses: 0, refused: 0 };
    const outcome = { put: 0, removed: 0, statuses: 0, refused: 0 };
    for (const object of objects) await this.syncOne(object, outcome);
    outcome.removed = await this.removeOrphans(new Set(objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)));
    if (outcome.put + outcome.removed + outcome.refused > 0)
      this.options.log?.('info', `${this.kind.label} synced from the cluster`, { ...outcome });
    return outcome;
  }

  private async syncOne(object: ClusterObject, outcome: { put: number; statuses: number; refused: number }): Promise<void> {
    const { namespace, name } = object.metadata;
    let status: ObjectStatus;
    try {
      const definition = this.kind.definitionOf(object, ledgerMetadata(object, this.kind.managedBy));
      const result = await this.kind.put(namespace, definition, authorOf(object, this.options.actor));
      if (result.changed) outcome.put++;
      const { hard, used } = this.kind.totals?.(result.view) ?? { hard: {}, used: {} };
      status = { hard, used, ...generation(object), conditions: [condition(object, 'True', 'Synced', 'the ledger holds this definition')] };
    } catch (error) {
      // An invalid spec (or one the ledger refuses): the ledger keeps what it had, the status (if any) says why.
      outcome.refused++;
      const message = (error as Error).message;
      this.options.log?.('warn', `one of the ${this.kind.label} was not put into the ledger`, { namespace, name, error: message });
      status = { ...object.status, ...generation(object), conditions: [condition(object, 'False', 'Refused', message)] };
    }
    if (!this.kind.totals || sameStatus(object.status, status)) return;
    const written = await this.api.updateStatus(object, status, (version) => this.ownNow.add(version));
    // A conflict or a deletion since the listing: the next pass sees the object as it is now.
    if (written === 'updated') outcome.statuses++;
  }

  private async removeOrphans(present: ReadonlySet<string>): Promise<number> {
    const orphans: { namespace: string; name: string }[] = [];
    for (const held of await this.kind.held(this.kind.managedBy)) if (!present.has(`${held.namespace}/${held.name}`)) orphans.push(held);
    let removed = 0;
    for (const { namespace, name } of orphans) {
      try {
        await this.kind.remove(namespace, name, { actor: this.options.actor ?? 'system:reconciler' });
        removed++;
      } catch (error) {
        // Another replica's pass removed it first.
        if (!(error instanceof LedgerError && error.code === 'NotFound')) throw error;
      }
    }
    return removed;
  }
}

/** The sync of one kind, made of the ledger's commands `ledger` gives it: `new (ledger, api, options)`. */
export function syncOf<L, D, V>(kindOf: (ledger: L) => SyncedKind<D, V>) {
  return class extends DefinitionSync<D, V> {
    constructor(ledger: L, api: ClusterObjectApi, options: DefinitionSyncOptions = {}) {
      super(kindOf(ledger), api, options);
    }
  };
}

/** The object as the body of the REST PUT whose command puts it (`apiVersion`, `kind`): its name, its namespace if it has one, its spec. */
export function restBody(object: ClusterObject, apiVersion: string, kind: string): Record<string, unknown> {
  const { name, namespace } = object.metadata;
  return { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) }, spec: object.spec ?? {} };
}

/** The hard and used of a view that has them (a quota's, a shared quota's). */
export const totalsOf = (view: LedgerTotals): LedgerTotals => ({ hard: view.hard, used: view.used });

/** The object's labels and annotations as the ledger keeps them: ours and kubectl's dropped, marked as from the cluster's `managedBy`. */
export function ledgerMetadata(
  object: ClusterObject,
  managedBy: string,
): { labels?: Record<string, string>; annotations: Record<string, string> } {
  const { labels } = object.metadata;
  const kept = Object.entries(object.metadata.annotations ?? {}).filter(([key]) => !DROPPED_ANNOTATION.test(key));
  return { ...(labels ? { labels } : {}), annotations: { ...Object.fromEntries(kept), [MANAGED_BY_ANNOTATION]: managedBy } };
}

/**
 * Who changed the object: the user our mutating webhook stamped (LAST_APPLIED_BY_ANNOTATION, from
 * the kube-apiserver's userInfo), recorded as the reconciler acting on their behalf; without it (an
 * object in a namespace the webhook leaves out, or written before it was registered), the manager
 * of the newest managedFields entry of the main resource (`kubectl-client-side-apply`,
 * `argocd-controller`): the client that wrote, not the user, for managedFields name no user.
 */
export function authorOf(object: ClusterObject, reconciler = 'system:reconciler'): Author {
  const user = object.metadata.annotations?.[LAST_APPLIED_BY_ANNOTATION];
  if (user) return { actor: reconciler, onBehalfOf: user };
  const entries = (object.metadata.managedFields ?? []).filter((e) => e.subresource === undefined || e.subresource === '');
  const newest = entries.reduce<(typeof entries)[number] | undefined>(
    (best, e) => (!best || (e.time ?? '') >= (best.time ?? '') ? e : best),
    undefined,
  );
  return { actor: `kubernetes:${newest?.manager ?? 'unknown'}` };
}

function generation(object: ClusterObject): { observedGeneration?: number } {
  return object.metadata.generation === undefined ? {} : { observedGeneration: object.metadata.generation };
}

type Condition = NonNullable<ObjectStatus['conditions']>[number];

/** The Synced condition; its transition time moves only when its status does. */
function condition(object: ClusterObject, status: 'True' | 'False', reason: string, message: string): Condition {
  const before = object.status?.conditions?.find((c) => c.type === 'Synced');
  const lastTransitionTime =
    before?.status === status && before.lastTransitionTime ? before.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { type: 'Synced', status, reason, message: message.slice(0, 1000), lastTransitionTime };
}

function sameStatus(a: ObjectStatus | undefined, b: ObjectStatus): boolean {
  const canonical = (s: ObjectStatus | undefined) =>
    JSON.stringify({
      hard: sorted(s?.hard),
      used: sorted(s?.used),
      observedGeneration: s?.observedGeneration,
      conditions: (s?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message, c.lastTransitionTime]),
    });
  return canonical(a) === canonical(b);
}

function sorted(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([x], [y]) => x.localeCompare(y));
}
