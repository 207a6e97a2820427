import { cell, code, generatedHeader, table } from './markdown.js';
import { PROCESSES, type MetricInfo, type ProcessName } from './sources.js';

/** prom-client reads these from /proc: only Linux serves them, so they are listed wherever the page is generated. */
export const LINUX_ONLY = ['process_virtual_memory_bytes', 'process_heap_bytes', 'process_open_fds', 'process_max_fds'];

const isOwn = (metric: MetricInfo): boolean => metric.name.startsWith('quota_ledger_');

/** The series every process serves unprefixed (prom-client's defaults), the same in each. */
export function defaultMetricNames(byProcess: Readonly<Record<ProcessName, readonly MetricInfo[]>>): string[] {
  const sets = PROCESSES.map((p) => new Set(byProcess[p].filter((m) => !isOwn(m)).map((m) => m.name)));
  const [first = new Set<string>(), ...rest] = sets;
  for (const other of rest) {
    const differ = [...first].filter((n) => !other.has(n)).concat([...other].filter((n) => !first.has(n)));
    if (differ.length > 0) throw new Error(`the processes' default series differ: ${differ.join(', ')}`);
  }
  return [...new Set([...first, ...LINUX_ONLY])].sort();
}

/** docs/reference/metrics.md from the three processes' registries. */
export function metricsPage(byProcess: Readonly<Record<ProcessName, readonly MetricInfo[]>>): string {
  const rows: string[][] = [];
  for (const process of PROCESSES) {
    for (const metric of byProcess[process].filter(isOwn)) {
      rows.push([code(metric.name), metric.type, process, metric.labels.map(code).join(', '), cell(metric.help)]);
    }
  }
  const defaults = defaultMetricNames(byProcess);
  rows.push([
    defaults.map(code).join(', '),
    'several',
    'every process',
    '',
    `prom-client's default metrics (${LINUX_ONLY.map(code).join(', ')} on Linux only)`,
  ]);
  return [
    generatedHeader(
      'Metrics reference',
      'the prom-client registries of the API (apps/admission-api/src/observability/metrics.ts), the projection worker (apps/projection-worker/src/metrics.ts) and the reconciler (apps/reconciler/src/metrics.ts)',
    ),
    'Each fact is exported by one process, so scrape all three: the API on `PORT` (`GET /metrics`), the projection worker and the',
    "reconciler on `METRICS_PORT` (9464). Names follow Prometheus' conventions (`quota_ledger_`, base units, `_total` for counters);",
    "Node's `process_*` and `nodejs_*` series carry no prefix. `test/e2e/metric-names.test.ts` checks that this table lists exactly",
    'what each built process serves on `/metrics`, of these types. What to alert on and the dashboard over these series:',
    '[Operations](../operations/index.md#metrics).',
    '',
    table(['metric', 'type', 'process', 'labels', 'what'], rows),
    '',
  ].join('\n');
}
