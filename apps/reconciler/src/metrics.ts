import { mirroredCounter, withTimeout } from '@quota/ops';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Reconciler } from './reconciler.js';

/**
 * The reconciler's series: actions by kind, namespaces reconciled, failed listings, and the
 * reconcile queue's depth (exported here only: the queue is this process's work). Node's
 * process_* and nodejs_* series unprefixed, as every process serves them.
 */
export function reconcilerMetrics(reconciler: Reconciler): Registry {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const seen = { committed: 0, released: 0, terminated: 0, adopted: 0 };
  new Counter({
    name: 'quota_ledger_reconciler_actions_total',
    help: 'Events the reconciler appended, by kind: commit (the object exists), release (stale, deleted, expired), terminate (a terminal pod keeps only its object count), adopt (an object nobody reserved).',
    labelNames: ['kind'],
    registers,
    collect() {
      for (const [kind, stat] of [['commit', 'committed'], ['release', 'released'], ['terminate', 'terminated'], ['adopt', 'adopted']] as const) {
        this.inc({ kind }, reconciler.stats[stat] - seen[stat]);
        seen[stat] = reconciler.stats[stat];
      }
    },
  });
  mirroredCounter({ name: 'quota_ledger_reconciler_namespaces_total', help: 'Namespace reconciliations completed.', registers, read: () => reconciler.stats.namespaces });
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
  new Gauge({
    name: 'quota_ledger_reconciler_uncovered_reservations',
    help: 'Live reservations of objects of kinds the inventory does not list (add them to CUSTOM_RESOURCES), by resource, as this replica\'s last reconcile of each namespace left them (within two intervals, at most 10,000 namespaces); reserved ones are released "uncovered" after the grace period.',
    labelNames: ['resource'],
    registers,
    collect() {
      this.reset();
      for (const [resource, count] of reconciler.uncovered.totals(Date.now())) this.set({ resource }, count);
    },
  });
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
