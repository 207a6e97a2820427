import { mirroredCounter, withTimeout } from '@quota/ops';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { CacheState } from '@quota/inventory';
import type { Reconciler } from './reconciler.js';
import type { WebhookRoutes } from './webhook-routes.js';

/**
 * The reconciler's series: actions by kind, namespaces reconciled, failed listings, and the
 * reconcile queue's depth (exported here only: the queue is this process's work). Node's
 * process_* and nodejs_* series unprefixed, as every process serves them.
 */
export function reconcilerMetrics(
  reconciler: Reconciler,
  cacheStates?: () => readonly CacheState[],
  routes?: Pick<WebhookRoutes, 'totals'>,
): Registry {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const seen = { committed: 0, released: 0, terminated: 0, adopted: 0, remeasured: 0 };
  new Counter({
    name: 'quota_ledger_reconciler_actions_total',
    help: 'Events the reconciler appended, by kind: commit (the object exists), release (stale, deleted, expired), terminate (a terminal pod keeps only its object count), adopt (an object nobody reserved), remeasure (an object listed at other usage than the ledger held, nothing of it waiting: charged as listed).',
    labelNames: ['kind'],
    registers,
    collect() {
      for (const [kind, stat] of [
        ['commit', 'committed'],
        ['release', 'released'],
        ['terminate', 'terminated'],
        ['adopt', 'adopted'],
        ['remeasure', 'remeasured'],
      ] as const) {
        this.inc({ kind }, reconciler.stats[stat] - seen[stat]);
        seen[stat] = reconciler.stats[stat];
      }
    },
  });
  mirroredCounter({
    name: 'quota_ledger_reconciler_namespaces_total',
    help: 'Namespace reconciliations completed.',
    registers,
    read: () => reconciler.stats.namespaces,
  });
  mirroredCounter({
    name: 'quota_ledger_reconciler_unreadable_objects_total',
    help: "Listed objects left out of a namespace's pass because they could not be read even as the API server stored them (each pass that met one counts it; the log names them); the namespace's other objects were reconciled.",
    registers,
    read: () => reconciler.stats.unreadable,
  });
  mirroredCounter({
    name: 'quota_ledger_reconciler_failures_total',
    help: 'Namespace reconciliations that failed (the inventory could not be listed completely); retried with backoff.',
    registers,
    read: () => reconciler.stats.failures,
  });
  mirroredCounter({
    name: 'quota_ledger_reconciler_namespace_objects_recorded_total',
    help: "Namespace objects recorded or changed from the cluster's listing (their labels choose the shared quotas covering them).",
    registers,
    read: () => reconciler.stats.namespacesRecorded,
  });
  mirroredCounter({
    name: 'quota_ledger_reconciler_namespace_objects_removed_total',
    help: 'Namespace objects removed because the cluster no longer has them.',
    registers,
    read: () => reconciler.stats.namespacesRemoved,
  });
  waitingMetrics(reconciler, registers);
  watchMetrics(reconciler, registers);
  cacheMetrics(cacheStates ?? (() => []), registers);
  routeMetrics(routes, registers);
  new Gauge({
    name: 'quota_ledger_reconciler_queue_jobs',
    help: 'Reconcile jobs in the queue by state (wait, delayed, active, failed).',
    labelNames: ['state'],
    registers,
    async collect() {
      // Bounded: a scrape must answer while Redis is down (the gauge is then left as it was).
      const counts = await withTimeout(reconciler.queue.getJobCounts('wait', 'delayed', 'active', 'failed'), 2000).catch(() => undefined);
      for (const [state, count] of Object.entries(counts ?? {})) this.set({ state }, count);
    },
  });
  return registry;
}

/** The quotas' object counts the registered webhook configuration does not send (webhook-routes.ts). */
function routeMetrics(routes: Pick<WebhookRoutes, 'totals'> | undefined, registers: Registry[]): void {
  new Gauge({
    name: 'quota_ledger_reconciler_unrouted_counts',
    help: "Quotas naming an object count (count/…) whose kind's CREATE the registered ValidatingWebhookConfiguration (RECONCILE_WEBHOOK_CONFIGURATION) does not send, by resource name, as its last check found them: a create past such a count is not refused at admission, only counted after the fact. count/resourcequotas always is; any other means the registration is older than the webhook configuration quotactl prints. No series while the configuration cannot be read (/readyz says why).",
    labelNames: ['resource'],
    registers,
    collect() {
      this.reset();
      for (const [resource, quotas] of routes?.totals() ?? []) this.set({ resource }, quotas);
    },
  });
}

