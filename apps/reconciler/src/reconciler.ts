import { clusterNamespaceRecord, sameNamespaceMetadata } from '@quota/domain';
import type { ClusterNamespace, InventorySource } from '@quota/inventory';
import {
  bullConnection,
  FAN_OUT_JOB,
  NAMESPACE_JOB,
  NAMESPACE_OBJECT_JOB,
  namespaceJobOptions,
  RECONCILE_QUEUE,
  reconcileQueue,
  SCHEDULER_ID,
  type NamespaceJobData,
  type QueueBackend,
} from '@quota/jobs';
import type { ClusterQueries, ClusterWriter, DefinitionQueries, LedgerCommands, ReconcileOutcome } from '@quota/ledger';
import { Worker, type Job, type Queue } from 'bullmq';
import type { ManagedLabels } from './managed-labels.js';
import { CACHE_DELIVERY_MARGIN_MS, listingTime } from './listing-time.js';
import { WatchSettler } from './settle-on-watch.js';
import { watchStateLog } from './watch-state-log.js';
import { UncoveredReports } from './uncovered.js';

export interface ReconcilerOptions {
  /** Every namespace is reconciled this often. */
  readonly intervalMs: number;
  /** A reservation younger than this is never released as stale. */
  readonly graceMs: number;
  /** Namespace jobs one process runs at once. */
  readonly concurrency: number;
  /** Who the appended events name as their actor. */
  readonly actor?: string;
  /** Namespaces read per page while fanning out. */
  readonly fanOutPageSize?: number;
  /** Attempts of a namespace job whose listing failed, with exponential backoff. */
  readonly attempts?: number;
  /** The first retry's delay of a failed namespace job, in ms (doubled at each). */
  readonly retryDelayMs?: number;
  /** Namespaces whose uncovered reservations are remembered at most (UNCOVERED_NAMESPACES_MAX). */
  readonly uncoveredNamespacesMax?: number;
  /**
   * Watch the cluster (when the inventory can: kubernetes) and settle a namespace as soon as one
   * of its objects is deleted or a pod of it finishes, and shortly after objects are added to it
   * (settle-on-watch.ts). Default true.
   */
  readonly watch?: boolean;
  /** How long an addition waits for the rest of its burst before its namespace is settled, in ms (default 500). */
  readonly coalesceMs?: number;
  /**
   * The managed label (MANAGED_NAMESPACE_LABEL), where the webhooks are sent only labelled
   * namespaces: put in place before a namespace's first count (which waits for it), and brought
   * up to date over every Namespace at each fan-out. Absent: no label, every listing may count.
   */
  readonly labels?: ManagedLabels;
  readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** Namespaces whose unreadable objects the log remembers having said (beyond it, one may be said again). */
const UNREADABLE_NAMESPACES_MAX = 10_000;

/**
 * A namespace's unconfirmed webhook reservations are said in the log when they reach this many,
 * and again only after they fell below half of it (the gauge counts every one). Creates in flight
 * and the odd one another webhook refused after ours are a handful at a time; forged reviews come
 * by the hundred (300 from one address in 2.8 s).
 */
export const UNCONFIRMED_SAID = 100;

export interface ReconcilerStats {
  namespaces: number;
  committed: number;
  released: number;
  /** Committed objects found terminal (a pod Succeeded, Failed or past its grace period): their compute charge released. */
  terminated: number;
  adopted: number;
  /** Objects listed at other usage than the ledger held, with nothing of them waiting: charged as listed from then on. */
  remeasured: number;
  /** Listed objects left out of a pass because they could not be read (each pass that met one counts it). */
  unreadable: number;
  /** Reservations released because their object never appeared within the grace period (`stale`). */
  neverCreated: number;
  failures: number;
  /** Namespace objects recorded or changed from the inventory's listing. */
  namespacesRecorded: number;
  /** Namespace objects removed because the cluster no longer has them. */
  namespacesRemoved: number;
}

/**
 * What the reconciler needs of the ledger: its clock (listings are timed on it), the namespaces
 * with a stream, and the command that appends corrections. the service composes it from
 * LedgerCommands and DefinitionQueries (reconciler-service.ts).
 */
export type ReconcilerLedger = Pick<LedgerCommands, 'now' | 'reconcile'> &
  Pick<DefinitionQueries, 'namespaces'> &
  Partial<Pick<DefinitionQueries, 'namespaceManaged' | 'managedNamespaces' | 'awaitingFirstCount'>> &
  Partial<NamespaceRecords>;

/** Where the Namespace objects are recorded (ClusterWriter and ClusterQueries): without it, the reconciler leaves them alone. */
export type NamespaceRecords = Pick<ClusterWriter, 'putNamespace' | 'deleteNamespace'> & Pick<ClusterQueries, 'namespaceObjects'>;

/**
 * The reconciler: a BullMQ job scheduler fans out one job per namespace every interval
 * (BullMQ deduplicates them while one is pending, so any number of replicas and producers
 * queue each namespace once, and a job that failed never blocks the next interval's);
 * each job lists the namespace's objects from the inventory source and appends commit /
 * release / adopt events through the ledger (never a recount).
 */
export class Reconciler {
  readonly queue: Queue<NamespaceJobData>;
  readonly stats: ReconcilerStats = {
    namespaces: 0,
    committed: 0,
    released: 0,
    terminated: 0,
    adopted: 0,
    remeasured: 0,
    unreadable: 0,
    neverCreated: 0,
    failures: 0,
    namespacesRecorded: 0,
    namespacesRemoved: 0,
  };
  /** Per namespace, the unreadable objects its last pass met (said in the log when they change; bounded). */
  private readonly unreadableSaid = new Map<string, string>();
  /** Per namespace, the live reservations of kinds the inventory does not list (bounded: uncovered.ts). */
  readonly uncovered: UncoveredReports;
  /** Settles namespaces on watch events; undefined when not watching. */
  readonly settler: WatchSettler | undefined;
  private worker: Worker<NamespaceJobData> | undefined;
  private keeper: NodeJS.Timeout | undefined;
  private watching: { readonly stop: AbortController; readonly done: Promise<void> } | undefined;
  /** Resources whose watch is failing now (said once in the log, counted in a gauge). */
  readonly watchesFailing = new Set<string>();

