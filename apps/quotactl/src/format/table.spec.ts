import { describe, expect, it } from 'vitest';
import { age, decisionsTable, eventSummary, historyTable, limitRangeTable, quotaTable, tabwrite, usageTable } from './table.js';

describe('tabwrite (Go text/tabwriter, as kubectl uses it)', () => {
  it('pads each column to its widest cell plus the padding, never the last cell of a line', () => {
    expect(
      tabwrite(
        [
          ['a', 'bb', 'c'],
          ['aaaa', 'b', 'last cell is free'],
        ],
        { minWidth: 0, padding: 2 },
      ),
    ).toBe('a     bb  c\naaaa  b   last cell is free\n');
  });

  it('restarts the alignment after a line without the column, as Go does', () => {
    const text = tabwrite(
      [['Name:', 'x'], ['Namespace:', 'y'], [' * a line of its own'], ['Resource', 'Used', 'Hard'], ['pods', '1', '2']],
      { minWidth: 0, padding: 2 },
    );
    expect(text).toBe(
      ['Name:       x', 'Namespace:  y', ' * a line of its own', 'Resource  Used  Hard', 'pods      1     2', ''].join('\n'),
    );
  });

  it("keeps kubectl get's minimum width of 6 and padding of 3", () => {
    expect(
      tabwrite(
        [
          ['A', 'B'],
          ['x', 'y'],
        ],
        { minWidth: 6, padding: 3 },
      ),
    ).toBe('A     B\nx     y\n');
  });

  it('measures width in characters, not UTF-16 units', () => {
    expect(
      tabwrite(
        [
          ['é', 'x'],
          ['ab', 'y'],
        ],
        { minWidth: 0, padding: 1 },
      ),
    ).toBe('é  x\nab y\n');
  });
});

describe('get quota', () => {
  const quota = {
    metadata: { name: 'compute', creationTimestamp: '2026-11-23T10:00:00Z' },
    status: {
      hard: { pods: '10', 'requests.cpu': '2', 'limits.memory': '4Gi', 'limitsx.y': '1' },
      used: { pods: '1', 'requests.cpu': '500m' },
    },
  };

  it('splits REQUEST and LIMIT as kubectl does, `name: used/hard`, 0 for a resource not used yet', () => {
    const [header, row] = quotaTable([quota], Date.parse('2026-11-23T10:05:30Z')).split('\n');
    expect(row).toBe('compute   5m30s   limitsx.y: 0/1, pods: 1/10, requests.cpu: 500m/2   limits.memory: 0/4Gi');
    expect(header).toMatch(/^NAME {6}AGE {5}REQUEST +LIMIT$/);
    expect(header?.indexOf('LIMIT')).toBe(row?.indexOf('limits.memory'));
  });

  it('says <unknown> for an object without creationTimestamp and leaves an empty LIMIT empty', () => {
    expect(quotaTable([{ metadata: { name: 'q' }, status: { hard: { pods: '1' }, used: { pods: '1' } } }], 0).split('\n')[1]).toBe(
      'q      <unknown>   pods: 1/1',
    );
  });
});

describe('age (apimachinery HumanDuration)', () => {
  it.each([
    [0, '0s'],
    [119, '119s'],
    [150, '2m30s'],
    [180, '3m'],
    [600, '10m'],
    [179 * 60, '179m'],
    [3 * 3600 + 240, '3h4m'],
    [10 * 3600, '10h'],
    [3 * 86400 + 5 * 3600, '3d5h'],
    [30 * 86400, '30d'],
    [3 * 365 * 86400 + 86400, '3y1d'],
    [9 * 365 * 86400, '9y'],
  ])('%i seconds read %s', (seconds, text) => {
    expect(age('2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:00:00Z') + seconds * 1000)).toBe(text);
  });

  it('is <unknown> without a timestamp and <invalid> in the future', () => {
    expect(age(undefined, 0)).toBe('<unknown>');
    expect(age('2026-01-01T00:00:10Z', Date.parse('2026-01-01T00:00:00Z'))).toBe('<invalid>');
  });
});

describe('get limitrange', () => {
  it('prints NAME and CREATED AT in UTC whole seconds, as kubectl', () => {
    expect(limitRangeTable([{ metadata: { name: 'defaults', creationTimestamp: '2026-11-23T11:00:00.123+01:00' } }])).toBe(
      'NAME       CREATED AT\ndefaults   2026-11-23T10:00:00Z\n',
    );
  });
});