/** The watch's series (settle-on-watch.ts): signals heard, settles run, watches failing now. */
function watchMetrics(reconciler: Reconciler, registers: Registry[]): void {
  const settled: Record<string, number> = {};
  mirroredCounter({
    name: 'quota_ledger_reconciler_watch_signals_total',
    help: 'Watch events that settle a reservation (an object deleted or a pod that reached Succeeded or Failed: its namespace settled at once; an object added: its namespace settled 500 ms later, one settle for the additions of that window) (RECONCILE_WATCH).',
    registers,
    read: () => reconciler.settler?.stats.signals ?? 0,
  });
  new Counter({
    name: 'quota_ledger_reconciler_watch_settles_total',
    help: 'Namespace settles run on watch events, by outcome (settled; failed: left to the next event or the periodic pass; skipped: nothing is managed in that namespace, so it was not listed).',
    labelNames: ['outcome'],
    registers,
    collect() {
      const stats = reconciler.settler?.stats ?? { settles: 0, failures: 0, skipped: 0 };
      for (const [outcome, value] of [
        ['settled', stats.settles],
        ['failed', stats.failures],
        ['skipped', stats.skipped],
      ] as const) {
        this.inc({ outcome }, value - (settled[outcome] ?? 0));
        settled[outcome] = value;
      }
    },
  });
  new Gauge({
    name: 'quota_ledger_reconciler_watches_failing',
    help: "Resources whose watch is failing now (retried with backoff up to 30 s; a 403 means the reconciler's RBAC lacks watch on it); the periodic pass settles them meanwhile.",
    registers,
    collect() {
      this.set(reconciler.watchesFailing.size);
    },
  });
}

/** Reservations nothing settles yet: of kinds no inventory lists, and the webhook's for objects no listing found. */
function waitingMetrics(reconciler: Reconciler, registers: Registry[]): void {
  new Gauge({
    name: 'quota_ledger_reconciler_uncovered_reservations',
    help: 'Live reservations of objects of kinds the inventory does not list (kubernetes: not served by the cluster, or its RBAC forbids the list; other sources: add them to CUSTOM_RESOURCES), by resource, as this replica\'s last reconcile of each namespace left them (within two intervals, at most 10,000 namespaces); reserved ones are released "uncovered" after the grace period.',
    labelNames: ['resource'],
    registers,
    collect() {
      this.reset();
      for (const [resource, count] of reconciler.uncovered.totals(Date.now())) this.set({ resource }, count);
    },
  });
  new Gauge({
    name: 'quota_ledger_reconciler_unconfirmed_reservations',
    help: "The webhook's reservations within their grace period whose object the last listing of their namespace did not find, as this replica's last reconciles left them (within two intervals): creates that failed after admission, or forged reviews holding quota (the unauthenticated listener's). Each is released as stale when its grace period ends.",
    registers,
    collect() {
      this.set(reconciler.uncovered.unconfirmedTotal(Date.now()));
    },
  });
  mirroredCounter({
    name: 'quota_ledger_reconciler_never_created_total',
    help: 'Reservations released because their object never appeared within the grace period (stale): many from the webhook are forged reviews, or creates another webhook or etcd refused.',
    registers,
    read: () => reconciler.stats.neverCreated,
  });
}

/** The watch-fed caches of the kubernetes inventory (INVENTORY_CACHE), one per kind: what they hold and whether they answer. */
function cacheMetrics(cacheStates: () => readonly CacheState[], registers: Registry[]): void {
  const gauge = (name: string, help: string, value: (state: CacheState) => number): Gauge =>
    new Gauge({
      name,
      help,
      labelNames: ['resource'],
      registers,
      collect() {
        this.reset();
        for (const state of cacheStates()) this.set({ resource: state.resource }, value(state));
      },
    });
  gauge(
    'quota_ledger_reconciler_cache_objects',
    "Objects one kind's cache holds (INVENTORY_CACHE_MAX_OBJECTS is its ceiling).",
    (s) => s.objects,
  );
  gauge(
    'quota_ledger_reconciler_cache_bytes',
    "Bytes one kind's cache holds, counted as the kept facts' JSON (INVENTORY_CACHE_MAX_BYTES is its ceiling; the heap holds about three times as much).",
    (s) => s.bytes,
  );
  gauge(
    'quota_ledger_reconciler_cache_synced',
    "1 while one kind's cache answers listings (listed whole and its watch open, or the kind not served); 0 while it lists, its watch is broken, it is over its ceiling or forbidden: a fixed kind's listings then fail and settle nothing.",
    (s) => (s.state === 'synced' || s.state === 'not-served' ? 1 : 0),
  );
}
