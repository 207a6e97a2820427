import { describe, expect, it } from 'vitest';
import { bodyLimits, InFlightBudget, SMALL_BODY_BYTES } from './json-body.js';

describe('the bytes of bodies being read at once', () => {
  /** The smallest large body: a budget of 100 of them. */
  const L = SMALL_BODY_BYTES + 1;
  const MAX = 100 * L;

  it('are bounded in all, and one principal holds at most a quarter of the large ones', () => {
    const budget = new InFlightBudget(MAX);
    expect([budget.take('tenant', 20 * L), budget.take('tenant', 5 * L), budget.take('tenant', L)]).toEqual([true, true, false]);
    expect([budget.take('b', 25 * L), budget.take('c', 25 * L), budget.take('d', 12 * L), budget.take('e', 2 * L)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    budget.give('tenant', 20 * L);
    expect([budget.take('d', 14 * L), budget.take('e', 20 * L), budget.take('f', L)]).toEqual([false, true, false]);
  });

  it("keep an eighth for small bodies: one tenant's large pods, which all come as the kube-apiserver, never refuse its small reviews", () => {
    const budget = new InFlightBudget(MAX);
    for (const principal of ['a', 'b', 'c']) expect(budget.take(principal, 25 * L)).toBe(true);
    expect(budget.take('d', 12 * L)).toBe(true);
    expect(budget.take('d', L)).toBe(false);
    // The rest (12.5 L) is the small bodies', whoever sends them.
    let small = 0;
    while (budget.take('a', SMALL_BODY_BYTES)) small++;
    expect(small).toBe(Math.floor((MAX - 87 * L) / SMALL_BODY_BYTES));
    budget.give('a', SMALL_BODY_BYTES);
    expect(budget.take('kube-apiserver', SMALL_BODY_BYTES)).toBe(true);
  });

  it('let one principal read a body of the largest size even when it is over a quarter', () => {
    const budget = new InFlightBudget(MAX);
    expect(budget.take('apiserver', 60 * L)).toBe(true);
    expect(budget.take('apiserver', L)).toBe(false);
    budget.give('apiserver', 60 * L);
    expect(budget.take('apiserver', 87 * L)).toBe(true);
  });
});

describe('body limits per kind of route', () => {
  it('give definitions less room than admissions, never more than BODY_LIMIT_BYTES', () => {
    expect(bodyLimits('admission', { bodyLimitBytes: 3_211_264 })).toEqual({ bytesMax: 3_211_264, depthMax: 64, valuesMax: 200_000 });
    expect(bodyLimits('definition', { bodyLimitBytes: 3_211_264 })).toEqual({ bytesMax: 524_288, depthMax: 64, valuesMax: 20_000 });
    expect(bodyLimits('definition', { bodyLimitBytes: 4096 }).bytesMax).toBe(4096);
  });
});
