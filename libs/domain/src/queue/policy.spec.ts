import { describe, expect, it } from 'vitest';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { compareShares, fairShareOrder, fairShareWeight, isBlocking, weightedDominantShare, type FairShareCandidate } from './policy.js';

const list = (raw: Record<string, string>): ResourceList => Resources.resourceList(raw);

describe('the queue policy: BestEffortFIFO with a bound on passing', () => {
  it('makes a waiter blocking once passed passMax times or after passMs', () => {
    const policy = { passMax: 3, passMs: 1000, perNamespaceMax: 10, blockSharePercent: 100 };
    expect(isBlocking({ passed: 2, queuedAt: 0 }, 999, policy)).toBe(false);
    expect(isBlocking({ passed: 3, queuedAt: 0 }, 0, policy)).toBe(true);
    expect(isBlocking({ passed: 0, queuedAt: 0 }, 1000, policy)).toBe(true);
  });

  it.each([
    [{ labels: { 'quota-ledger.io/fair-share-weight': '3' } }, 3],
    [{ annotations: { 'quota-ledger.io/fair-share-weight': '7' } }, 7],
    [{ labels: { 'quota-ledger.io/fair-share-weight': '0' } }, 1],
    [{ labels: { 'quota-ledger.io/fair-share-weight': '1.5' } }, 1],
    [{ labels: { 'quota-ledger.io/fair-share-weight': '9999' } }, 1000],
    [undefined, 1],
  ])('reads the weight from %j as %d', (meta, weight) => {
    expect(fairShareWeight(meta)).toBe(weight);
  });

  it('takes the dominant resource share, divided by the weight, exactly', () => {
    const hard = list({ cpu: '10', memory: '100Gi' });
    const share = weightedDominantShare(list({ cpu: '2', memory: '50Gi' }), hard, 2);
    expect(compareShares(share, { num: 1n, den: 4n })).toBe(0);
    expect(compareShares(weightedDominantShare(list({ cpu: '1' }), hard, 1), share)).toBeLessThan(0);
  });

  it('orders by lowest weighted dominant share, then name', () => {
    const hard = list({ cpu: '100' });
    const order = fairShareOrder(
      [
        { namespace: 'b', weight: 1, used: list({ cpu: '10' }) },
        { namespace: 'a', weight: 3, used: list({ cpu: '30' }) },
        { namespace: 'c', weight: 1, used: list({ cpu: '5' }) },
      ],
      hard,
    );
    expect(order.map((c) => c.namespace)).toEqual(['c', 'a', 'b']);
    // A higher priority goes first whatever its share; equals keep the share's order.
    const ranked = fairShareOrder(
      [
        { namespace: 'b', weight: 1, used: list({ cpu: '10' }), priority: 1 },
        { namespace: 'a', weight: 3, used: list({ cpu: '30' }), priority: 1 },
        { namespace: 'c', weight: 1, used: list({ cpu: '5' }) },
        { namespace: 'd', weight: 1, used: list({ cpu: '90' }), priority: 100 },
      ],
      hard,
    );
    expect(ranked.map((c) => c.namespace)).toEqual(['d', 'a', 'b', 'c']);
  });

  it('gives two always-waiting namespaces of weights 1 and 3 25 % and 75 % of the freed capacity (within 2 %)', () => {
    // A shared quota of 100 cpu, full; each release frees one unit from whoever holds it (in
    // turn, oldest first), and the freed room goes to the namespace fairShareOrder names first.
    const hard = list({ cpu: '100' });
    const held: string[] = [...Array<string>(50).fill('light'), ...Array<string>(50).fill('heavy')];
    const used = new Map<string, number>([
      ['light', 50],
      ['heavy', 50],
    ]);
    const received = new Map<string, number>([
      ['light', 0],
      ['heavy', 0],
    ]);
    const weights: Record<string, number> = { light: 1, heavy: 3 };
    for (let round = 0; round < 2000; round++) {
      const freedFrom = held.shift() as string;
      used.set(freedFrom, (used.get(freedFrom) ?? 0) - 1);
      const candidates: FairShareCandidate[] = [...used].map(([namespace, cpu]) => ({
        namespace,
        weight: weights[namespace] ?? 1,
        used: list({ cpu: String(cpu) }),
      }));
      const next = fairShareOrder(candidates, hard)[0]?.namespace as string;
      used.set(next, (used.get(next) ?? 0) + 1);
      received.set(next, (received.get(next) ?? 0) + 1);
      held.push(next);
    }
    const total = 2000;
    expect(Math.abs((received.get('light') ?? 0) / total - 0.25)).toBeLessThan(0.02);
    expect(Math.abs((received.get('heavy') ?? 0) / total - 0.75)).toBeLessThan(0.02);
  });
});
