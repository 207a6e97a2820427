import { parser } from '@prometheus-io/lezer-promql';
import type { MetricInfo } from '../../scripts/docs/sources.js';

/**
 * PromQL checked against the metrics the processes declare: the expression parses (the
 * Prometheus project's own grammar), and every metric it selects and every label it matches or
 * groups by exists. Used by test/architecture/observability.test.ts for the alert rules and the
 * Grafana dashboard.
 */

/** Labels Prometheus adds to every scraped series (the ServiceMonitor's target labels), and `up`'s. */
export const TARGET_LABELS = new Set(['job', 'instance', 'namespace', 'pod', 'service', 'container', 'endpoint']);
/** Series Prometheus itself makes for each target. */
export const PROMETHEUS_SERIES = new Map<string, readonly string[]>([['up', []]]);
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

/** Every series name a scrape of these metrics holds, with its labels (a histogram's `_bucket` adds `le`). */
export function seriesOf(metrics: readonly MetricInfo[]): Map<string, readonly string[]> {
  const series = new Map<string, readonly string[]>(PROMETHEUS_SERIES);
  for (const metric of metrics) {
    if (metric.type === 'histogram')
      for (const suffix of HISTOGRAM_SUFFIXES)
        series.set(`${metric.name}${suffix}`, suffix === '_bucket' ? [...metric.labels, 'le'] : metric.labels);
    else if (metric.type === 'summary')
      for (const suffix of ['', '_sum', '_count'])
        series.set(`${metric.name}${suffix}`, suffix === '' ? [...metric.labels, 'quantile'] : metric.labels);
    else series.set(metric.name, metric.labels);
  }
  return series;
}

/** Dashboard and alert templating that is not PromQL (`$__rate_interval`, `${var}`) would not parse: none is used. */
export function promqlProblems(where: string, expr: string, series: ReadonlyMap<string, readonly string[]>): string[] {
  const problems: string[] = [];
  const tree = parser.parse(expr);
  const selected: string[] = [];
  const labels: string[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError)
        problems.push(
          `${where}: does not parse at ${node.from}: ${JSON.stringify(expr.slice(Math.max(0, node.from - 20), node.from + 20))}`,
        );
      const text = expr.slice(node.from, node.to);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') selected.push(text);
      if (node.name === 'LabelName') labels.push(text);
    },
  });
  if (selected.length === 0) problems.push(`${where}: selects no series`);
  const known = new Set<string>(TARGET_LABELS);
  for (const name of selected) {
    const labelsOf = series.get(name);
    if (!labelsOf) problems.push(`${where}: ${name} is no series the processes export`);
    else labelsOf.forEach((label) => known.add(label));
  }
  for (const label of new Set(labels))
    if (!known.has(label)) problems.push(`${where}: label ${label} is on none of ${selected.join(', ')}`);
  return problems;
}
