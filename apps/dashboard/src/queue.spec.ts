import { describe, expect, it } from 'vitest';
import { objectLabel, queueRow, sharedWaiters, timeLeft, waitingLines } from './queue.js';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');

describe("a namespace's queue, as the page shows it", () => {
  it('says per quota what is short: what it needs, and used of hard', () => {
    expect(
      waitingLines([
        {
          quota: 'compute',
          resources: [
            { resource: 'requests.cpu', requested: '1', used: '2', hard: '2' },
            { resource: 'pods', requested: '1', used: '10', hard: '10' },
          ],
        },
        { quota: 'queued reservation r-0', resources: [] },
      ]),
    ).toEqual([
      { quota: 'compute', detail: 'requests.cpu needs 1, 2 of 2 used; pods needs 1, 10 of 10 used' },
      { quota: 'queued reservation r-0', detail: '' },
    ]);
    expect(waitingLines(undefined)).toEqual([]);
  });

  it('counts down to the deadline, "due" once it has passed', () => {
    expect(timeLeft('2026-11-23T12:09:30.000Z', NOW)).toBe('in 9 min');
    expect(timeLeft('2026-11-23T12:00:20.000Z', NOW)).toBe('in 20 s');
    expect(timeLeft('2026-11-23T11:59:59.000Z', NOW)).toBe('due');
    expect(timeLeft(undefined, NOW)).toBe('—');
  });

  it('names the object by kind and name, else its resource', () => {
    expect(objectLabel({ group: 'batch', resource: 'jobs', kind: 'Job', name: 'train-1' })).toBe('Job train-1');
    expect(objectLabel({ group: '', resource: 'pods' })).toBe('pods');
    expect(objectLabel(undefined)).toBe('object');
  });

  it('makes a row of a waiter, with how often it was passed', () => {
    const row = queueRow(
      {
        id: 'r-1',
        position: 2,
        priority: -5,
        passed: 3,
        object: { group: 'batch', resource: 'jobs', kind: 'Job', name: 'train-1' },
        waitingFor: [{ quota: 'compute', resources: [{ resource: 'requests.cpu', requested: '1', used: '2', hard: '2' }] }],
        queuedAt: '2026-11-23T11:58:00.000Z',
        expiresAt: '2026-11-23T12:08:00.000Z',
        estimate: { samples: 12, p50Seconds: 150, p90Seconds: 600 },
      },
      NOW,
    );
    expect(row).toEqual({
      id: 'r-1',
      position: '2',
      object: 'Job train-1',
      priority: '-5',
      passed: 'passed 3×',
      waiting: [{ quota: 'compute', detail: 'requests.cpu needs 1, 2 of 2 used' }],
      waited: '2 min',
      typical: 'typically 2 min (p90 10 min)',
      expires: 'in 8 min',
    });
    expect(queueRow({ id: 'r-2' }, NOW)).toMatchObject({
      position: '—',
      priority: '0',
      passed: '',
      waiting: [],
      waited: '—',
      typical: '',
      expires: '—',
    });
  });
});

describe("a shared quota's waiters", () => {
  it("keeps the server's order of namespaces (the fair share's), each namespace's waiters in queue order, with its weight", () => {
    const waiter = (id: string, position: number) => ({ id, position, waitingFor: [{ quota: 'gpu', resources: [] }] });
    const queue = {
      key: 'clusterresourcequotas/gpu',
      namespaces: [
        { namespace: 'team-b', weight: 3, used: {}, items: [waiter('b2', 2), waiter('b1', 1)] },
        { namespace: 'team-a', weight: 1, used: {}, items: [waiter('a2', 2)] },
        { namespace: 'team-c', weight: 1, used: {}, items: [] },
      ],
    };
    expect(sharedWaiters(queue).map((w) => `${w.namespace}/${w.item.id}×${w.weight}`)).toEqual([
      'team-b/b1×3',
      'team-b/b2×3',
      'team-a/a2×1',
    ]);
    expect(sharedWaiters({ namespaces: [{ namespace: 'n' }] })).toEqual([]);
    expect(sharedWaiters(undefined)).toEqual([]);
  });
});
