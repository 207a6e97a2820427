import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeReservationCursor, encodeReservationCursor, usageRatio } from './audit-queries.js';

describe('reservation cursors', () => {
  it('decode what they encode', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        fc.integer({ min: 0, max: 999 }),
        fc.string({ minLength: 1, maxLength: 253 }),
        (date, micros, id) => {
          const reservedAt = `${date.toISOString().slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
          expect(decodeReservationCursor(encodeReservationCursor({ reservedAt, id }))).toEqual({ reservedAt, id });
        },
      ),
    );
  });

  it.each([
    ['an empty string', ''],
    ['a position', '42'],
    ['base64 that is not JSON', Buffer.from('nope').toString('base64url')],
    ['JSON of another shape', Buffer.from(JSON.stringify({ reservedAt: '2026-01-01T00:00:00.000000Z', id: 'a' })).toString('base64url')],
    ['a time without microseconds', Buffer.from(JSON.stringify(['2026-01-01T00:00:00Z', 'a'])).toString('base64url')],
    ['an empty id', Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000000Z', ''])).toString('base64url')],
    ['standard base64 padding', 'WyIyMDI2Il0='],
  ])('refuse %s', (_case, text) => {
    expect(decodeReservationCursor(text)).toBeUndefined();
  });
});

describe('usageRatio', () => {
  it.each([
    ['0', '4', 0],
    ['3', '4', 0.75],
    ['1500m', '2', 0.75],
    ['1Gi', '2Gi', 0.5],
    ['5', '4', 1.25],
    [undefined, '4', 0],
    ['0', '0', 1],
  ] as const)('used %s of hard %s is %d', (used, hard, ratio) => {
    expect(usageRatio(used, hard)).toBe(ratio);
  });

  it('marks usage over a hard limit of 0 as far over, not as a division by zero', () => {
    expect(usageRatio('1', '0')).toBe(Number.MAX_SAFE_INTEGER);
  });
});
