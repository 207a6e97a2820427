import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Quantity, QuantityParseError, type QuantityFormat } from './quantity.js';

const NANOS = 1_000_000_000n;
const MAX_INT64 = (1n << 63n) - 1n;
const LIMIT_NANOS = 10n ** 39n;

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const sign = fc.constantFrom('', '', '-', '+');
const format = fc.constantFrom<QuantityFormat>('DecimalSI', 'BinarySI', 'DecimalExponent');

/** A plain decimal for nano-units, written without the code under test. */
function plainDecimal(nanos: bigint): string {
  const negative = nanos < 0n;
  const magnitude = negative ? -nanos : nanos;
  return `${negative ? '-' : ''}${magnitude / NANOS}.${(magnitude % NANOS).toString().padStart(9, '0')}`;
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/**
 * A well-formed quantity text whose value is a whole number of nano-units, with the exact
 * value worked out independently of the parser: decimal suffixes and exponents as long as
 * the fraction stops at the nano, binary suffixes below the 2^63-1 cap.
 */
const exactText = fc.oneof(
  fc
    .record({
      sign,
      whole: digits(0, 11),
      fraction: digits(0, 9),
      suffix: fc.oneof(
        fc.constantFrom(...Object.keys(DECIMAL_SUFFIXES)).map((s) => ({ text: s, exponent: DECIMAL_SUFFIXES[s] ?? 0 })),
        fc.tuple(fc.constantFrom('e', 'E'), fc.integer({ min: -9, max: 18 })).map(([e, n]) => ({ text: `${e}${n}`, exponent: n })),
      ),
    })
    .filter(({ whole, fraction, suffix }) => whole.length + fraction.length > 0 && suffix.exponent - fraction.length >= -9)
    .map(({ sign: s, whole, fraction, suffix }) => {
      const magnitude = BigInt(`${whole}${fraction}` || '0') * 10n ** BigInt(suffix.exponent - fraction.length + 9);
      return { text: `${s}${whole}${fraction ? `.${fraction}` : ''}${suffix.text}`, nanos: s === '-' ? -magnitude : magnitude };
    }),
  fc
    .record({
      sign,
      whole: fc.bigInt({ min: 0n, max: 999n }),
      fraction: digits(0, 9),
      suffix: fc.constantFrom('Ki', 'Mi', 'Gi', 'Ti', 'Pi'),
    })
    .map(({ sign: s, whole, fraction, suffix }) => {
      const scaled = BigInt(`${whole}${fraction}`) * (1n << BigInt(BINARY_SUFFIXES[suffix] ?? 0)) * NANOS;
      const magnitude = scaled / 10n ** BigInt(fraction.length);
      return { text: `${s}${whole}${fraction ? `.${fraction}` : ''}${suffix}`, nanos: s === '-' ? -magnitude : magnitude };
    }),
);

/** Any well-formed text Kubernetes would accept, rounding and capping included. */
const validText = fc.oneof(
  exactText.map((x) => x.text),
  fc
    .tuple(
      sign,
      digits(0, 14),
      fc.option(digits(0, 30)),
      fc.oneof(
        fc.constantFrom(...Object.keys(DECIMAL_SUFFIXES), ...Object.keys(BINARY_SUFFIXES)),
        fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 16 })).map((p) => p.join('')),
      ),
    )
    .map(([s, whole, fraction, suffix]) => `${s}${whole}${fraction === null ? '' : `.${fraction}`}${suffix}`),
);

/** A quantity as Kubernetes code builds one: any exact value below the bound, any format. */
const anyQuantity = fc
  .tuple(fc.bigInt({ min: -LIMIT_NANOS, max: LIMIT_NANOS }), format, fc.integer({ min: 0, max: 30 }))
  // Trailing zeros make the interesting canonical forms (k, M, Gi, …) likely.
  .map(([n, f, zeros]) => {
    const nanos = (n / 10n ** BigInt(zeros)) * 10n ** BigInt(zeros);
    const capped = f === 'BinarySI' && (nanos > MAX_INT64 * NANOS || nanos < -MAX_INT64 * NANOS) ? nanos / 10n ** 12n : nanos;
    return Quantity.fromNanos(capped, f);
  });