describe('usage', () => {
  it('prints one row per quota and resource, in name order', () => {
    const text = usageTable([
      { name: 'objects', hard: { pods: '10' }, used: { pods: '3' } },
      { name: 'compute', hard: { 'requests.memory': '1Gi', 'requests.cpu': '2' }, used: { 'requests.cpu': '500m' } },
    ]);
    expect(text).toBe(
      [
        'QUOTA     RESOURCE          USED   HARD',
        'compute   requests.cpu      500m   2',
        'compute   requests.memory   0      1Gi',
        'objects   pods              3      10',
        '',
      ].join('\n'),
    );
  });
});

describe('history', () => {
  it('summarizes each kind of event in one line', () => {
    expect(eventSummary('QuotaDefined', { name: 'compute', spec: { hard: { pods: '10', 'requests.cpu': '2' } } })).toBe(
      'resourcequota/compute hard: pods=10, requests.cpu=2',
    );
    expect(
      eventSummary('Reserved', {
        reservationId: 'r1',
        operation: 'CREATE',
        object: { group: '', resource: 'pods', kind: 'Pod', name: 'web-1' },
        charged: { pods: '1' },
      }),
    ).toBe('r1 CREATE pod/web-1 charged: pods=1');
    expect(eventSummary('Released', { reservationId: 'r1', reason: 'expired' })).toBe('r1 (expired)');
    expect(eventSummary('LimitRangeChanged', { name: 'defaults', spec: { limits: [{ type: 'Container' }, { type: 'Pod' }] } })).toBe(
      'limitrange/defaults limits: Container, Pod',
    );
    expect(eventSummary('SomethingNew', { a: 1 })).toBe('{"a":1}');
  });

  it('prints POSITION TIME TYPE ACTOR SUMMARY', () => {
    const text = historyTable([
      { position: '7', time: '2026-11-23T10:00:00Z', type: 'Committed', actor: 'ci', data: { reservationId: 'r1' } },
    ]);
    expect(text).toBe(
      'POSITION   TIME                   TYPE        ACTOR   SUMMARY\n7          2026-11-23T10:00:00Z   Committed   ci      r1\n',
    );
  });
});

describe('decisions', () => {
  it('shows the refusing plugin and its message for a denial, what was charged for an allowance', () => {
    const text = decisionsTable([
      { time: 't1', allowed: true, kind: 'Pod', name: 'web-1', operation: 'CREATE', requester: 'ci', result: { charged: { pods: '1' } } },
      {
        time: 't2',
        allowed: false,
        resource: 'pods',
        operation: 'CREATE',
        requester: 'ci',
        result: { stage: 'ResourceQuota', message: 'exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1' },
      },
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^TIME +ALLOWED +DRY-RUN +KIND +NAME +OPERATION +REQUESTER +REASON +MESSAGE$/);
    expect(lines[1]).toMatch(/^t1 +true +false +Pod +web-1 +CREATE +ci +charged: pods=1$/);
    expect(lines[2]).toMatch(/^t2 +false +false +pods +<none> +CREATE +ci +ResourceQuota +exceeded quota: compute, /);
  });

  it('marks dry runs, denied or not, in their own column', () => {
    const text = decisionsTable([
      {
        time: 't1',
        allowed: false,
        dryRun: true,
        kind: 'Pod',
        name: 'web-3',
        operation: 'CREATE',
        requester: 'auditor',
        result: { stage: 'ResourceQuota', message: 'exceeded quota: compute' },
      },
      {
        time: 't2',
        allowed: true,
        dryRun: true,
        kind: 'Pod',
        name: 'web-4',
        operation: 'CREATE',
        requester: 'auditor',
        result: { charged: { pods: '1' } },
      },
    ]);
    const lines = text.split('\n');
    expect(lines[1]).toMatch(/^t1 +false +true +Pod +web-3 +CREATE +auditor +ResourceQuota +exceeded quota: compute$/);
    expect(lines[2]).toMatch(/^t2 +true +true +Pod +web-4 +CREATE +auditor +would charge: pods=1$/);
  });
});
