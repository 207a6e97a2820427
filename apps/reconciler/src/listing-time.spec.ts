import { describe, expect, it } from 'vitest';
import { CACHE_DELIVERY_MARGIN_MS, listingTime } from './listing-time.js';

describe('listingTime: the ledger instant a listing is as of', () => {
  it.each([
    {
      name: 'listed from the cluster now: the ledger clock read before it',
      ledgerAt: 10_000,
      localAt: 5_000,
      asOf: undefined,
      want: 10_000,
    },
    {
      name: 'from a cache current now: the delivery margin before it',
      ledgerAt: 10_000,
      localAt: 5_000,
      asOf: 5_000,
      want: 10_000 - CACHE_DELIVERY_MARGIN_MS,
    },
    {
      name: 'from a cache current 3 s ago: that much earlier too',
      ledgerAt: 10_000,
      localAt: 5_000,
      asOf: 2_000,
      want: 7_000 - CACHE_DELIVERY_MARGIN_MS,
    },
    {
      name: 'from a cache read after the clock (asOf later than localAt): never later than the clock',
      ledgerAt: 10_000,
      localAt: 5_000,
      asOf: 5_020,
      want: 10_000 - CACHE_DELIVERY_MARGIN_MS,
    },
  ])('$name', ({ ledgerAt, localAt, asOf, want }) => {
    expect(listingTime(ledgerAt, localAt, asOf)).toBe(want);
  });
});
