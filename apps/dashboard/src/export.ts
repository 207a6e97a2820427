import type { Series } from './chart.js';
import type { DecisionView } from '@quota/api';
import type { AdmissionResult } from '@quota/domain';

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. A field that a
 * spreadsheet would run as a formula (=, +, -, @, tab, carriage return first) gets a leading
 * apostrophe: an object name or a denial message is data, never a formula.
 */
export function csvField(value: string | number | boolean | null | undefined): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Rows as CSV, a header first, each line ended by CRLF. */
export function csv(header: readonly string[], rows: readonly (readonly (string | number | boolean | null | undefined)[])[]): string {
  return [header, ...rows].map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}

/** A usage chart's data, one row per sample, quota and resource: what the charts draw, for a spreadsheet. */
export function seriesCsv(series: Series): string {
  const rows = series.points.flatMap((point) =>
    point.quotas.flatMap((quota) =>
      Object.entries(quota.hard).map(([resource, hard]) => [
        point.at,
        point.version,
        quota.name,
        resource,
        quota.used[resource] ?? '0',
        hard,
      ]),
    ),
  );
  return csv(['at', 'version', 'quota', 'resource', 'used', 'hard'], rows);
}

/** The decisions export (NDJSON, one decision a line) as CSV: one row a decision. */
export function decisionsCsv(ndjson: string): string {
  const rows = ndjson
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const d = JSON.parse(line) as DecisionView<AdmissionResult>;
      return [
        d.id,
        d.time,
        d.namespace,
        d.source,
        d.requester,
        d.onBehalfOf,
        d.operation,
        d.kind,
        d.resource,
        d.name,
        d.dryRun,
        d.allowed,
        d.result.code,
        d.result.stage,
        d.result.denial?.kind,
        d.result.denial?.quota,
        d.result.message,
      ];
    });
  return csv(
    [
      'id',
      'time',
      'namespace',
      'source',
      'requester',
      'onBehalfOf',
      'operation',
      'kind',
      'resource',
      'name',
      'dryRun',
      'allowed',
      'code',
      'stage',
      'denial',
      'quota',
      'message',
    ],
    rows,
  );
}

/** A file name for an export: the view and its range, safe on every file system ("team-a decisions 2026-01-01T00-00-00Z.csv"). */
export function exportName(what: string, since: string, until: string, extension: string): string {
  const instant = (iso: string) => iso.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  return `${what} ${instant(since)} to ${instant(until)}.${extension}`.replace(/[^\w. -]/g, '_');
}
