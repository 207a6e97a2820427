import { withTimeout } from '@quota/ops';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** A scrape's lag read answers within this, or the gauges keep their last values. */
const LAG_READ_TIMEOUT_MS = 2000;
/** Both lag gauges of one scrape share one read. */
const LAG_READ_REUSE_MS = 1000;

export interface Lag {
  readonly eventsBehind: number;
  readonly lagMs: number;
}

export interface ProjectionMetrics {
  readonly registry: Registry;
  /** A step that applied `count` events in `seconds`. */
  applied(count: number, seconds: number): void;
}

/**
 * The projection worker's series, on a registry of its own: its steps, the events it applied,
 * and the projection's lag (exported here only: the API does not repeat it), read when
 * Prometheus scrapes, once for both gauges, and bounded so that a scrape answers while the
 * database does not (the gauges then keep their last values). Node's process_* and nodejs_*
 * series unprefixed, as every process serves them.
 */
export function projectionMetrics(readLag: () => Promise<Lag>, onLagError: (error: unknown) => void): ProjectionMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  const stepSeconds = new Histogram({
    name: 'quota_ledger_projection_step_duration_seconds',
    help: 'Time of each projection step that applied events (one transaction: read the feed, fold, write the read models).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  const eventsApplied = new Counter({
    name: 'quota_ledger_projection_events_applied_total',
    help: 'Ledger events the usage projection has applied (by this process).',
    registers,
  });
  let lagRead: { at: number; lag: Promise<Lag | undefined> } | undefined;
  const lagNow = (): Promise<Lag | undefined> => {
    const now = Date.now();
    if (!lagRead || now - lagRead.at > LAG_READ_REUSE_MS) {
      lagRead = {
        at: now,
        lag: withTimeout(readLag(), LAG_READ_TIMEOUT_MS).catch((error: unknown) => {
          onLagError(error);
          return undefined;
        }),
      };
    }
    return lagRead.lag;
  };
  new Gauge({
    name: 'quota_ledger_projection_lag_events',
    help: 'Ledger events the usage projection has not applied yet.',
    registers,
    async collect() {
      const lag = await lagNow();
      if (lag) this.set(lag.eventsBehind);
    },
  });
  new Gauge({
    name: 'quota_ledger_projection_lag_seconds',
    help: 'Age of the oldest ledger event the usage projection has not applied yet (0 when caught up).',
    registers,
    async collect() {
      const lag = await lagNow();
      if (lag) this.set(lag.lagMs / 1000);
    },
  });
  return {
    registry,
    applied(count, seconds) {
      stepSeconds.observe(seconds);
      eventsApplied.inc(count);
    },
  };
}
