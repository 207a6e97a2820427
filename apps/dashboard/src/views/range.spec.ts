import { describe, expect, it } from 'vitest';
import { rangeQuery, rangeRoute, spanOf } from './range.js';

describe('a chart range in the address', () => {
  it('reads the zoom level and the ends, the whole history by default, dropping what does not parse', () => {
    expect(rangeRoute(new URLSearchParams(''))).toEqual({ range: 'all' });
    expect(rangeRoute(new URLSearchParams('range=all&at=2026-01-01T00:00:00Z&until=soon'))).toEqual({
      range: 'all',
      at: '2026-01-01T00:00:00.000Z',
    });
    expect(rangeRoute(new URLSearchParams('range=week&until=2026-01-08T00:00:00Z'))).toEqual({
      range: 'week',
      until: '2026-01-08T00:00:00.000Z',
    });
    expect(rangeRoute(new URLSearchParams('range=year&until=yesterday&since=2026-01-01T00:00:00Z'))).toEqual({ range: 'all' });
    expect(rangeRoute(new URLSearchParams('range=hour&since=2026-01-01T00:00:00Z'))).toEqual({ range: 'hour' });
    expect(rangeRoute(new URLSearchParams('range=hour&since=2026-01-01T00:00:00Z&until=2026-01-01T00:05:00Z'))).toEqual({
      range: 'hour',
      since: '2026-01-01T00:00:00.000Z',
      until: '2026-01-01T00:05:00.000Z',
    });
  });

  it('writes back what it reads', () => {
    for (const route of [
      { range: 'day' },
      { range: 'all' },
      { range: 'all', at: '2026-01-02T00:00:00.000Z' },
      { range: 'week', until: '2026-01-08T00:00:00.000Z' },
      { range: 'hour', since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T00:05:00.000Z' },
    ] as const) {
      expect(rangeRoute(new URLSearchParams(rangeQuery(route)))).toEqual(route);
    }
    // A start without an end says nothing: a zoom level ends at an instant or now.
    expect(rangeQuery({ range: 'hour', since: '2026-01-01T00:00:00.000Z' })).toBe('range=hour');
  });

  it('spans a zoom level back from its end, and a range given by both ends at 100 samples', () => {
    expect(spanOf({ range: 'week', until: '2026-01-08T00:00:00.000Z' })).toEqual({
      since: '2026-01-01T00:00:00.000Z',
      until: '2026-01-08T00:00:00.000Z',
      ms: 7 * 24 * 3600_000,
      points: 169,
      custom: false,
      fitted: false,
    });
    expect(spanOf({ range: 'hour', since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T00:05:00.000Z' })).toEqual({
      since: '2026-01-01T00:00:00.000Z',
      until: '2026-01-01T00:05:00.000Z',
      ms: 300_000,
      points: 100,
      custom: true,
      fitted: false,
    });
    // Ends before it starts: the zoom level, back from the end.
    expect(spanOf({ range: 'hour', since: '2026-01-01T02:00:00.000Z', until: '2026-01-01T01:00:00.000Z' })).toMatchObject({
      since: '2026-01-01T00:00:00.000Z',
      points: 61,
      custom: false,
    });
    const now = spanOf({ range: 'day' });
    expect(now.ms).toBe(24 * 3600_000);
    expect(Date.parse(now.until) % 1000).toBe(0);
    expect(Date.parse(now.until)).toBeGreaterThanOrEqual(Date.now() - 1000);
  });

  it('fits the whole history: from a little before the first event to the end, in 100 samples', () => {
    // A history of 99.5 s: it starts 3.98 s (4 %) before the first event.
    expect(spanOf({ range: 'all', until: '2026-01-01T00:01:40.000Z' }, '2026-01-01T00:00:00.500Z')).toEqual({
      since: '2025-12-31T23:59:56.520Z',
      until: '2026-01-01T00:01:40.000Z',
      ms: 103_480,
      points: 100,
      custom: false,
      fitted: true,
    });
    // A first event a moment ago still gives a range (starting at least 100 ms before it).
    const firstAt = Date.now() - 200;
    const fresh = spanOf({ range: 'all' }, new Date(firstAt).toISOString());
    expect(fresh.fitted).toBe(true);
    expect(Date.parse(fresh.since)).toBeLessThanOrEqual(firstAt - 100);
    expect(fresh.ms).toBeLessThan(2000);
    // No history, or one that starts after the end: a day.
    expect(spanOf({ range: 'all', until: '2026-01-02T00:00:00.000Z' })).toMatchObject({
      since: '2026-01-01T00:00:00.000Z',
      points: 97,
      fitted: false,
    });
    expect(spanOf({ range: 'all', until: '2026-01-02T00:00:00.000Z' }, '2026-02-01T00:00:00.000Z')).toMatchObject({
      since: '2026-01-01T00:00:00.000Z',
      fitted: false,
    });
  });
});
