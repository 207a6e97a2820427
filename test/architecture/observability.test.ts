import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { metricsByProcess, PROCESSES, type MetricInfo } from '../../scripts/docs/sources.js';
import { asList, asObject, asText, DEPLOY, get, loadYaml } from '../support/deploy.js';
import { ensureBuilt } from '../support/processes.js';
import { promqlProblems, seriesOf } from '../support/promql.js';

/**
 * The operations artifacts beside the manifests (deploy/kubernetes/components/prometheus-operator):
 * the PrometheusRule's alerts and the Grafana dashboard. Every expression must parse as PromQL
 * and name only series and labels the processes' registries declare (the same registries
 * docs/reference/metrics.md is generated from, and test/e2e/metric-names.test.ts holds equal to
 * what each built process serves), so a renamed metric breaks this test, not a silent alert.
 */
const COMPONENT = join(DEPLOY, 'kubernetes/components/prometheus-operator');

let series: Map<string, readonly string[]>;

beforeAll(async () => {
  ensureBuilt();
  const byProcess = await metricsByProcess();
  series = seriesOf(PROCESSES.flatMap((p): MetricInfo[] => byProcess[p]));
}, 120_000);

interface Rule {
  readonly where: string;
  readonly expr: string;
  readonly rule: Record<string, unknown>;
}

function alertRules(): Rule[] {
  const [document] = loadYaml(join(COMPONENT, 'prometheus-rule.yaml'));
  expect(get(document?.value, 'kind')).toBe('PrometheusRule');
  return asList(get(document?.value, 'spec', 'groups')).flatMap((group) =>
    asList(get(group, 'rules')).map((rule) => ({
      where: `alert ${String(get(rule, 'alert'))}`,
      expr: asText(get(rule, 'expr')) ?? '',
      rule: asObject(rule),
    })),
  );
}

function dashboardQueries(): { where: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(join(COMPONENT, 'grafana-dashboard.json'), 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target, i) => ({ where: `panel "${panel.title}" query ${i}`, expr: target.expr })),
  );
}

describe('the alert rules (prometheus-rule.yaml)', () => {
  it('cover the webhook, the ledger, the projection, the reconciler and shared quotas over hard', () => {
    const all = alertRules()
      .map((r) => r.expr)
      .join('\n');
    for (const metric of [
      'quota_ledger_admission_duration_seconds_bucket',
      'quota_ledger_admission_duration_seconds_count',
      'quota_ledger_projection_lag_seconds',
      'quota_ledger_reconciler_failures_total',
      'quota_ledger_reconciler_uncovered_reservations',
      'quota_ledger_shared_quotas_over_hard',
    ]) {
      expect(all, metric).toContain(metric);
    }
  });

  it('parse as PromQL and name only series and labels the processes export', () => {
    expect(alertRules().flatMap((r) => promqlProblems(r.where, r.expr, series))).toEqual([]);
  });

  it('each have a severity, a summary and a duration', () => {
    for (const { where, rule } of alertRules()) {
      expect(['critical', 'warning', 'info'], where).toContain(get(rule, 'labels', 'severity'));
      expect(asText(get(rule, 'annotations', 'summary')), where).toBeTruthy();
      expect(asText(get(rule, 'for')), where).toMatch(/^\d+[smh]$/);
    }
  });
});

describe('the Grafana dashboard (grafana-dashboard.json)', () => {
  it('queries only series and labels the processes export, in PromQL that parses', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(15);
    expect(queries.flatMap((q) => promqlProblems(q.where, q.expr, series))).toEqual([]);
  });

  it('shows every quota_ledger_ series at least once', () => {
    const used = dashboardQueries()
      .map((q) => q.expr)
      .join('\n');
    const own = [...series.keys()]
      .filter((name) => name.startsWith('quota_ledger_') && !/_(sum|bucket)$/.test(name))
      .map((name) => name.replace(/_count$/, ''));
    expect([...new Set(own)].filter((name) => !used.includes(name))).toEqual([]);
  });
});

describe('the checks catch what they are for', () => {
  it('a renamed metric, an unknown label or a syntax error is named', () => {
    expect(promqlProblems('x', 'rate(quota_ledger_admission_decision_total[5m])', series).join()).toMatch(
      /quota_ledger_admission_decision_total is no series/,
    );
    expect(promqlProblems('x', 'sum by (tenant) (quota_ledger_reconciler_queue_jobs)', series).join()).toMatch(/label tenant is on none/);
    expect(promqlProblems('x', 'sum(rate(quota_ledger_projection_lag_seconds[5m]', series).join()).toMatch(/does not parse/);
    expect(
      promqlProblems('x', 'histogram_quantile(0.9, sum by (le) (rate(quota_ledger_ledger_batch_commands_bucket[5m])))', series),
    ).toEqual([]);
  });
});
