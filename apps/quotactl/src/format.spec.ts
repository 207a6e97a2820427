import { describe, expect, it } from 'vitest';
import { age, describeLimitRange, describeQuota, getQuotaRows } from './format.js';

const quota = {
  metadata: { name: 'compute', namespace: 'team-a', creationTimestamp: '2026-11-23T10:00:00Z' },
  spec: { hard: { pods: '10', 'requests.cpu': '2', 'limits.memory': '4Gi' }, scopes: ['NotTerminating'] },
  status: { hard: { pods: '10', 'requests.cpu': '2', 'limits.memory': '4Gi' }, used: { pods: '1', 'requests.cpu': '500m', 'limits.memory': '0' } },
};

describe('describe quota', () => {
  it("prints kubectl's header, scope explanation and Used/Hard table, resources sorted", () => {
    expect(describeQuota(quota)).toBe(
      [
        'Name:            compute',
        'Namespace:       team-a',
        'Scopes:          NotTerminating',
        ' * Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.',
        'Resource       Used  Hard',
        '--------       ----  ----',
        'limits.memory  0     4Gi',
        'pods           1     10',
        'requests.cpu   500m  2',
        '',
      ].join('\n'),
    );
  });

  it('shows 0 used for a resource the status does not mention yet, and no Scopes line without scopes', () => {
    const text = describeQuota({ metadata: { name: 'q', namespace: 'ns' }, spec: { hard: { 'count/jobs.batch': '5' } } });
    expect(text).not.toContain('Scopes:');
    expect(text).toMatch(/^count\/jobs\.batch {2}0 {5}5$/m);
  });
});

describe('get quota', () => {
  it('splits requests and limits into kubectl columns as used/hard', () => {
    const text = getQuotaRows([quota], Date.parse('2026-11-23T10:05:30Z'));
    expect(text.split('\n')[0]).toMatch(/^NAME +AGE +REQUEST +LIMIT$/);
    expect(text.split('\n')[1]).toBe('compute   5m30s   pods: 1/10, requests.cpu: 500m/2   limits.memory: 0/4Gi');
  });
});

describe('age', () => {
  it.each([
    [45, '45s'],
    [150, '2m30s'],
    [600, '10m'],
    [3 * 3600 + 240, '3h4m'],
    [10 * 3600, '10h'],
    [3 * 86400, '3d'],
  ])('%i seconds read %s', (seconds, text) => {
    expect(age('2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:00:00Z') + seconds * 1000)).toBe(text);
  });

  it('is <unknown> without a timestamp', () => {
    expect(age(undefined, 0)).toBe('<unknown>');
  });
});

describe('describe limitrange', () => {
  it('prints one row per type and resource, with - for empty cells', () => {
    const text = describeLimitRange({
      metadata: { name: 'defaults', namespace: 'team-a' },
      spec: { limits: [{ type: 'Container', max: { cpu: '2' }, defaultRequest: { cpu: '100m', memory: '64Mi' } }] },
    });
    expect(text).toContain('Type      Resource Min Max Default Request Default Limit Max Limit/Request Ratio');
    expect(text).toContain('Container cpu      -   2   100m            -             -');
    expect(text).toContain('Container memory   -   -   64Mi            -             -');
  });
});