  constructor(
    private readonly ledger: ReconcilerLedger,
    private readonly inventory: InventorySource,
    private readonly backend: QueueBackend,
    private readonly options: ReconcilerOptions,
  ) {
    this.queue = reconcileQueue(backend);
    this.uncovered = new UncoveredReports(2 * options.intervalMs, options.uncoveredNamespacesMax);
    this.settler =
      options.watch !== false && inventory.watchSettlements
        ? new WatchSettler((namespace) => this.settleOnWatch(namespace), options.log, {
            ...(options.coalesceMs === undefined ? {} : { coalesceMs: options.coalesceMs }),
            ...(inventory.cacheStates ? { urgentDelayMs: CACHE_DELIVERY_MARGIN_MS } : {}),
            maxSettles: options.concurrency, // as many as the queue's jobs: they share the database pool
          })
        : undefined;
  }

  /** Whether this reconciler settles on watch events (the periodic pass is then only a safety net). */
  get watches(): boolean {
    return this.settler !== undefined;
  }

  private startWatching(): void {
    const settler = this.settler;
    const watch = this.inventory.watchSettlements?.bind(this.inventory);
    if (!settler || !watch) return;
    const stop = new AbortController();
    const done = watch((change) => settler.signal(change), stop.signal, watchStateLog(this.watchesFailing, this.options.log)).catch(
      (error: unknown) => this.options.log?.('error', 'watch stopped', { error: (error as Error).message }),
    );
    this.watching = { stop, done };
  }

  private schedule(): Promise<unknown> {
    return this.queue.upsertJobScheduler(
      SCHEDULER_ID,
      { every: this.options.intervalMs },
      {
        name: FAN_OUT_JOB,
        data: { namespace: '', reason: 'interval' },
        opts: { removeOnComplete: true, removeOnFail: 100 },
      },
    );
  }

