import { describe, expect, it } from 'vitest';
import { age, localTime, parseInstant, percent, quantityNumber, resourceList, usageRatio } from './format.js';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();

describe('dashboard formatting', () => {
  it.each([
    [0, '0 s'],
    [59_000, '59 s'],
    [60_000, '1 min'],
    [3_599_000, '59 min'],
    [3_600_000, '1 h'],
    [3_660_000, '1 h 1 min'],
    [47 * 3_600_000, '47 h'],
    [48 * 3_600_000, '2 d'],
    [50 * 3_600_000, '2 d 2 h'],
    [-5_000, '0 s'],
  ])('age of %d ms reads %s', (ms, text) => {
    expect(age(ago(ms), NOW)).toBe(text);
  });

  it.each([
    [0, '0 %'],
    [0.004, '<1 %'],
    [0.6, '60 %'],
    [1, '100 %'],
    [12, '≥1000 %'],
    [Infinity, '≥1000 %'],
  ])('percent(%d) is %s', (ratio, text) => {
    expect(percent(ratio)).toBe(text);
  });

  it.each([
    ['500m', 0.5],
    ['2', 2],
    ['1Gi', 1073741824],
    ['1.5k', 1500],
    [undefined, 0],
    ['not-a-quantity', Number.NaN],
  ])('quantityNumber(%s) is %d', (value, number) => {
    expect(quantityNumber(value)).toBe(number);
  });

  it.each([
    ['3', '4', 0.75],
    [undefined, '4', 0],
    ['500m', '2', 0.25],
    ['0', '0', 1],
    ['1', '0', Infinity],
  ])('usageRatio(%s, %s) is %d', (used, hard, ratio) => {
    expect(usageRatio(used, hard)).toBe(ratio);
  });

  it('lists resources in the order given, or says nothing', () => {
    expect(resourceList({ pods: '1', 'requests.cpu': '100m' })).toBe('pods: 1, requests.cpu: 100m');
    expect(resourceList({})).toBe('nothing');
  });
});

describe('an instant typed into the page', () => {
  it('reads back what the page writes (local time, to the second), and RFC 3339 with a zone', () => {
    const iso = '2026-11-23T14:05:09.000Z';
    expect(parseInstant(localTime(iso))).toBe(iso);
    expect(parseInstant(`  ${localTime(iso)} `)).toBe(iso);
    expect(parseInstant('2026-11-23T14:05:09Z')).toBe(iso);
    expect(parseInstant('2026-11-23T15:05:09+01:00')).toBe(iso);
  });

  it.each(['', 'yesterday', '2026-11-23', '23/11/2026 14:05', '2026-13-45 99:99:99'])('refuses %j', (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });
});
