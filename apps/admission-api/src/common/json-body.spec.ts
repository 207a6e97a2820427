import { describe, expect, it } from 'vitest';
import { bodyLimits, InFlightBudget } from './json-body.js';

describe('the bytes of bodies being read at once', () => {
  it('are bounded in all, and one principal holds at most a quarter of them', () => {
    const budget = new InFlightBudget(100);
    expect([budget.take('tenant', 20), budget.take('tenant', 5), budget.take('tenant', 1)]).toEqual([true, true, false]);
    expect([budget.take('b', 25), budget.take('c', 25), budget.take('d', 25), budget.take('e', 1)]).toEqual([true, true, true, false]);
    budget.give('tenant', 20);
    expect([budget.take('d', 1), budget.take('e', 20), budget.take('f', 1)]).toEqual([false, true, false]);
  });

  it('let one principal read a body of the largest size even when it is over a quarter', () => {
    const budget = new InFlightBudget(100);
    expect(budget.take('apiserver', 60)).toBe(true);
    expect(budget.take('apiserver', 1)).toBe(false);
    budget.give('apiserver', 60);
    expect(budget.take('apiserver', 100)).toBe(true);
  });
});

describe('body limits per kind of route', () => {
  it('give definitions less room than admissions, never more than BODY_LIMIT_BYTES', () => {
    expect(bodyLimits('admission', { bodyLimitBytes: 3_211_264 })).toEqual({ bytesMax: 3_211_264, depthMax: 64, valuesMax: 200_000 });
    expect(bodyLimits('definition', { bodyLimitBytes: 3_211_264 })).toEqual({ bytesMax: 524_288, depthMax: 64, valuesMax: 20_000 });
    expect(bodyLimits('definition', { bodyLimitBytes: 4096 }).bytesMax).toBe(4096);
  });
});
