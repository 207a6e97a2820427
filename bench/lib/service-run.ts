import type { UsageProjection } from '@quota/ledger';
import type { KindFigures, LoadResult } from './load.js';
import { ledgerCounters, postgresCpuSeconds, sampler, type ApiProcess, type RunningProcess } from './service.js';
import { ms, summarize, type Latency } from './stats.js';
import { measureWrites, writeFigures, type WriteFigures } from './writes.js';

/**
 * One load against the service over HTTP (bench/run.ts), measured: admissions and reads per
 * second and their latency, what was lost, the CPU each party spent, the projection's lag, the
 * ledger's transactions and reruns, and what the database wrote.
 */

export interface ServiceRun {
  readonly label: string;
  readonly clients: number;
  readonly perSecond: number;
  readonly latency: Latency;
  readonly allowed: number;
  readonly denied: number;
  readonly errors: number;
  readonly statuses: Record<string, number>;
  /** Allowed answers the ledger has no reservation for (lost), and reservations no client was told of. */
  readonly lost: number;
  readonly unacknowledged: number;
  readonly reads?: { readonly perSecond: number; readonly latency: Latency; readonly errors: number };
  /** CPU milliseconds per request (admissions and reads) spent by each party: where the time goes. */
  readonly cpuMsPerRequest: { readonly api: number; readonly postgres: number; readonly worker: number; readonly loadGenerator: number };
  /** The projection's lag sampled every 250 ms during this load. */
  readonly projectionLag: Latency;
  /** The ledger's write transactions during this load, how many were rerun, and why (from the API's /metrics). */
  readonly ledger: { readonly transactions: number; readonly retries: number; readonly conflicts: Record<string, number> };
  /** What the database wrote during this load (the API's and the projection worker's writes), per admission answered. */
  readonly writes: WriteFigures;
}

/** The running service a load is measured against, and what the measurement reads besides the load's answers. */
export interface ServiceUnderLoad {
  readonly api: ApiProcess;
  readonly worker: RunningProcess;
  readonly lagProjection: UsageProjection;
  readonly databaseUrl: string;
  /** How many Reserved events the ledger holds for namespaces LIKE the pattern. */
  readonly reservedIn: (pattern: string) => Promise<number>;
  readonly loadSeconds: number;
  readonly log: (message: string) => void;
}

export function figuresOf(result: LoadResult, kind: string): KindFigures {
  return result.byKind[kind] ?? { count: 0, ok: 0, denied: 0, errors: 0, latenciesMs: [], statuses: {} };
}

export async function measureServiceRun(
  service: ServiceUnderLoad,
  label: string,
  clients: number,
  pattern: string,
  load: () => Promise<LoadResult>,
): Promise<ServiceRun> {
  const { api, worker, lagProjection, databaseUrl, reservedIn } = service;
  service.log(`${label}: ${clients} clients, ${service.loadSeconds} s`);
  const before = await reservedIn(pattern);
  const cpu0 = { api: api.cpuSeconds(), postgres: postgresCpuSeconds(), worker: worker.cpuSeconds(), load: process.cpuUsage() };
  const counters0 = await ledgerCounters(api.base);
  const lagSamples = sampler(async () => (await lagProjection.lag()).lagMs, 250);
  const measured = await measureWrites(databaseUrl, load);
  const result = measured.result;
  const projectionLag = summarize(await lagSamples.stop());
  const counters1 = await ledgerCounters(api.base);
  const delta = (name: string): number => (counters1[name] ?? 0) - (counters0[name] ?? 0);
  const ledger = {
    transactions: delta('ledger_batch_commands_count'),
    retries: delta('ledger_serialization_retries_total'),
    conflicts: Object.fromEntries(
      Object.keys(counters1)
        .filter((k) => k.startsWith('ledger_conflicts_total.'))
        .map((k) => [k.slice('ledger_conflicts_total.'.length), delta(k)]),
    ),
  };
  const requests = Object.values(result.byKind).reduce((sum, k) => sum + k.count, 0);
  const perRequest = (seconds: number): number => ms((seconds * 1000) / Math.max(1, requests));
  const loadCpu = process.cpuUsage(cpu0.load);
  const cpuMsPerRequest = {
    api: perRequest(api.cpuSeconds() - cpu0.api),
    postgres: perRequest(postgresCpuSeconds() - cpu0.postgres),
    worker: perRequest(worker.cpuSeconds() - cpu0.worker),
    loadGenerator: perRequest((loadCpu.user + loadCpu.system) / 1e6),
  };
  const admissions = figuresOf(result, 'admission');
  const writes = writeFigures(measured.wal, measured.clusterWalBytes, admissions.ok + admissions.denied);
  const reads = [figuresOf(result, 'usage'), figuresOf(result, 'history')];
  const reserved = (await reservedIn(pattern)) - before;
  const readLatencies = reads.flatMap((r) => r.latenciesMs);
  return {
    label,
    clients,
    perSecond: admissions.ok / result.elapsedSeconds,
    latency: summarize(admissions.latenciesMs),
    allowed: admissions.ok,
    denied: admissions.denied,
    errors: admissions.errors,
    statuses: admissions.statuses,
    lost: Math.max(0, admissions.ok - reserved),
    unacknowledged: Math.max(0, reserved - admissions.ok),
    cpuMsPerRequest,
    projectionLag,
    ledger,
    writes,
    ...(readLatencies.length > 0
      ? {
          reads: {
            perSecond: readLatencies.length / result.elapsedSeconds,
            latency: summarize(readLatencies),
            errors: reads.reduce((sum, r) => sum + r.errors, 0),
          },
        }
      : {}),
  };
}
