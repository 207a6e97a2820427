import { describe, expect, it } from 'vitest';
import { describeLimitRange, describeQuota, joinDescriptions } from './describe.js';

describe('describe quota', () => {
  it("prints kubectl's Used/Hard table for describe quota, resources sorted, columns as wide as their widest cell", () => {
    const text = describeQuota({
      metadata: { name: 'compute', namespace: 'team-a' },
      spec: { hard: { pods: '10', 'requests.cpu': '2', 'requests.memory': '1Gi' } },
      status: {
        hard: { pods: '10', 'requests.cpu': '2', 'requests.memory': '1Gi' },
        used: { pods: '1', 'requests.cpu': '500m', 'requests.memory': '512Mi' },
      },
    });
    // kubectl.kubernetes.io's quota-memory-cpu-namespace example has exactly this layout.
    expect(text).toBe(
      [
        'Name:            compute',
        'Namespace:       team-a',
        'Resource         Used   Hard',
        '--------         ----   ----',
        'pods             1      10',
        'requests.cpu     500m   2',
        'requests.memory  512Mi  1Gi',
        '',
      ].join('\n'),
    );
  });

  it('explains each scope under a Scopes line, which (as in Go) ends the alignment of the header', () => {
    const text = describeQuota({
      metadata: { name: 'compute', namespace: 'team-a' },
      spec: { hard: { pods: '10', 'requests.cpu': '2' }, scopes: ['NotTerminating', 'BestEffort', 'PriorityClass'] },
      status: { hard: { pods: '10', 'requests.cpu': '2' }, used: { pods: '1', 'requests.cpu': '500m' } },
    });
    expect(text).toBe(
      [
        'Name:       compute',
        'Namespace:  team-a',
        'Scopes:     BestEffort, NotTerminating, PriorityClass',
        ' * Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.',
        ' * Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.',
        'Resource      Used  Hard',
        '--------      ----  ----',
        'pods          1     10',
        'requests.cpu  500m  2',
        '',
      ].join('\n'),
    );
  });

  it("prints a used value in hard's format when they differ, as kubectl, and 0 for one not reported", () => {
    const text = describeQuota({
      metadata: { name: 'q', namespace: 'ns' },
      status: { hard: { 'requests.memory': '2G', 'limits.memory': '4Gi', 'count/jobs.batch': '5' }, used: { 'requests.memory': '1Gi' } },
    });
    expect(text).toMatch(/^requests\.memory +1073741824 {2}2G$/m);
    expect(text).toMatch(/^limits\.memory +0 +4Gi$/m);
    expect(text).toMatch(/^count\/jobs\.batch +0 +5$/m);
    expect(text).not.toContain('Scopes:');
  });

  it('separates several quotas as kubectl describe does', () => {
    expect(joinDescriptions(['a\n', 'b\n'])).toBe('a\n\n\nb\n');
  });
});

describe('describe limitrange', () => {
  it("prints kubectl's limit table with - for empty cells, one row per type and resource", () => {
    const text = describeLimitRange({
      metadata: { name: 'defaults', namespace: 'team-a' },
      spec: {
        limits: [
          { type: 'Container', max: { cpu: '2' }, default: { cpu: '500m' }, defaultRequest: { cpu: '250m', memory: '64Mi' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' } },
        ],
      },
    });
    expect(text).toBe(
      [
        'Name:                  defaults',
        'Namespace:             team-a',
        'Type                   Resource  Min  Max  Default Request  Default Limit  Max Limit/Request Ratio',
        '----                   --------  ---  ---  ---------------  -------------  -----------------------',
        'Container              cpu       -    2    250m             500m           -',
        'Container              memory    -    -    64Mi             -              -',
        'PersistentVolumeClaim  storage   1Gi  -    -                -              -',
        '',
      ].join('\n'),
    );
  });
});