  /** Registers the repeating fan-out (idempotent across replicas) and starts working. */
  async start(): Promise<void> {
    await this.schedule();
    // A Redis that restarted empty has lost the scheduler: register it again every interval (idempotent).
    this.keeper = setInterval(() => void this.schedule().catch(() => undefined), this.options.intervalMs);
    const { options, factory } = bullConnection(this.backend);
    const workerOptions = { ...options, concurrency: this.options.concurrency };
    const processor = (job: Job<NamespaceJobData>): Promise<unknown> => this.process(job);
    this.worker = factory
      ? new Worker<NamespaceJobData>(RECONCILE_QUEUE, processor, workerOptions as never, factory as never)
      : new Worker<NamespaceJobData>(RECONCILE_QUEUE, processor, workerOptions);
    this.worker.on('failed', (job, error) => {
      this.stats.failures++;
      this.options.log?.('warn', 'reconcile job failed', {
        job: job?.id,
        namespace: job?.data.namespace,
        attempt: job?.attemptsMade,
        error: error.message,
      });
    });
    this.worker.on('error', (error) => this.options.log?.('error', 'reconcile worker error', { error: error.message }));
    this.startWatching();
  }

  /** Queues one namespace now or after a delay; a job already waiting for it absorbs this one. */
  async enqueue(namespace: string, reason: string, delayMs = 0): Promise<void> {
    await this.queue.add(NAMESPACE_JOB, { namespace, reason }, this.jobOptions(namespace, reason, delayMs));
  }

  /**
   * A watch event's settle: the namespace reconciled, unless the ledger says nothing is managed
   * there (false, without listing it): a namespace becoming managed is counted by its own reconcile.
   */
  private async settleOnWatch(namespace: string): Promise<boolean> {
    if (this.ledger.namespaceManaged && !(await this.ledger.namespaceManaged(namespace))) return false;
    await this.reconcileNamespace(namespace);
    return true;
  }

  /**
   * Lists the namespace's objects and appends the corrections. A namespace awaiting its first
   * count gets its managed label first (ManagedLabels.ensure), and the listing begins only once
   * the label is in place: otherwise it corrects, counts nothing, and the job fails (retried).
   */
  async reconcileNamespace(namespace: string): Promise<ReconcileOutcome> {
    const labels = this.options.labels;
    const awaiting = labels !== undefined && (await this.ledger.awaitingFirstCount?.(namespace)) === true;
    const countable = labels !== undefined && awaiting ? await labels.ensure(namespace) : true;
    const [localAt, ledgerAt] = [Date.now(), await this.ledger.now()];
    const inventory = await this.inventory.list(namespace);
    const listedAt = listingTime(ledgerAt, localAt, inventory.asOf);
    const outcome = await this.ledger.reconcile(
      namespace,
      {
        covers: inventory.covers,
        objects: inventory.objects,
        listedAt,
        ...(inventory.deleted?.length ? { deleted: inventory.deleted } : {}),
        ...(countable ? {} : { countable: false }),
      },
      { actor: this.options.actor ?? 'system:reconciler', graceMs: this.options.graceMs },
    );
    this.noteOutcome(namespace, outcome, listedAt);
    if (!countable)
      throw new Error(
        `namespace ${namespace}: its managed label is not in place, so its first count waits (the webhooks are not sent its writes until it is)`,
      );
    return outcome;
  }

