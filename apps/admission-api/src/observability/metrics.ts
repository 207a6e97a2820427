import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { AdmissionResult, ReadPathStats } from '@quota/ledger';
import { mirroredCounter, withTimeout } from '@quota/ops';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type AdmissionEndpoint = 'mutate' | 'validate' | 'reserve';
export type AdmissionOutcome = 'allowed' | 'denied' | 'rejected' | 'error';

/** Running totals kept by the ledger, read when Prometheus scrapes. */
export interface MetricSources {
  ledgerStats(): { retries: number; unavailable: number; conflicts: Readonly<Record<string, number>> };
  readStats(): ReadPathStats;
  /** Shared quotas used above hard now, by kind (read from the heads at each scrape). */
  sharedQuotasOverHard(): Promise<Readonly<Record<string, number>>>;
  /** Reservations waiting in the queue, all namespaces together (read from the heads at each scrape). */
  queuedReservations(): Promise<number>;
}

/** How a queued reservation stopped waiting. */
export type QueueOutcome = 'admitted' | 'cancelled' | 'expired';

/** A scrape must answer while the database is slow or down (the gauge is then left as it was). */
const SCRAPE_READ_TIMEOUT_MS = 2000;

/** The reservation queue's series: its length now (read at each scrape), and how long waiters waited. */
function queueMetrics(registers: Registry[], sources: () => MetricSources | undefined): Histogram<'outcome'> {
  new Gauge({
    name: 'quota_ledger_queued_reservations',
    help: 'Reservations waiting in the queue now, all namespaces together (QUEUE_TOTAL_MAX bounds it). GET /v1/namespaces/{ns}/queue lists them.',
    registers,
    async collect() {
      const read = sources()?.queuedReservations;
      if (!read) return;
      const count = await withTimeout(read(), SCRAPE_READ_TIMEOUT_MS).catch(() => undefined);
      if (count !== undefined) this.set(count);
    },
  });
  return new Histogram({
    name: 'quota_ledger_queue_wait_seconds',
    help: 'How long queued reservations waited, by how they stopped waiting: admitted (room freed), cancelled (DELETE), expired (their deadline passed). Observed by the API process that appended the event.',
    labelNames: ['outcome'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 86400],
    registers,
  });
}

/**
 * The ledger's and the read path's running totals (retries, conflicts, where history reads were
 * answered, unavailable answers) and the shared quotas over hard, read when Prometheus scrapes.
 */
function scrapedTotals(registers: Registry[], sources: () => MetricSources | undefined): void {
  mirroredCounter({
    name: 'quota_ledger_ledger_serialization_retries_total',
    help: 'Ledger transactions rerun after a serialization failure, a lost version race or a lost connection.',
    registers,
    read: () => sources()?.ledgerStats().retries,
  });
  const readsSeen = new Map<string, number>();
  new Counter({
    name: 'quota_ledger_history_reads_total',
    help: 'History reads (audit, as-of, series, export, dashboard) by where they were answered: replica (DATABASE_READ_URL), primary (no replica, or marked down), waited_out (the replica had not replayed ?minPosition= in READ_REPLICA_WAIT_MS), fell_back (the replica failed the read).',
    labelNames: ['source'],
    registers,
    collect() {
      const stats = sources()?.readStats();
      if (!stats) return;
      for (const [source, total] of [
        ['replica', stats.replica],
        ['primary', stats.primary],
        ['waited_out', stats.waitedOut],
        ['fell_back', stats.fellBack],
      ] as const) {
        this.inc({ source }, total - (readsSeen.get(source) ?? 0));
        readsSeen.set(source, total);
      }
    },
  });
  const conflictsSeen = new Map<string, number>();
  new Counter({
    name: 'quota_ledger_ledger_conflicts_total',
    help: 'Ledger transactions that lost to a concurrent one, by cause: serialization (SQLSTATE 40001/40P01), version (the head moved: a lost compare-and-set), unique (a key a concurrent writer took).',
    labelNames: ['cause'],
    registers,
    collect() {
      for (const [cause, total] of Object.entries(sources()?.ledgerStats().conflicts ?? {})) {
        this.inc({ cause }, total - (conflictsSeen.get(cause) ?? 0));
        conflictsSeen.set(cause, total);
      }
    },
  });
  new Gauge({
    name: 'quota_ledger_shared_quotas_over_hard',
    help: 'Shared quotas used above hard for some resource, by kind (ClusterResourceQuota, HierarchicalResourceQuota): a namespace relabelled into one brings its usage along, and a limit may be lowered below usage; nothing more is admitted there until usage drops. GET its usage for overHard.',
    labelNames: ['kind'],
    registers,
    async collect() {
      const read = sources()?.sharedQuotasOverHard;
      if (!read) return;
      const counts = await withTimeout(read(), SCRAPE_READ_TIMEOUT_MS).catch(() => undefined);
      for (const [kind, count] of Object.entries(counts ?? {})) this.set({ kind }, count);
    },
  });
  mirroredCounter({
    name: 'quota_ledger_ledger_unavailable_total',
    help: 'Admissions answered 503 because the ledger could not decide (retries exhausted, database down, queue full).',
    registers,
    read: () => sources()?.ledgerStats().unavailable,
  });
}

