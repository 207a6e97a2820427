import { describe, expect, it } from 'vitest';
import type { Series } from './chart.js';
import { csv, csvField, decisionsCsv, exportName, seriesCsv } from './export.js';

describe('CSV exports', () => {
  it.each([
    ['plain', 'plain'],
    ['a, b', '"a, b"'],
    ['say "no"', '"say ""no"""'],
    ['two\nlines', '"two\nlines"'],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['+1', "'+1"],
    ['@sum', "'@sum"],
    ['-2', "'-2"],
  ])('writes %j as %s', (value, field) => {
    expect(csvField(value)).toBe(field);
  });

  it('writes empty fields for what is absent, and a header first', () => {
    expect(csv(['a', 'b', 'c'], [[null, undefined, false]])).toBe('a,b,c\r\n,,false\r\n');
  });

  it('writes a row per sample, quota and resource of a usage series', () => {
    const series: Series = {
      namespace: 'team-a',
      since: '2026-01-01T00:00:00.000Z',
      until: '2026-01-01T00:01:00.000Z',
      points: [
        { at: '2026-01-01T00:00:00.000Z', version: 0, quotas: [] },
        {
          at: '2026-01-01T00:01:00.000Z',
          version: 3,
          quotas: [{ name: 'compute', hard: { pods: '2', 'requests.memory': '1Gi' }, used: { pods: '1' } }],
        },
      ],
      markers: [],
      truncated: false,
    };
    expect(seriesCsv(series)).toBe(
      'at,version,quota,resource,used,hard\r\n2026-01-01T00:01:00.000Z,3,compute,pods,1,2\r\n2026-01-01T00:01:00.000Z,3,compute,requests.memory,0,1Gi\r\n',
    );
  });

  it('turns the decisions export (NDJSON) into a row per decision', () => {
    const denied = {
      id: '7',
      namespace: 'team-a',
      time: '2026-01-01T00:00:01.000Z',
      source: 'rest',
      operation: 'CREATE',
      resource: 'pods',
      kind: 'Pod',
      name: 'web-3',
      requester: 'ci',
      dryRun: false,
      allowed: false,
      result: { code: 403, message: 'exceeded quota: compute, requested: pods=1', denial: { kind: 'Exceeded', quota: 'compute' } },
    };
    const allowed = { ...denied, id: '8', name: 'web-4', allowed: true, result: { code: 200 } };
    const lines = decisionsCsv(`${JSON.stringify(denied)}\n${JSON.stringify(allowed)}\n`).split('\r\n');
    expect(lines[0]).toBe(
      'id,time,namespace,source,requester,onBehalfOf,operation,kind,resource,name,dryRun,allowed,code,stage,denial,quota,message',
    );
    expect(lines[1]).toBe(
      '7,2026-01-01T00:00:01.000Z,team-a,rest,ci,,CREATE,Pod,pods,web-3,false,false,403,,Exceeded,compute,"exceeded quota: compute, requested: pods=1"',
    );
    expect(lines[2]).toBe('8,2026-01-01T00:00:01.000Z,team-a,rest,ci,,CREATE,Pod,pods,web-4,false,true,200,,,,');
    expect(lines).toHaveLength(4);
  });

  it('names a file after the view and its range', () => {
    expect(exportName('team-a decisions', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', 'csv')).toBe(
      'team-a decisions 2026-01-01T00-00-00Z to 2026-01-02T00-00-00Z.csv',
    );
    expect(exportName('a/b', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', 'ndjson')).toBe(
      'a_b 2026-01-01T00-00-00Z to 2026-01-02T00-00-00Z.ndjson',
    );
  });
});