const binaryQuantity = fc
  .tuple(fc.bigInt({ min: -(2n ** 32n), max: 2n ** 32n }), fc.integer({ min: 0, max: 3 }))
  .map(([n, k]) => Quantity.fromInt(n * 1024n ** BigInt(k), 'BinarySI'));

describe('round trips', () => {
  it('parses every canonical string back to itself and to the same value', () => {
    fc.assert(
      fc.property(fc.oneof(anyQuantity, binaryQuantity), (q) => {
        const s = q.toString();
        const parsed = Quantity.parse(s);
        expect(parsed.equals(q)).toBe(true);
        // A BinarySI amount printed without a binary suffix reads back as DecimalSI, which
        // may spell it differently ("2000" becomes "2k"), in Kubernetes too.
        if (q.format === 'BinarySI' && !/i$/.test(s)) return;
        expect(parsed.toString()).toBe(s);
        expect(parsed.canonical()).toBe(s);
      }),
      { numRuns: 3000 },
    );
  });

  it('gives any valid text a canonical form that parses to the same value', () => {
    fc.assert(
      fc.property(validText, (x) => {
        const q = Quantity.tryParse(x);
        fc.pre(q !== undefined);
        const canonical = Quantity.parse(q.canonical());
        expect(canonical.equals(q)).toBe(true);
        // As above: BinarySI printed without a binary suffix ("109.375Ki" prints "112000")
        // reads back as DecimalSI and spells itself "112k", in Kubernetes too.
        if (!(q.format === 'BinarySI' && !/i$/.test(q.canonical()))) expect(canonical.canonical()).toBe(q.canonical());
        expect(Quantity.parse(q.toString()).equals(q)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('survives JSON as the Kubernetes fuzzer builds quantities (TestJSON)', () => {
    const int63 = fc.bigInt({ min: 0n, max: MAX_INT64 });
    const fuzzed = fc.oneof(
      int63.map((v) => Quantity.fromInt(v, 'BinarySI')),
      fc
        .tuple(fc.bigInt({ min: 0n, max: 1023n }), fc.integer({ min: 0, max: 4 }))
        .map(([v, k]) => Quantity.fromInt(v << BigInt(10 * k), 'BinarySI')),
      fc
        .tuple(int63, fc.integer({ min: 0, max: 3 }), fc.constantFrom<QuantityFormat>('DecimalSI', 'DecimalExponent'))
        .map(([v, s, f]) => Quantity.fromScaled(v, -s, f)),
      fc
        .tuple(
          fc.bigInt({ min: 0n, max: 999n }),
          fc.integer({ min: 0, max: 14 }),
          fc.constantFrom<QuantityFormat>('DecimalSI', 'DecimalExponent'),
        )
        .map(([v, i, f]) => Quantity.fromScaled(v, i - 3, f)),
    );
    fc.assert(
      fc.property(fuzzed, (q) => {
        const back = Quantity.fromJSON(JSON.parse(JSON.stringify(q)) as string);
        expect(back.equals(q)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('exactness', () => {
  it('parses well-formed text to its exact value', () => {
    fc.assert(
      fc.property(exactText, ({ text, nanos }) => {
        expect(Quantity.parse(text).nanos).toBe(nanos);
      }),
      { numRuns: 3000 },
    );
  });

  it('adds exactly: parse(a) + parse(b) is the quantity of the exact decimal sum', () => {
    fc.assert(
      fc.property(exactText, exactText, (a, b) => {
        const sum = Quantity.parse(a.text).add(Quantity.parse(b.text));
        expect(sum.equals(Quantity.parse(plainDecimal(a.nanos + b.nanos)))).toBe(true);
        expect(
          Quantity.parse(a.text)
            .sub(Quantity.parse(b.text))
            .equals(Quantity.parse(plainDecimal(a.nanos - b.nanos))),
        ).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('rounds long decimal text up to the nano-unit, or refuses it above 10^30', () => {
    fc.assert(
      fc.property(sign, digits(1, 45), digits(0, 45), fc.integer({ min: -40, max: 40 }), (s, whole, fraction, exponent) => {
        const digitsValue = BigInt(whole + fraction);
        const shift = exponent - fraction.length + 9;
        const magnitude = shift >= 0 ? digitsValue * 10n ** BigInt(shift) : ceilDiv(digitsValue, 10n ** BigInt(-shift));
        const text = `${s}${whole}.${fraction}e${exponent}`;
        if (magnitude > LIMIT_NANOS) {
          expect(() => Quantity.parse(text)).toThrow(QuantityParseError);
        } else {
          expect(Quantity.parse(text).nanos).toBe(s === '-' ? -magnitude : magnitude);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('rounds long binary fractions up to the nano-unit and caps at 2^63-1', () => {
    fc.assert(
      fc.property(sign, digits(1, 22), digits(0, 80), fc.constantFrom(...Object.keys(BINARY_SUFFIXES)), (s, whole, fraction, suffix) => {
        const factor = (1n << BigInt(BINARY_SUFFIXES[suffix] ?? 0)) * NANOS;
        const exact = ceilDiv(BigInt(whole + fraction) * factor, 10n ** BigInt(fraction.length));
        const magnitude = exact > MAX_INT64 * NANOS ? MAX_INT64 * NANOS : exact;
        const q = Quantity.parse(`${s}${whole}.${fraction}${suffix}`);
        expect(q.nanos).toBe(s === '-' ? -magnitude : magnitude);
        expect(q.format).toBe(magnitude > 0n && magnitude < NANOS ? 'DecimalSI' : 'BinarySI');
      }),
      { numRuns: 3000 },
    );
  });

  it('cancels any sum by subtracting its terms, across scales (TestAddSubRoundTrip)', () => {
    const scaled = fc
      .tuple(fc.bigInt({ min: 0n, max: MAX_INT64 }), fc.integer({ min: -9, max: 10 }))
      .map(([v, k]) => Quantity.fromScaled(v, k));
    fc.assert(
      fc.property(fc.array(scaled, { maxLength: 100 }), (terms) => {
        const total = terms.reduce((sum, q) => sum.add(q), Quantity.ZERO);
        expect(terms.reduce((rest, q) => rest.sub(q), total).isZero()).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('undoes a double negation (TestNegateRoundTrip)', () => {
    fc.assert(
      fc.property(anyQuantity, (q) => {
        expect(q.neg().neg().equals(q)).toBe(true);
        expect(q.neg().neg().format).toBe(q.format);
      }),
    );
  });
});

describe('order', () => {
  it('is a total order consistent with the sign of the difference', () => {
    fc.assert(
      fc.property(anyQuantity, anyQuantity, anyQuantity, (a, b, c) => {
        expect(a.cmp(a)).toBe(0);
        expect(a.cmp(b)).toBe(a.sub(b).sign());
        expect(a.cmp(b)).toBe(-b.cmp(a) || 0);
        expect(a.equals(b)).toBe(a.cmp(b) === 0);
        if (a.cmp(b) <= 0 && b.cmp(c) <= 0) expect(a.cmp(c)).toBeLessThanOrEqual(0);
      }),
      { numRuns: 3000 },
    );
  });

  it('orders parsed text the same way whatever the spelling', () => {
    fc.assert(
      fc.property(exactText, exactText, (a, b) => {
        const expected = a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
        expect(Quantity.parse(a.text).cmp(Quantity.parse(b.text))).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('reading values out', () => {
  it('rounds Value and MilliValue away from zero', () => {
    fc.assert(
      fc.property(anyQuantity, (q) => {
        const magnitude = q.nanos < 0n ? -q.nanos : q.nanos;
        const sign = q.sign();
        expect(q.value()).toBe(BigInt(sign) * ceilDiv(magnitude, NANOS));
        expect(q.milliValue()).toBe(BigInt(sign) * ceilDiv(magnitude, 1_000_000n));
      }),
    );
  });
});

describe('robustness', () => {
  it('answers any text with a quantity or a QuantityParseError, nothing else', () => {
    const alphabet = fc.constantFrom(...'0123456789.+-eEinumkKMGTP .x');
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 24 })), (text) => {
        try {
          const q = Quantity.parse(text);
          expect(Quantity.parse(q.toString()).equals(q)).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(QuantityParseError);
        }
      }),
      { numRuns: 5000 },
    );
  });
});