/**
 * The API's Prometheus series, on a registry of its own (several apps in one test process
 * never share series). Names follow Prometheus conventions: base units, `_total` counters,
 * Node's process_* and nodejs_* series unprefixed. Each fact has one exporter: the projection's
 * lag is the projection worker's, the reconcile queue's depth the reconciler's (README,
 * "Operations"; test/e2e/metric-names.test.ts compares the two lists).
 */
@Injectable()
export class Metrics implements OnApplicationShutdown {
  readonly registry = new Registry();
  private readonly admissionDuration: Histogram<'endpoint' | 'outcome' | 'code'>;
  private readonly decisions: Counter<'source' | 'outcome' | 'reason'>;
  private readonly batchCommands: Histogram;
  private readonly queueWait: Histogram<'outcome'>;
  private sources: MetricSources | undefined;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.admissionDuration = new Histogram({
      name: 'quota_ledger_admission_duration_seconds',
      help: 'Time from request to answer of every admission call (webhook mutate and validate, REST reserve), whoever answered it (handler, guard, body limit, rate limit), by endpoint, outcome (allowed, denied, rejected = other 4xx, error = 5xx) and HTTP status code.',
      labelNames: ['endpoint', 'outcome', 'code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.decisions = new Counter({
      name: 'quota_ledger_admission_decisions_total',
      help: 'Admission decisions by source (webhook, rest), outcome (allowed, denied, queued: a REST reserve that waits) and reason (the plugin that denied: NamespaceLifecycle, LimitRanger, ResourceQuota, AlwaysDeny).',
      labelNames: ['source', 'outcome', 'reason'],
      registers,
    });
    this.batchCommands = new Histogram({
      name: 'quota_ledger_ledger_batch_commands',
      help: 'Commands decided in one ledger transaction (admissions for one namespace that arrived together).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers,
    });
    const sources = (): MetricSources | undefined => this.sources;
    this.queueWait = queueMetrics(registers, sources);
    scrapedTotals(registers, sources);
  }

  /** Wires the scrape-time sources (the ledger's and the read path's totals) once they exist. */
  attach(sources: MetricSources): void {
    this.sources = sources;
  }

  observeAdmission(endpoint: AdmissionEndpoint, outcome: AdmissionOutcome, code: number, seconds: number): void {
    this.admissionDuration.observe({ endpoint, outcome, code: String(code) }, seconds);
  }

  decided(source: 'webhook' | 'rest', result: AdmissionResult): void {
    // A reserve that waits (202) is queued, not denied: its admission comes later, from the queue.
    const outcome = result.allowed ? 'allowed' : result.code === 202 ? 'queued' : 'denied';
    this.decisions.inc({ source, outcome, reason: outcome === 'denied' ? (result.stage ?? 'other') : '' });
  }

  dequeued(outcome: QueueOutcome, waitedMs: number): void {
    this.queueWait.observe({ outcome }, Math.max(0, waitedMs) / 1000);
  }

  committedBatch(commands: number): void {
    this.batchCommands.observe(commands);
  }

  onApplicationShutdown(): void {
    this.registry.clear();
  }
}
