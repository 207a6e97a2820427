import { describe, expect, it } from 'vitest';
import { rangeQuery, rangeRoute, spanOf } from './range.js';

describe('a chart range in the address', () => {
  it('reads the zoom level and the ends, a day ending now by default, dropping what does not parse', () => {
    expect(rangeRoute(new URLSearchParams(''))).toEqual({ range: 'day' });
    expect(rangeRoute(new URLSearchParams('range=week&until=2026-01-08T00:00:00Z'))).toEqual({ range: 'week', until: '2026-01-08T00:00:00.000Z' });
    expect(rangeRoute(new URLSearchParams('range=year&until=yesterday&since=2026-01-01T00:00:00Z'))).toEqual({ range: 'day' });
    expect(rangeRoute(new URLSearchParams('range=hour&since=2026-01-01T00:00:00Z'))).toEqual({ range: 'hour' });
    expect(rangeRoute(new URLSearchParams('range=hour&since=2026-01-01T00:00:00Z&until=2026-01-01T00:05:00Z'))).toEqual({ range: 'hour', since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T00:05:00.000Z' });
  });

  it('writes back what it reads', () => {
    for (const route of [{ range: 'day' }, { range: 'week', until: '2026-01-08T00:00:00.000Z' }, { range: 'hour', since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T00:05:00.000Z' }] as const) {
      expect(rangeRoute(new URLSearchParams(rangeQuery(route)))).toEqual(route);
    }
    // A start without an end says nothing: a zoom level ends at an instant or now.
    expect(rangeQuery({ range: 'hour', since: '2026-01-01T00:00:00.000Z' })).toBe('range=hour');
  });

  it('spans a zoom level back from its end, and a range given by both ends at 100 samples', () => {
    expect(spanOf({ range: 'week', until: '2026-01-08T00:00:00.000Z' })).toEqual({ since: '2026-01-01T00:00:00.000Z', until: '2026-01-08T00:00:00.000Z', ms: 7 * 24 * 3600_000, points: 169, custom: false });
    expect(spanOf({ range: 'hour', since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T00:05:00.000Z' })).toEqual({ since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T00:05:00.000Z', ms: 300_000, points: 100, custom: true });
    // Ends before it starts: the zoom level, back from the end.
    expect(spanOf({ range: 'hour', since: '2026-01-01T02:00:00.000Z', until: '2026-01-01T01:00:00.000Z' })).toMatchObject({ since: '2026-01-01T00:00:00.000Z', points: 61, custom: false });
    const now = spanOf({ range: 'day' });
    expect(Date.parse(now.until) % 1000).toBe(0);
    expect(Date.parse(now.until)).toBeGreaterThanOrEqual(Date.now() - 1000);
  });
});