  private noteOutcome(namespace: string, outcome: ReconcileOutcome, listedAt: number): void {
    this.stats.namespaces++;
    for (const action of outcome.actions) {
      if (action.kind === 'commit') this.stats.committed++;
      else if (action.kind === 'release') {
        this.stats.released++;
        if (action.reason === 'stale') this.stats.neverCreated++;
      } else if (action.kind === 'terminate') this.stats.terminated++;
      else if (action.kind === 'remeasure') this.stats.remeasured++;
      else this.stats.adopted++;
    }
    this.reportUnreadable(namespace, outcome);
    const wasUncovered = this.uncovered.has(namespace);
    const wasUnconfirmed = this.uncovered.unconfirmed(namespace);
    this.uncovered.record(namespace, outcome.uncovered, listedAt, outcome.unconfirmed);
    if (outcome.unconfirmed >= UNCONFIRMED_SAID && wasUnconfirmed < UNCONFIRMED_SAID / 2) {
      this.options.log?.(
        'warn',
        "webhook reservations wait for objects the cluster does not have: creates that failed after admission, or forged reviews (the unauthenticated listener's?); each is released as stale after the grace period",
        {
          namespace,
          unconfirmed: outcome.unconfirmed,
          graceMs: this.options.graceMs,
        },
      );
    }
    if (outcome.actions.length > 0 || outcome.overHard.length > 0 || (outcome.uncovered.length > 0 && !wasUncovered)) {
      this.options.log?.(outcome.uncovered.length > 0 ? 'warn' : 'info', 'reconciled', {
        namespace,
        version: outcome.version,
        actions: outcome.actions,
        ...(outcome.overHard.length > 0 ? { overHard: outcome.overHard } : {}),
        // Said once when they first appear: the inventory does not list these kinds (CUSTOM_RESOURCES).
        ...(outcome.uncovered.length > 0 ? { uncovered: outcome.uncovered } : {}),
      });
    }
  }

  /**
   * Listed objects that could not be read were left out of the pass and the rest reconciled: counted
   * at every pass, said in the log when a namespace's set of them changes (not at every settle).
   */
  private reportUnreadable(namespace: string, outcome: ReconcileOutcome): void {
    this.stats.unreadable += outcome.unreadable.length;
    const said = outcome.unreadable.map((object) => object.uid).join(',');
    if ((this.unreadableSaid.get(namespace) ?? '') === said) return;
    this.unreadableSaid.delete(namespace);
    if (said !== '') {
      this.unreadableSaid.set(namespace, said);
      if (this.unreadableSaid.size > UNREADABLE_NAMESPACES_MAX)
        this.unreadableSaid.delete(this.unreadableSaid.keys().next().value as string);
      this.options.log?.(
        'warn',
        'listed objects that cannot be read were left out of the pass (their reservations kept as they were); the rest were reconciled',
        {
          namespace,
          unreadable: outcome.unreadable,
        },
      );
    }
  }

  /** Waits for the jobs in hand to finish (others stay queued for the next process), then closes. */
  async stop(): Promise<void> {
    clearInterval(this.keeper);
    this.watching?.stop.abort();
    await this.watching?.done;
    this.settler?.cancel();
    await this.settler?.idle();
    await this.worker?.close();
    await this.queue.close();
    await this.inventory.close();
  }

  private jobOptions(namespace: string, reason: string, delayMs: number) {
    const { attempts, retryDelayMs } = this.options;
    return namespaceJobOptions(namespace, reason, {
      delayMs,
      ...(attempts === undefined ? {} : { attempts }),
      ...(retryDelayMs === undefined ? {} : { retryDelayMs }),
    });
  }

  private async process(job: Job<NamespaceJobData>): Promise<unknown> {
    if (job.name === FAN_OUT_JOB) return this.fanOut();
    if (job.name === NAMESPACE_OBJECT_JOB) return this.syncNamespace(job.data.namespace);
    return this.reconcileNamespace(job.data.namespace);
  }

  /**
   * One Namespace read again from the cluster, as it is stored now (queued by the API after a
   * review of it, which is validated before it is stored): its labels are recorded if they
   * changed. The interval's complete listing records the rest, and removals.
   */
  async syncNamespace(name: string): Promise<boolean> {
    const read = this.inventory.namespace?.bind(this.inventory);
    const { putNamespace } = this.ledger;
    if (!read || !putNamespace) return false;
    const namespace = await read(name);
    if (!namespace) return false;
    const record = this.recordOf(namespace);
    return record ? this.recording(name, () => putNamespace(record, { actor: this.options.actor ?? 'system:reconciler' })) : false;
  }

  /** What the ledger records of a listed Namespace, or undefined (logged) when it cannot. */
  private recordOf(namespace: ClusterNamespace) {
    try {
      return clusterNamespaceRecord(namespace.name, namespace);
    } catch (error) {
      this.options.log?.('warn', 'a namespace of the cluster was not recorded', {
        namespace: namespace.name,
        error: (error as Error).message,
      });
      return undefined;
    }
  }

