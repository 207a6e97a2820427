import { describe, expect, it } from 'vitest';
import { queuedMessage, until, waitingForText } from './queue.js';

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
    expect(queuedMessage(answer, NOW)).toBe('reservation/r-1 queued at position 3 in team-a, expires in 30s (2026-11-23T10:06:00Z)\n  waiting for compute: cpu 1 (used 2/2)\n');
  });
});
