import { describe, expect, it } from 'vitest';
import { queuedMessage, until, waitingForText } from './queue.js';
import { eventSummary } from './table.js';

const NOW = Date.parse('2026-11-23T10:05:30Z');

describe('waitingForText', () => {
  it('names each quota with its short resources, what is asked and used/hard', () => {
    const text = waitingForText([
      {
        quota: 'compute',
        resources: [
          { resource: 'cpu', requested: '1', used: '2', hard: '2' },
          { resource: 'pods', requested: '1', used: '10', hard: '10' },
        ],
      },
      { quota: 'gpu', resources: [{ resource: 'example.com/gpu', requested: '2', used: '3', hard: '4' }] },
    ]);
    expect(text).toBe('compute: cpu 1 (used 2/2), pods 1 (used 10/10); gpu: example.com/gpu 2 (used 3/4)');
  });

  it('names a blocking reservation alone, and says <unknown> when the server said nothing', () => {
    expect(waitingForText([{ quota: 'queued reservation r-1', resources: [] }])).toBe('queued reservation r-1');
    expect(waitingForText(undefined)).toBe('<unknown>');
    expect(waitingForText([])).toBe('<unknown>');
  });
});

describe('until', () => {
  it("counts down in kubectl's AGE units, 0s once passed", () => {
    expect(until('2026-11-23T10:15:18Z', NOW)).toBe('9m48s');
    expect(until('2026-11-23T12:05:30Z', NOW)).toBe('120m');
    expect(until('2026-11-23T10:00:00Z', NOW)).toBe('0s');
    expect(until(undefined, NOW)).toBe('<unknown>');
  });
});

describe('queuedMessage', () => {
  it('says the position, the namespace, the deadline and what it waits for', () => {
    const answer = {
      id: 'r-1',
      namespace: 'team-a',
      position: 3,
      expiresAt: '2026-11-23T10:06:00Z',
      waitingFor: [{ quota: 'compute', resources: [{ resource: 'cpu', requested: '1', used: '2', hard: '2' }] }],
    };
    expect(queuedMessage(answer, NOW)).toBe(
      'reservation/r-1 queued at position 3 in team-a, expires in 30s (2026-11-23T10:06:00Z)\n  waiting for compute: cpu 1 (used 2/2)\n',
    );
  });
});

describe("history's summary of the queue's events", () => {
  it('says what a reservation waited for and until when, whose freed room admitted it, and why it stopped waiting', () => {
    const queued = {
      reservationId: 'r-1',
      object: { kind: 'Job', name: 'train-1', group: 'batch', resource: 'jobs' },
      resources: { 'requests.cpu': '1' },
      priority: 10,
      deadline: '2026-11-23T10:15:00Z',
      waitingFor: [{ quota: 'compute', resources: [{ resource: 'requests.cpu', requested: '1', used: '2', hard: '2' }] }],
    };
    expect(eventSummary('Queued', queued)).toBe(
      'r-1 job/train-1 waits for: requests.cpu=1 priority: 10 until: 2026-11-23T10:15:00Z short in: compute',
    );
    expect(eventSummary('AdmittedFromQueue', { reservationId: 'r-1', freedBy: { type: 'Released', version: 5 } })).toBe(
      'r-1 admitted by the room Released (version 5) freed',
    );
    expect(eventSummary('AdmittedFromQueue', { reservationId: 'r-1' })).toBe('r-1 admitted by the sweep');
    expect(eventSummary('Cancelled', { reservationId: 'r-1' })).toBe('r-1 (cancelled while it waited)');
    expect(eventSummary('Expired', { reservationId: 'r-1', reason: 'waited 600s without room in compute' })).toBe(
      'r-1 (waited 600s without room in compute)',
    );
  });
});