  /**
   * Brings the ledger's Namespace objects to what the cluster has: a namespace whose labels or
   * annotations differ is recorded again (and so moves into or out of the shared quotas its
   * labels select), one the cluster no longer has is removed. The webhook records changes as
   * they happen; this catches what it missed (namespaces from before it was installed, reviews
   * it never received). Only a complete listing is acted on. A namespace the cluster has but
   * the ledger refuses (it cannot happen for what the API server validated) is logged and skipped.
   */
  async syncNamespaces(): Promise<{ recorded: number; removed: number }> {
    const listNamespaces = this.inventory.namespaces?.bind(this.inventory);
    const { putNamespace, deleteNamespace, namespaceObjects } = this.ledger;
    if (!listNamespaces || !putNamespace || !deleteNamespace || !namespaceObjects) return { recorded: 0, removed: 0 };
    const [cluster, recorded] = await Promise.all([listNamespaces(), namespaceObjects()]);
    const known = new Map(recorded.map((n) => [n.name, n]));
    const options = { actor: this.options.actor ?? 'system:reconciler' };
    let changed = 0;
    for (const namespace of cluster.items) {
      const record = this.recordOf(namespace);
      if (!record) continue;
      const mine = known.get(namespace.name);
      if (mine && sameNamespaceMetadata({ metadata: mine }, record)) continue;
      // The ledger keeps the newer of this listing and what it recorded (observedVersion).
      if (await this.recording(namespace.name, () => putNamespace(record, options))) changed++;
    }
    const { labels } = this.options;
    const { managedNamespaces, namespaceManaged } = this.ledger;
    if (labels && managedNamespaces && namespaceManaged) await labels.sweep(cluster.items, await managedNamespaces(), namespaceManaged);
    const present = new Set(cluster.items.map((n) => n.name));
    const removal = { ...options, ...(cluster.resourceVersion ? { listedVersion: cluster.resourceVersion } : {}) };
    let removed = 0;
    for (const { name } of recorded) {
      if (!present.has(name) && (await this.recording(name, () => deleteNamespace(name, removal)))) removed++;
    }
    this.stats.namespacesRecorded += changed;
    this.stats.namespacesRemoved += removed;
    if (changed + removed > 0) this.options.log?.('info', 'namespaces recorded from the cluster', { recorded: changed, removed });
    return { recorded: changed, removed };
  }

  /** One namespace's write; a refusal (say, a shared quota that would cover too many namespaces) is logged and the others go on. */
  private async recording(namespace: string, write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      this.options.log?.('warn', 'a namespace of the cluster was not recorded', { namespace, error: (error as Error).message });
      return false;
    }
  }

  private async fanOut(): Promise<{ queued: number }> {
    // A pass still queued (slower than the interval) is not queued again over itself: the namespaces it already settled
    // would settle twice. A backlog of at least a page says so; the few jobs a busy cluster has waiting at any time do not.
    const pageSize = this.options.fanOutPageSize ?? 500;
    const { wait = 0, prioritized = 0 } = await this.queue.getJobCounts('wait', 'prioritized');
    if (wait + prioritized >= pageSize) {
      this.options.log?.('info', "the last pass's jobs are still queued: this interval's fan-out is skipped", {
        queued: wait + prioritized,
      });
      return { queued: 0 };
    }
    // Labels first: the namespace jobs below then reconcile against the quotas that cover them now.
    await this.syncNamespaces().catch((error: unknown) => {
      this.options.log?.('warn', 'namespaces not recorded this interval', { error: (error as Error).message });
    });
    let queued = 0;
    let after: string | undefined;
    for (;;) {
      const namespaces = await this.ledger.namespaces({ ...(after === undefined ? {} : { after }), limit: pageSize });
      if (namespaces.length === 0) return { queued };
      await this.queue.addBulk(
        namespaces.map((namespace) => ({
          name: NAMESPACE_JOB,
          data: { namespace, reason: 'interval' },
          opts: this.jobOptions(namespace, 'interval', 0),
        })),
      );
      queued += namespaces.length;
      after = namespaces.at(-1);
    }
  }
}
