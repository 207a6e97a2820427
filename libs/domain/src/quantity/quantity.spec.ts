import { describe, expect, it } from 'vitest';
import { InvariantViolation } from '../assert.js';
import { Quantity, QuantityParseError, QUANTITY_ERRORS, type QuantityFormat } from './quantity.js';

/**
 * Kubernetes' own tables (k8s.io/apimachinery/pkg/api/resource, quantity_test.go,
 * scale_int_test.go, quantity_example_test.go), ported as data. Where a row only exercises
 * Go's internal int64/inf.Dec representation it is left out; the report lists which.
 */

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);

/** Kubernetes' decQuantity helper: mantissa × 10^exponent in a format. */
const dec = (mantissa: bigint | number, exponent: number, format: QuantityFormat = 'DecimalSI'): Quantity =>
  Quantity.fromScaled(BigInt(mantissa), exponent, format);

/** Nano-units of a plain decimal such as "-12.5", worked out without the parser under test. */
function nanosOf(decimal: string): bigint {
  const negative = decimal.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? decimal.slice(1) : decimal).split('.');
  const nanos = BigInt(whole || '0') * 1_000_000_000n + BigInt((fraction + '000000000').slice(0, 9));
  return negative ? -nanos : nanos;
}

function parseError(input: string): QuantityParseError {
  try {
    Quantity.parse(input);
  } catch (error) {
    if (error instanceof QuantityParseError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(input)} parsed`);
}

describe('parsing (TestQuantityParse)', () => {
  // [input, mantissa, exponent, format]: the value is mantissa × 10^exponent.
  const table: [string, bigint | number, number, QuantityFormat][] = [
    ['0', 0, 0, 'DecimalSI'],
    ['0n', 0, 0, 'DecimalSI'],
    ['0u', 0, 0, 'DecimalSI'],
    ['0m', 0, 0, 'DecimalSI'],
    ['0Ki', 0, 0, 'BinarySI'],
    ['0k', 0, 0, 'DecimalSI'],
    ['0Mi', 0, 0, 'BinarySI'],
    ['0M', 0, 0, 'DecimalSI'],
    ['0Gi', 0, 0, 'BinarySI'],
    ['0G', 0, 0, 'DecimalSI'],
    ['0Ti', 0, 0, 'BinarySI'],
    ['0T', 0, 0, 'DecimalSI'],

    // a bare number needs no suffix
    ['1', 1, 0, 'DecimalSI'],

    // binary suffixes
    ['1Ki', 1024, 0, 'BinarySI'],
    ['8Ki', 8 * 1024, 0, 'BinarySI'],
    ['7Mi', 7 * 1024 ** 2, 0, 'BinarySI'],
    ['6Gi', 6 * 1024 ** 3, 0, 'BinarySI'],
    ['5Ti', 5 * 1024 ** 4, 0, 'BinarySI'],
    ['4Pi', 4n * 1024n ** 5n, 0, 'BinarySI'],
    ['3Ei', 3n * 1024n ** 6n, 0, 'BinarySI'],
    ['10Ti', 10 * 1024 ** 4, 0, 'BinarySI'],
    ['100Ti', 100 * 1024 ** 4, 0, 'BinarySI'],

    // decimal suffixes
    ['5n', 5, -9, 'DecimalSI'],
    ['4u', 4, -6, 'DecimalSI'],
    ['3m', 3, -3, 'DecimalSI'],
    ['9', 9, 0, 'DecimalSI'],
    ['8k', 8, 3, 'DecimalSI'],
    ['50k', 5, 4, 'DecimalSI'],
    ['7M', 7, 6, 'DecimalSI'],
    ['6G', 6, 9, 'DecimalSI'],
    ['5T', 5, 12, 'DecimalSI'],
    ['40T', 4, 13, 'DecimalSI'],
    ['300T', 3, 14, 'DecimalSI'],
    ['2P', 2, 15, 'DecimalSI'],
    ['1E', 1, 18, 'DecimalSI'],

    // decimal exponents, standard and not
    ['1E-3', 1, -3, 'DecimalExponent'],
    ['1e3', 1, 3, 'DecimalExponent'],
    ['1E6', 1, 6, 'DecimalExponent'],
    ['1e9', 1, 9, 'DecimalExponent'],
    ['1E12', 1, 12, 'DecimalExponent'],
    ['1e15', 1, 15, 'DecimalExponent'],
    ['1E18', 1, 18, 'DecimalExponent'],
    ['1e14', 1, 14, 'DecimalExponent'],
    ['1e13', 1, 13, 'DecimalExponent'],
    ['100.035k', 100035, 0, 'DecimalSI'],

    // things that look like floating point
    ['0.001', 1, -3, 'DecimalSI'],
    ['0.0005k', 5, -1, 'DecimalSI'],
    ['0.005', 5, -3, 'DecimalSI'],
    ['0.05', 5, -2, 'DecimalSI'],
    ['0.5', 5, -1, 'DecimalSI'],
    ['0.00050k', 5, -1, 'DecimalSI'],
    ['0.00500', 5, -3, 'DecimalSI'],
    ['0.05000', 5, -2, 'DecimalSI'],
    ['0.50000', 5, -1, 'DecimalSI'],
    ['0.5e0', 5, -1, 'DecimalExponent'],
    ['0.5e-1', 5, -2, 'DecimalExponent'],
    ['0.5e-2', 5, -3, 'DecimalExponent'],
    ['10.035M', 10035, 3, 'DecimalSI'],
    ['1.2e3', 12, 2, 'DecimalExponent'],
    ['1.3E+6', 13, 5, 'DecimalExponent'],
    ['1.40e9', 14, 8, 'DecimalExponent'],
    ['1.53E12', 153, 10, 'DecimalExponent'],
    ['1.6e15', 16, 14, 'DecimalExponent'],
    ['1.7E18', 17, 17, 'DecimalExponent'],
    ['9.01', 901, -2, 'DecimalSI'],
    ['8.1k', 81, 2, 'DecimalSI'],
    ['7.123456M', 7123456, 0, 'DecimalSI'],
    ['6.987654321G', 6987654321, 0, 'DecimalSI'],
    ['5.444T', 5444, 9, 'DecimalSI'],
    ['40.1T', 401, 11, 'DecimalSI'],
    ['300.2T', 3002, 11, 'DecimalSI'],
    ['2.5P', 25, 14, 'DecimalSI'],
    ['1.01E', 101, 16, 'DecimalSI'],

    // below a nano-unit rounds up; BinarySI saturates at 2^63-1
    ['3.001n', 4, -9, 'DecimalSI'],
    ['1.1E-9', 2, -9, 'DecimalExponent'],
    ['0.0000000001', 1, -9, 'DecimalSI'],
    ['0.0000000005', 1, -9, 'DecimalSI'],
    ['0.00000000050', 1, -9, 'DecimalSI'],
    ['0.5e-9', 1, -9, 'DecimalExponent'],
    ['0.9n', 1, -9, 'DecimalSI'],
    ['0.00000012345', 124, -9, 'DecimalSI'],
    ['0.00000012354', 124, -9, 'DecimalSI'],
    ['9Ei', MAX_INT64, 0, 'BinarySI'],
    ['9223372036854775807Ki', MAX_INT64, 0, 'BinarySI'],
    ['12E', 12, 18, 'DecimalSI'],

    // fractional binary amounts
    ['100.035Ki', 10243584, -2, 'BinarySI'],
    ['0.5Mi', 0.5 * 1024 * 1024, 0, 'BinarySI'],
    ['0.05Gi', 536870912, -1, 'BinarySI'],
    ['0.025Ti', 274877906944, -1, 'BinarySI'],

    // odd spellings Kubernetes accepts; a sub-unit binary amount turns DecimalSI
    ['0.000000000001Ki', 2, -9, 'DecimalSI'],
    ['.001', 1, -3, 'DecimalSI'],
    ['.0001k', 100, -3, 'DecimalSI'],
    ['1.', 1, 0, 'DecimalSI'],
    ['1.G', 1, 9, 'DecimalSI'],
  ];

  it.each(table)('parses %s to %s × 10^%s (%s)', (input, mantissa, exponent, format) => {
    const q = Quantity.parse(input);
    expect(q.nanos).toBe(dec(mantissa, exponent).nanos);
    expect(q.format).toBe(format);
  });

  it.each(table)('parses -%s to the negated value in the same format', (input, mantissa, exponent, format) => {
    const q = Quantity.parse(`-${input}`);
    expect(q.nanos).toBe(-dec(mantissa, exponent).nanos);
    expect(q.format).toBe(format);
  });

  it.each(table)('parses +%s like %s', (input, mantissa, exponent, format) => {
    const q = Quantity.parse(`+${input}`);
    expect(q.nanos).toBe(dec(mantissa, exponent).nanos);
    expect(q.format).toBe(format);
  });

  it.each(table)('keeps the value of %s when rebuilt in any format', (input) => {
    const q = Quantity.parse(input);
    for (const format of ['DecimalSI', 'BinarySI', 'DecimalExponent'] as const) {
      expect(Quantity.fromNanos(q.nanos, format).equals(q)).toBe(true);
    }
  });

  it('prints a parsed "0" as "0" (TestQuantityParseZero)', () => {
    expect(Quantity.parse('0').toString()).toBe('0');
  });
});

describe('rejected input, with the error Kubernetes returns', () => {
  const table: [string, keyof typeof QUANTITY_ERRORS][] = [
    // Kubernetes' own invalid list
    ['1.1.M', 'formatWrong'],
    ['1+1.0M', 'formatWrong'],
    ['0.1mi', 'suffix'],
    ['0.1am', 'formatWrong'],
    ['aoeu', 'formatWrong'],
    ['.5i', 'suffix'],
    ['1i', 'suffix'],
    ['-3.01i', 'suffix'],
    ['-3.01e-', 'suffix'],
    [' 1', 'formatWrong'],
    ['1 ', 'formatWrong'],
    ['', 'formatWrong'],
    ['Non-Numeric', 'formatWrong'],
    // more, each checked against Kubernetes' ParseQuantity
    ['.e-10', 'numeric'],
    ['-.e-10', 'numeric'],
    ['1e', 'suffix'],
    ['e', 'suffix'],
    ['1E+', 'suffix'],
    ['1Kii', 'suffix'],
    ['1KiB', 'formatWrong'],
    ['1k3', 'suffix'],
    ['1e1.5', 'formatWrong'],
    ['1ee5', 'suffix'],
    ['--1', 'suffix'],
    ['+-1', 'suffix'],
    ['1e-+5', 'formatWrong'],
    ['\u0661', 'formatWrong'],
    ['1e9223372036854775808', 'suffix'],
    ['1e-9223372036854775809', 'suffix'],
  ];

  it.each(table)('rejects %j as %s', (input, reason) => {
    const error = parseError(input);
    expect(error.reason).toBe(reason);
    expect(error.message).toBe(QUANTITY_ERRORS[reason]);
    expect(error.code).toBe('QuantityInvalid');
    expect(Quantity.tryParse(input)).toBeUndefined();
  });

  // Kubernetes prints its regular expression; a caller is better served by examples.
  it('says what a quantity looks like, never a regular expression', () => {
    expect(QUANTITY_ERRORS.formatWrong).toBe('must be a quantity such as "500m", "2", "1Gi" or "1e3"');
    for (const message of Object.values(QUANTITY_ERRORS)) expect(message).not.toContain('[0-9');
    expect(QUANTITY_ERRORS.numeric).toContain(QUANTITY_ERRORS.formatWrong);
    expect(QUANTITY_ERRORS.suffix).toContain('Ki, Mi, Gi');
  });
});

describe('odd spellings Kubernetes accepts', () => {
  // [input, printed, nanos]; all checked against Kubernetes' ParseQuantity and String.
  const table: [string, string, bigint][] = [
    ['.', '0', 0n],
    ['-.', '0', 0n],
    ['+.', '0', 0n],
    ['.Ki', '0', 0n],
    ['e5', '0', 0n],
    ['-.E5', '0', 0n],
    ['00', '0', 0n],
    ['-0', '0', 0n],
    ['+0Ki', '0', 0n],
    ['1e+5', '100e3', 100_000n * 1_000_000_000n],
    ['1e0000000000000000000000005', '100e3', 100_000n * 1_000_000_000n],
    ['5e-10', '1e-9', 1n],
    // the exponent is read as an int64 and then truncated to int32, as Kubernetes does
    ['1e4294967297', '10', 10n * 1_000_000_000n],
    ['1E9223372036854775807', '100e-3', 100_000_000n],
    ['1E8589934592', '1E8589934592', 1_000_000_000n],
  ];

  it.each(table)('parses %j and prints %j', (input, printed, nanos) => {
    const q = Quantity.parse(input);
    expect(q.toString()).toBe(printed);
    expect(q.nanos).toBe(nanos);
  });
});

describe('printing (TestQuantityString)', () => {
  // [mantissa, exponent, format, canonical, an alternate spelling that parses to it]
  const table: [bigint | number, number, QuantityFormat, string, string][] = [
    [1024 ** 3, 0, 'BinarySI', '1Gi', '1024Mi'],
    [300 * 1024 ** 2, 0, 'BinarySI', '300Mi', '307200Ki'],
    [6 * 1024, 0, 'BinarySI', '6Ki', ''],
    [1001 * 1024 ** 3, 0, 'BinarySI', '1001Gi', '1025024Mi'],
    [1024 ** 4, 0, 'BinarySI', '1Ti', '1024Gi'],
    [5, 0, 'BinarySI', '5', '5000m'],
    [500, -3, 'BinarySI', '500m', '0.5'],
    [1, 9, 'DecimalSI', '1G', '1000M'],
    [1000, 6, 'DecimalSI', '1G', '0.001T'],
    [1000000, 3, 'DecimalSI', '1G', ''],
    [1000000000, 0, 'DecimalSI', '1G', ''],
    [1, -3, 'DecimalSI', '1m', '1000u'],
    [80, -3, 'DecimalSI', '80m', ''],
    [1080, -3, 'DecimalSI', '1080m', '1.08'],
    [108, -2, 'DecimalSI', '1080m', '1080000000n'],
    [10800, -4, 'DecimalSI', '1080m', ''],
    [300, 6, 'DecimalSI', '300M', ''],
    [1, 12, 'DecimalSI', '1T', ''],
    [1234567, 6, 'DecimalSI', '1234567M', ''],
    [1234567, -3, 'BinarySI', '1234567m', ''],
    [3, 3, 'DecimalSI', '3k', ''],
    [1025, 0, 'BinarySI', '1025', ''],
    [0, 0, 'DecimalSI', '0', ''],
    [0, 0, 'BinarySI', '0', ''],
    [1, 9, 'DecimalExponent', '1e9', '.001e12'],
    [1, -3, 'DecimalExponent', '1e-3', '0.001e0'],
    [1, -9, 'DecimalExponent', '1e-9', '1000e-12'],
    [80, -3, 'DecimalExponent', '80e-3', ''],
    [300, 6, 'DecimalExponent', '300e6', ''],
    [1, 12, 'DecimalExponent', '1e12', ''],
    [1, 3, 'DecimalExponent', '1e3', ''],
    [3, 3, 'DecimalExponent', '3e3', ''],
    [3, 3, 'DecimalSI', '3k', ''],
    [0, 0, 'DecimalExponent', '0', '00'],
    [1, -9, 'DecimalSI', '1n', ''],
    [80, -9, 'DecimalSI', '80n', ''],
    [1080, -9, 'DecimalSI', '1080n', ''],
    [108, -8, 'DecimalSI', '1080n', ''],
    [10800, -10, 'DecimalSI', '1080n', ''],
    [1, -6, 'DecimalSI', '1u', ''],
    [80, -6, 'DecimalSI', '80u', ''],
    [1080, -6, 'DecimalSI', '1080u', ''],
    // TestInt64AsCanonicalString, in DecimalExponent
    [100, 0, 'DecimalExponent', '100', ''],
    [100, 1, 'DecimalExponent', '1e3', ''],
    [100, -1, 'DecimalExponent', '10', ''],
  ];

  it.each(table)('prints %s × 10^%s (%s) as %j', (mantissa, exponent, format, canonical) => {
    const q = dec(mantissa, exponent, format);
    expect(q.toString()).toBe(canonical);
    expect(q.canonical()).toBe(canonical);
    expect(JSON.stringify({ q })).toBe(JSON.stringify({ q: canonical }));
  });

  it.each(table.filter(([mantissa]) => BigInt(mantissa) !== 0n))(
    'prints the negation of %s × 10^%s (%s) as "-" + %j',
    (mantissa, exponent, format, canonical) => {
      expect(dec(mantissa, exponent, format).neg().toString()).toBe(`-${canonical}`);
    },
  );

  it.each(table)('parses the canonical form of %s × 10^%s (%s), %j, back to itself', (mantissa, exponent, _f, canonical) => {
    const q = Quantity.parse(canonical);
    expect(q.toString()).toBe(canonical);
    expect(q.nanos).toBe(dec(mantissa, exponent).nanos);
  });

  it.each(table.filter((row) => row[4] !== ''))(
    'parses %s × 10^%s (%s) written another way, %j, and prints it canonically',
    (_m, _e, _f, canonical, alternate) => {
      expect(Quantity.parse(alternate).toString()).toBe(canonical);
    },
  );

  it('prints a BinarySI 2000 as "2000", which reads back as DecimalSI and prints "2k", as in Kubernetes', () => {
    const q = Quantity.parse('1Ki').add(Quantity.parse('976'));
    expect(q.format).toBe('BinarySI');
    expect(q.toString()).toBe('2000');
    expect(q.neg().toString()).toBe('-2000');
    expect(Quantity.parse(q.toString()).toString()).toBe('2k');
  });

  it('prints a difference that comes to zero as "0", never "0m" (TestQuantityCanocicalizeZero)', () => {
    expect(Quantity.parse('1000m').sub(Quantity.parse('1')).toString()).toBe('0');
  });

  it("prints the examples of Kubernetes' documentation (ExampleFormat)", () => {
    expect(Quantity.fromInt(5n * 1024n ** 3n, 'BinarySI').toString()).toBe('5Gi');
    expect(Quantity.fromInt(5_000_000_000n, 'DecimalSI').toString()).toBe('5G');
    expect(Quantity.fromMilli(5300n, 'DecimalSI').toString()).toBe('5300m');
  });
});

describe('which parsed texts are printed as written (TestQuantityParseEmit)', () => {
  // Kubernetes keeps the text only on its int64 fast path, and only when it looks canonical:
  // a decimal scale that is a multiple of 3, no trailing "000", no leading zero digit; for
  // binary, a value not divisible by 8. A sign or leading zeros survive with the text.
  const table: [string, string][] = [
    ['1Ki', '1Ki'],
    ['1Mi', '1Mi'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1000M', '1G'],
    ['.001Ki', '1024m'],
    ['.000001Ki', '1024u'],
    ['.000000001Ki', '1024n'],
    ['.000000000001Ki', '2n'],
    // the rest checked against Kubernetes' String()
    ['1500m', '1500m'],
    ['100m', '100m'],
    ['1.5', '1500m'],
    ['1024', '1024'],
    ['1e3', '1e3'],
    ['+1', '+1'],
    ['0.0000000001', '1n'],
    ['+7Ki', '+7Ki'],
    ['+8Ki', '8Ki'],
    ['+9Ki', '+9Ki'],
    ['+10Ti', '+10Ti'],
    ['+100Ti', '100Ti'],
    ['+1024Ki', '1Mi'],
    ['+100m', '+100m'],
    ['+1000m', '1'],
    ['+1500', '+1500'],
    ['+1000', '1k'],
    ['00100m', '00100m'],
    ['0100', '0100'],
    ['007m', '007m'],
    ['1.500', '1.500'],
    ['+1.5', '1500m'],
    ['+0.5', '500m'],
    ['1.0', '1'],
    ['+1e3', '+1e3'],
    ['+10e3', '+10e3'],
    ['+1e2', '100'],
    ['1.Ki', '1.Ki'],
    ['1.G', '1.G'],
    ['1.5Gi', '1536Mi'],
    ['2000', '2k'],
    ['0.1m', '100u'],
    ['-2048Ki', '-2Mi'],
    ['-0.5Gi', '-512Mi'],
    ['0.5Ki', '512'],
    ['1.5Ki', '1536'],
  ];

  it.each(table)('prints %j as %j', (input, printed) => {
    expect(Quantity.parse(input).toString()).toBe(printed);
  });

  it.each(table.slice(0, 9))('prints -%s as "-" + %j', (input, printed) => {
    expect(Quantity.parse(`-${input}`).toString()).toBe(`-${printed}`);
  });

  it('always has the canonical form at hand, whatever was kept', () => {
    expect(Quantity.parse('+1500').canonical()).toBe('1500');
    expect(Quantity.parse('007m').canonical()).toBe('7m');
    expect(Quantity.parse('1.G').canonical()).toBe('1G');
  });
});

describe('the 18/19/20-digit boundaries (TestParseQuantity)', () => {
  // [input, exact value, printed form when it is not the input itself]
  const table: [string, string, string?][] = [
    ['-999999999999999999', '-999999999999999999'],
    ['999999999999999999', '999999999999999999'],
    ['-999999999999999999.0', '-999999999999999999', '-999999999999999999'],
    ['999999999999999999.0', '999999999999999999', '999999999999999999'],
    ['-999999999999999999.1', '-999999999999999999.1', '-999999999999999999100m'],
    ['999999999999999999.1', '999999999999999999.1', '999999999999999999100m'],
    ['-9999999999999999999', '-9999999999999999999'],
    ['9999999999999999999', '9999999999999999999'],
    ['-1E', '-1000000000000000000'],
    ['1E', '1000000000000000000'],
    ['-1000000000000000000', '-1000000000000000000', '-1E'],
    ['1000000000000000000', '1000000000000000000', '1E'],
    ['-9999999999999999999.0', '-9999999999999999999', '-9999999999999999999'],
    ['9999999999999999999.0', '9999999999999999999', '9999999999999999999'],
    ['-1.0E', '-1000000000000000000', '-1E'],
    ['1.0E', '1000000000000000000', '1E'],
    ['-1000000000000000000.0', '-1000000000000000000', '-1E'],
    ['1000000000000000000.0', '1000000000000000000', '1E'],
    ['-9999999999999999999000m', '-9999999999999999999', '-9999999999999999999'],
    ['9999999999999999999000m', '9999999999999999999', '9999999999999999999'],
    ['-9999999999999999999.1', '-9999999999999999999.1', '-9999999999999999999100m'],
    ['9999999999999999999.1', '9999999999999999999.1', '9999999999999999999100m'],
    ['-1.0000000000000000001E', '-1000000000000000000.1', '-1000000000000000000100m'],
    ['1.0000000000000000001E', '1000000000000000000.1', '1000000000000000000100m'],
    ['-1000000000000000000.1', '-1000000000000000000.1', '-1000000000000000000100m'],
    ['1000000000000000000.1', '1000000000000000000.1', '1000000000000000000100m'],
    ['-1.000000000000000001E', '-1000000000000000001', '-1000000000000000001'],
    ['1.000000000000000001E', '1000000000000000001', '1000000000000000001'],
    ['-1000000000000000001', '-1000000000000000001'],
    ['1000000000000000001', '1000000000000000001'],
    ['-10E', '-10000000000000000000'],
    ['10E', '10000000000000000000'],
    ['-10000000000000000000', '-10000000000000000000', '-10E'],
    ['10000000000000000000', '10000000000000000000', '10E'],
    ['-10.0E', '-10000000000000000000', '-10E'],
    ['10.0E', '10000000000000000000', '10E'],
    ['-10000000000000000000.0', '-10000000000000000000', '-10E'],
    ['10000000000000000000.0', '10000000000000000000', '10E'],
    ['-10000000000000000000000m', '-10000000000000000000', '-10E'],
    ['10000000000000000000000m', '10000000000000000000', '10E'],
    ['-10.0000000000000000001E', '-10000000000000000000.1', '-10000000000000000000100m'],
    ['10.0000000000000000001E', '10000000000000000000.1', '10000000000000000000100m'],
    ['-10000000000000000000.1', '-10000000000000000000.1', '-10000000000000000000100m'],
    ['10000000000000000000.1', '10000000000000000000.1', '10000000000000000000100m'],
    ['-10.000000000000000001E', '-10000000000000000001', '-10000000000000000001'],
    ['10.000000000000000001E', '10000000000000000001', '10000000000000000001'],
    ['-10000000000000000001', '-10000000000000000001'],
    ['10000000000000000001', '10000000000000000001'],
    ['-9223372036854775809', '-9223372036854775809'],
    ['9223372036854775806', '9223372036854775806'],
    ['-9223372036854775809.0', '-9223372036854775809', '-9223372036854775809'],
    ['9223372036854775806.0', '9223372036854775806', '9223372036854775806'],
    ['-9223372036854775809000m', '-9223372036854775809', '-9223372036854775809'],
    ['9223372036854775806000m', '9223372036854775806', '9223372036854775806'],
    ['-9223372036854775809.1', '-9223372036854775809.1', '-9223372036854775809100m'],
    ['9223372036854775806.1', '9223372036854775806.1', '9223372036854775806100m'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808.0', '-9223372036854775808', '-9223372036854775808'],
    ['9223372036854775807.0', '9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808000m', '-9223372036854775808', '-9223372036854775808'],
    ['9223372036854775807000m', '9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808.1', '-9223372036854775808.1', '-9223372036854775808100m'],
    ['9223372036854775807.1', '9223372036854775807.1', '9223372036854775807100m'],
    ['-9223372036854775807', '-9223372036854775807'],
    ['9223372036854775808', '9223372036854775808'],
    ['-9223372036854775807.0', '-9223372036854775807', '-9223372036854775807'],
    ['9223372036854775808.0', '9223372036854775808', '9223372036854775808'],
    ['-9223372036854775807000m', '-9223372036854775807', '-9223372036854775807'],
    ['9223372036854775808000m', '9223372036854775808', '9223372036854775808'],
    ['-9223372036854775807.1', '-9223372036854775807.1', '-9223372036854775807100m'],
    ['9223372036854775808.1', '9223372036854775808.1', '9223372036854775808100m'],
  ];

  it.each(table)('parses %s exactly and prints it as Kubernetes does', (input, value, printed) => {
    const q = Quantity.parse(input);
    expect(q.nanos).toBe(nanosOf(value));
    expect(q.toString()).toBe(printed ?? input);
  });
});

describe('comparison (TestQuantityCmp, TestQuantityCmpInt64AndDec)', () => {
  it.each([
    ['0', '0', 0],
    ['100m', '50m', 1],
    ['50m', '100m', -1],
    ['10000T', '100Gi', 1],
  ] as const)('compares %s with %s as %i', (x, y, expected) => {
    expect(Quantity.parse(x).cmp(Quantity.parse(y))).toBe(expected);
    expect(Quantity.parse(y).cmp(Quantity.parse(x))).toBe(-expected || 0);
  });

  // [a mantissa, a exponent, b mantissa, b exponent, cmp]; rows whose values are finer than a
  // nano-unit exist only as Go-built values and are left out.
  const table: [bigint, number, bigint, number, -1 | 0 | 1][] = [
    [901n, -2, 901n, -2, 0],
    [90n, -1, 901n, -2, -1],
    [901n, -2, 900n, -2, 1],
    [0n, 0, 0n, 0, 0],
    [0n, 1, 0n, -1, 0],
    [0n, -1, 0n, 1, 0],
    [800n, -3, 1n, 0, -1],
    [800n, -3, 79n, -2, 1],
    [MAX_INT64, 0, 1n, -1, 1],
    [MAX_INT64, 1, 1n, 0, 1],
    [MAX_INT64, 1, 1n, 1, 1],
    [MAX_INT64, 1, 0n, 1, 1],
    [MIN_INT64, 0, 0n, 0, -1],
    [10n ** 18n, -17, 1n, 1, 0],
    [10n ** 18n, -17, -10n, 0, 1],
    [-(10n ** 18n), -17, -10n, 0, 0],
    [10n ** 18n, -17, 1n, 0, 1],
  ];

  it.each(table)('compares %s×10^%s with %s×10^%s as %i, both ways', (am, ae, bm, be, expected) => {
    const a = dec(am, ae);
    const b = dec(bm, be);
    expect(a.cmp(b)).toBe(expected);
    expect(b.cmp(a)).toBe(-expected || 0);
    expect(a.equals(b)).toBe(expected === 0);
  });
});

describe('arithmetic keeps the format rules of Kubernetes', () => {
  it.each(['100m', '1Gi'])('keeps %s when a zero is added on either side (TestQuantityAddZeroPreservesSuffix)', (text) => {
    const value = Quantity.parse(text);
    expect(value.add(Quantity.parse('0')).toString()).toBe(text);
    expect(Quantity.parse('0').add(value).toString()).toBe(text);
  });

  it.each(['100m', '1Gi'])('keeps %s when a zero is subtracted, and prints 0 - it as its negation', (text) => {
    const value = Quantity.parse(text);
    expect(value.sub(Quantity.parse('0')).toString()).toBe(text);
    expect(Quantity.parse('0').sub(value).toString()).toBe(value.neg().toString());
    expect(Quantity.parse('0').sub(value).toString()).toBe(`-${text}`);
  });

  // [a, b, expected a + b, expected a - b]: a zero receiver takes b's format, otherwise a's.
  const table: [Quantity, Quantity, Quantity, Quantity][] = [
    [dec(10, 0), dec(1, 1), dec(20, 0), dec(0, 0)],
    [dec(10, 0), dec(1, 0, 'BinarySI'), dec(11, 0), dec(9, 0)],
    [dec(10, 0, 'BinarySI'), dec(1, 0), dec(11, 0, 'BinarySI'), dec(9, 0, 'BinarySI')],
    [Quantity.ZERO, dec(50, 0), dec(50, 0), dec(-50, 0)],
    [dec(50, 0), Quantity.ZERO, dec(50, 0), dec(50, 0)],
    [Quantity.ZERO, Quantity.ZERO, dec(0, 0), dec(0, 0)],
    [Quantity.ZERO, dec(1, 0, 'BinarySI'), dec(1, 0, 'BinarySI'), dec(-1, 0, 'BinarySI')],
  ];

  it.each(table)('adds and subtracts %s and %s (TestAdd, TestSub)', (a, b, sum, difference) => {
    expect(a.add(b).equals(sum)).toBe(true);
    expect(a.add(b).format).toBe(sum.format);
    expect(a.sub(b).equals(difference)).toBe(true);
    expect(a.sub(b).format).toBe(difference.format);
  });

  it("gives a zero sum the zero receiver's new format, as Kubernetes does", () => {
    expect(Quantity.parse('0').add(Quantity.parse('1Ki')).format).toBe('BinarySI');
    expect(Quantity.parse('1Ki').add(Quantity.parse('-1Ki')).toString()).toBe('0');
  });

  it.each([
    [dec(0, 0), dec(0, 0)],
    [dec(10, 0, 'BinarySI'), dec(-10, 0, 'BinarySI')],
    [dec(-10, 0, 'BinarySI'), dec(10, 0, 'BinarySI')],
  ])('negates %s (TestNeg)', (a, expected) => {
    expect(a.neg().equals(expected)).toBe(true);
    expect(a.neg().format).toBe(a.format);
  });

  it('negates 9.01 to -9010m and leaves the source alone (TestQuantityNeg)', () => {
    const source = dec(901, -2);
    const negated = source.neg();
    expect(negated.toString()).toBe('-9010m');
    expect(source.toString()).toBe('9010m');
  });

  it('negates the int64 minimum to 2^63, exactly', () => {
    expect(dec(MIN_INT64, 0).neg().toString()).toBe('9223372036854775808');
    expect(Quantity.ZERO.sub(dec(MIN_INT64, 0)).toString()).toBe('9223372036854775808');
    expect(dec(1, 0).sub(dec(MIN_INT64, 0)).toString()).toBe('9223372036854775809');
    expect(dec(MIN_INT64, -3).neg().toString()).toBe('9223372036854775808m');
    expect(Quantity.ZERO.sub(dec(MIN_INT64, 0, 'BinarySI')).toString()).toBe('8Ei');
  });

  // [a, factor, expected]: Kubernetes reports int64 overflow; the value is exact either way.
  const mulTable: [Quantity, bigint, Quantity][] = [
    [dec(10, 0), 10n, dec(100, 0)],
    [dec(10, 0), 1n, dec(10, 0)],
    [dec(10, 0, 'BinarySI'), 1n, dec(10, 0, 'BinarySI')],
    [Quantity.ZERO, 50n, dec(0, 0)],
    [dec(50, 0), 0n, dec(0, 0)],
    [dec(10, 0), -10n, dec(-100, 0)],
    [dec(-10, 0), 1n, dec(-10, 0)],
    [dec(10, 0, 'BinarySI'), -1n, dec(-10, 0, 'BinarySI')],
    [dec(-50, 0), -50n, dec(2500, 0)],
    [dec(MAX_INT64, 0), 0n, dec(0, 1)],
    [dec(MAX_INT64, 0), -1n, dec(-MAX_INT64, 0)],
    [dec(MAX_INT64 / 2n, 0), 2n, dec((MAX_INT64 / 2n) * 2n, 0)],
    [dec(MAX_INT64, 0), 2n, dec(MAX_INT64 * 2n, 0)],
    [dec(MAX_INT64, 0), 10n, dec(MAX_INT64, 1)],
    [dec(MAX_INT64, 0), -10n, dec(-MAX_INT64, 1)],
    [dec(MIN_INT64, 0), -1n, dec(MAX_INT64 + 1n, 0)],
    [dec(MIN_INT64, 0), 2n, dec(MIN_INT64 * 2n, 0)],
    [dec(MIN_INT64, 0), -10n, dec(MAX_INT64 + 1n, 1)],
  ];

  it.each(mulTable)('multiplies %s by %s (TestMul)', (a, factor, expected) => {
    const product = a.mul(factor);
    expect(product.equals(expected)).toBe(true);
    expect(product.format).toBe(a.format);
  });
});

describe('rounding (TestQuantityRoundUp)', () => {
  // [input, scale, expected mantissa, expected exponent, unchanged]
  const table: [string, number, number, number, boolean][] = [
    ['9.01', -3, 901, -2, true],
    ['9.01', -2, 901, -2, true],
    ['9.01', -1, 91, -1, false],
    ['9.01', 0, 10, 0, false],
    ['9.01', 1, 10, 0, false],
    ['9.01', 2, 100, 0, false],
    ['-9.01', -3, -901, -2, true],
    ['-9.01', -2, -901, -2, true],
    ['-9.01', -1, -91, -1, false],
    ['-9.01', 0, -10, 0, false],
    ['-9.01', 1, -10, 0, false],
    ['-9.01', 2, -100, 0, false],
  ];

  it.each(table)('rounds %s to a multiple of 10^%i, away from zero', (input, scale, mantissa, exponent, exact) => {
    const { quantity, exact: unchanged } = Quantity.parse(input).roundUp(scale);
    expect(quantity.nanos).toBe(dec(mantissa, exponent).nanos);
    expect(unchanged).toBe(exact);
  });

  it('keeps a kept text only while the scale it was parsed at is fine enough', () => {
    expect(Quantity.parse('+1500m').roundUp(-3).quantity.toString()).toBe('+1500m');
    expect(Quantity.parse('+1500m').roundUp(-2).quantity.toString()).toBe('1500m');
    expect(Quantity.parse('+1500m').roundUp(0).quantity.toString()).toBe('2');
  });
});

describe('reading values out (Value, MilliValue, ScaledValue)', () => {
  // [input, Value(), MilliValue()]: rounded away from zero.
  const table: [string, bigint, bigint][] = [
    ['5Gi', 5368709120n, 5368709120000n],
    ['5G', 5000000000n, 5000000000000n],
    ['5300m', 6n, 5300n],
    ['5.4', 6n, 5400n],
    ['1500m', 2n, 1500n],
    ['-1500m', -2n, -1500n],
    ['0.0005', 1n, 1n],
    ['-0.0005', -1n, -1n],
    ['-0.2', -1n, -200n],
    ['.484785E-1', 1n, 49n],
    ['-.484785E-1', -1n, -49n],
    ['9.5000000001Gi', 10200547329n, 10200547328108n],
    ['1', 1n, 1000n],
    ['-1', -1n, -1000n],
    ['0', 0n, 0n],
  ];

  it.each(table)('reads %s as %s units and %s milli-units', (input, value, milli) => {
    const q = Quantity.parse(input);
    expect(q.value()).toBe(value);
    expect(q.milliValue()).toBe(milli);
  });

  it.each([
    [1n, 'DecimalSI', '1m', true],
    [1000n, 'DecimalSI', '1', true],
    [1234000n, 'DecimalSI', '1234', true],
    [1024n, 'BinarySI', '1024m', false],
    [1024n * 1024n, 'BinarySI', '1048576m', false],
  ] as const)('builds %s milli-units (%s) printed as %j (TestMilliNewSet)', (milli, format, printed, roundTrips) => {
    const q = Quantity.fromMilli(milli, format);
    expect(q.toString()).toBe(printed);
    expect(q.format).toBe(format);
    if (roundTrips) expect(Quantity.parse(printed).milliValue()).toBe(milli);
  });

  it.each([
    [1n, 'DecimalSI', '1'],
    [1000n, 'DecimalSI', '1k'],
    [1234000n, 'DecimalSI', '1234k'],
    [1024n, 'BinarySI', '1Ki'],
    [1024n * 1024n, 'BinarySI', '1Mi'],
  ] as const)('builds %s units (%s) printed as %j (TestNewSet)', (value, format, printed) => {
    const q = Quantity.fromInt(value, format);
    expect(q.toString()).toBe(printed);
    expect(Quantity.parse(printed).value()).toBe(value);
  });

  it.each([
    [1n, -9, '1n'],
    [1000n, -9, '1u'],
    [1n, -6, '1u'],
    [1000n, -6, '1m'],
    [1n, -3, '1m'],
    [1000n, -3, '1'],
    [1n, 0, '1'],
    [0n, -9, '0'],
    [0n, -6, '0'],
    [0n, -3, '0'],
    [0n, 0, '0'],
  ] as const)('builds %s × 10^%i printed as %j and reads it back at that scale (TestNewScaledSet)', (value, scale, printed) => {
    const q = Quantity.fromScaled(value, scale);
    expect(q.toString()).toBe(printed);
    expect(Quantity.parse(printed).scaledValue(scale)).toBe(value);
  });

  it.each([
    [-9, -9, 1n],
    [-9, -6, 1n],
    [-9, -3, 1n],
    [-9, 0, 1n],
    [-6, -9, 1000n],
    [-6, -6, 1n],
    [-6, -3, 1n],
    [-6, 0, 1n],
    [-3, -9, 1_000_000n],
    [-3, -6, 1000n],
    [-3, -3, 1n],
    [-3, 0, 1n],
    [0, -9, 1_000_000_000n],
    [0, -6, 1_000_000n],
    [0, -3, 1000n],
    [0, 0, 1n],
    [2, -2, 10_000n],
  ] as const)('reads 1 × 10^%i at scale %i as %s (TestScaledValue)', (from, to, expected) => {
    expect(Quantity.fromScaled(1n, from).scaledValue(to)).toBe(expected);
  });

  // scale_int_test.go: [unscaled, inf scale, new inf scale, result]; an inf scale s means
  // × 10^-s, the opposite sign of a Kubernetes Scale.
  it.each([
    [1000n, 0, 0, 1000n],
    [1000n, 0, -3, 1n],
    [1000n, 3, 0, 1n],
    [0n, 3, 0, 0n],
    [999n, 3, 0, 1n],
    [500n, 3, 0, 1n],
    [499n, 3, 0, 1n],
    [1n, 3, 0, 1n],
    [MAX_INT64 - 1n, 1, 0, (MAX_INT64 - 1n) / 10n + 1n],
    [10n ** 100n, 100, 0, 1n],
    [0n, 0, 3, 0n],
    [1n, 0, 3, 1000n],
    [1n, -3, 0, 1000n],
    [1000n, -3, 2, 100_000_000n],
    [MAX_INT64 / 1000n, 0, 3, (MAX_INT64 / 1000n) * 1000n],
  ] as const)(
    'scales %s at inf scale %i to inf scale %i as %s, rounding up (TestScaledValueInternal)',
    (unscaled, scale, newScale, expected) => {
      expect(Quantity.parse(`${unscaled}e${-scale}`).scaledValue(-newScale)).toBe(expected);
    },
  );

  it('reports whole numbers', () => {
    expect(Quantity.parse('2').isInteger()).toBe(true);
    expect(Quantity.parse('1500m').isInteger()).toBe(false);
    expect(Quantity.parse('1Ki').isInteger()).toBe(true);
  });

  it('signs', () => {
    expect(Quantity.parse('-1m').sign()).toBe(-1);
    expect(Quantity.parse('0Ki').sign()).toBe(0);
    expect(Quantity.parse('0Ki').isZero()).toBe(true);
    expect(Quantity.parse('1n').sign()).toBe(1);
  });
});

describe("JSON, as Kubernetes' UnmarshalJSON reads it (TestJSONWhitespace)", () => {
  it.each([
    [' 1', '1'],
    ['1 ', '1'],
    [1, '1'],
    [10, '10'],
    [-1, '-1'],
    [' -1', '-1'],
    ['\t\n 500m \r', '500m'],
    ['\u00a01Gi\u0085', '1Gi'],
  ] as const)('reads %j as %j', (raw, printed) => {
    expect(Quantity.fromJSON(raw).toString()).toBe(printed);
  });

  it('does not trim a byte-order mark, which Go does not count as space', () => {
    expect(Quantity.tryParse('\ufeff1')).toBeUndefined();
    expect(() => Quantity.fromJSON('\ufeff1')).toThrow(QuantityParseError);
  });

  it('writes the printed form', () => {
    expect(JSON.stringify({ cpu: Quantity.parse('1.5') })).toBe('{"cpu":"1500m"}');
  });
});

describe('building from scaled integers', () => {
  it('refuses a value finer than a nano-unit: a broken invariant, not bad input', () => {
    expect(() => Quantity.fromScaled(1n, -10)).toThrow(InvariantViolation);
    expect(Quantity.fromScaled(10n, -10).nanos).toBe(1n);
  });
});

describe('deliberate departures from Kubernetes', () => {
  it.each(['1e31', '1000000000000000000000000000001', '1E2147483647', '10000000000000E', '-1e31', '1.000000000000000000000000000001e30'])(
    'rejects %s as too large: above 10^30 no quota is real and an exact value would cost memory',
    (input) => {
      expect(parseError(input).reason).toBe('tooLarge');
      expect(parseError(input).message).toBe(QUANTITY_ERRORS.tooLarge);
    },
  );

  it('accepts exactly 10^30', () => {
    expect(Quantity.parse('1e30').toString()).toBe('1e30');
    expect(Quantity.parse('-1000000000000000000000000000000').value()).toBe(-(10n ** 30n));
  });

  it('still accepts a zero with any exponent, and a binary amount of any size (it is capped first)', () => {
    expect(Quantity.parse('0e999999999').isZero()).toBe(true);
    expect(Quantity.parse(`${'9'.repeat(40)}Ei`).value()).toBe(MAX_INT64);
  });

  it.each(['1e-2147483648', '1.5e-2147483647', '0.5e-2147483647'])(
    "rejects %s as too large, because Kubernetes' int32 scale wraps it to a huge number",
    (input) => {
      expect(parseError(input).reason).toBe('tooLarge');
    },
  );

  it('rounds a vanishing amount up to 1n at once, where Kubernetes would work out 10^999999990 first', () => {
    expect(Quantity.parse('1e-999999999').nanos).toBe(1n);
    expect(Quantity.parse('-1.5e-999999999').nanos).toBe(-1n);
  });

  it('prints DecimalSI above Exa with an E suffix, where Kubernetes drops the exponent ("1000E" would print "1")', () => {
    expect(Quantity.parse('1000E').toString()).toBe('1000E');
    expect(Quantity.parse('1E').mul(1_000_000n).toString()).toBe('1000000E');
    expect(Quantity.parse('-448000E').toString()).toBe('-448000E');
  });

  it('prints BinarySI at or above 2^70 in Ei, where Kubernetes drops the suffix (2^70 would print "1")', () => {
    expect(Quantity.parse('1Ei').mul(1024n).toString()).toBe('1024Ei');
  });

  it("rounds negative values away from zero on every path (Kubernetes' inf.Dec path rounds toward +infinity)", () => {
    expect(Quantity.parse('-0.207621214302').value()).toBe(-1n);
    expect(Quantity.parse('-0.207621214302').milliValue()).toBe(-208n);
    expect(Quantity.parse('-9.5000000001Gi').value()).toBe(-10200547329n);
  });

  it("reads values exactly where Kubernetes' int64 would overflow", () => {
    expect(Quantity.parse('1Ei').milliValue()).toBe(1024n ** 6n * 1000n);
    expect(Quantity.parse('-200Ti').value()).toBe(-200n * 1024n ** 4n);
  });

  it('parses long inputs in time linear in their length', () => {
    expect(Quantity.parse(`0.${'0'.repeat(100_000)}1`).toString()).toBe('1n');
    expect(Quantity.parse(`1.${'7'.repeat(100_000)}Ki`).toString()).toBe('1820444444445n');
    expect(Quantity.parse(`1e${'0'.repeat(100_000)}5`).toString()).toBe('100e3');
    expect(parseError('9'.repeat(100_000)).reason).toBe('tooLarge');
  });
});
