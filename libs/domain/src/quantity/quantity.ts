import { assert } from '../assert.js';
import {
  abs,
  binaryNanos,
  BINARY_SUFFIX_BY_EXPONENT,
  ceilDiv,
  decimalNanos,
  DECIMAL_SUFFIX_BY_EXPONENT,
  int32,
  INT64_MAX,
  interpretSuffix,
  MAX_INT64_DIGITS,
  NANOS_PER_UNIT,
  pow10,
  QuantityParseError,
  scan,
  trimGoSpace,
  type QuantityFormat,
  type Scanned,
} from './text.js';

export { QUANTITY_ERRORS, QUANTITY_EXAMPLES, QuantityParseError, type QuantityFormat } from './text.js';

/**
 * Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), exact.
 *
 * A parsed quantity is always a whole number of nano-units (Kubernetes rounds anything
 * smaller up to 1n), so the value is held as a BigInt count of nano-units: sums,
 * differences and comparisons are exact and no float ever touches a quota.
 */
export class Quantity {
  private constructor(
    /** The exact value in nano-units. */
    readonly nanos: bigint,
    readonly format: QuantityFormat,
    /** Kubernetes keeps the text it parsed when that text is already canonical. */
    private readonly cached?: string,
    /** The decimal scale Kubernetes stored with the kept text; `roundUp` keeps the text above it. */
    private readonly cachedScale = 0,
  ) {}

  static readonly ZERO = new Quantity(0n, 'DecimalSI');

  /** Parses a quantity exactly as Kubernetes' `resource.ParseQuantity` does. */
  static parse(str: string): Quantity {
    if (str.length === 0) throw new QuantityParseError(str, 'formatWrong');
    if (str === '0') return new Quantity(0n, 'DecimalSI', str);

    const scanned = scan(str);
    if (!scanned) throw new QuantityParseError(str, 'formatWrong');
    const suffix = interpretSuffix(scanned.suffix);
    if (!suffix) throw new QuantityParseError(str, 'suffix');
    return suffix.base === 2
      ? Quantity.parseBinary(str, scanned, suffix.exponent)
      : Quantity.parseDecimal(str, scanned, suffix.exponent, suffix.format);
  }

  /** Like `parse`, but returns undefined instead of throwing. */
  static tryParse(str: string): Quantity | undefined {
    try {
      return Quantity.parse(str);
    } catch (error) {
      if (error instanceof QuantityParseError) return undefined;
      throw error;
    }
  }

  /**
   * Decimal suffixes and exponents. Kubernetes takes an int64 fast path when the digits fit;
   * only there does it keep the input text as the printed form, and only there does a text
   * with no digits (".") parse. Elsewhere it goes through inf.Dec with its own int32 scale
   * arithmetic, reproduced here because it changes the value when an exponent wraps.
   */
  private static parseDecimal(str: string, s: Scanned, exponent: number, format: QuantityFormat): Quantity {
    const shifted = s.num + s.denom;
    if (shifted.length <= MAX_INT64_DIGITS) {
      const scale = int32(exponent - s.denom.length);
      if (scale >= -9) {
        const nanos = decimalNanos(str, shifted, scale);
        const canonical = scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return new Quantity(s.positive ? nanos : -nanos, format, canonical ? str : undefined, scale);
      }
    }
    // inf.Dec's scanner needs at least one digit in the numeric text.
    if (!/[0-9]/.test(s.value)) throw new QuantityParseError(str, 'numeric');
    const decScale = int32(s.denom.length + int32(-exponent));
    const nanos = decimalNanos(str, shifted, -decScale);
    return new Quantity(s.positive ? nanos : -nanos, format);
  }

  /** Binary suffixes: integers on the fast path, anything else exactly, capped at 2^63-1. */
  private static parseBinary(str: string, s: Scanned, exponent: number): Quantity {
    if (s.denom.length === 0) {
      const precision = 15 - s.num.length - Math.trunc((exponent * 3) / 10) - 1;
      if (precision >= 0) {
        const value = BigInt(s.num);
        const magnitude = value << BigInt(exponent);
        if (magnitude <= INT64_MAX) {
          const nanos = magnitude * NANOS_PER_UNIT;
          const canonical = exponent % 10 === 0 && (value & 7n) !== 0n;
          return new Quantity(s.positive ? nanos : -nanos, 'BinarySI', canonical ? str : undefined);
        }
      }
    }
    if (!/[0-9]/.test(s.value)) throw new QuantityParseError(str, 'numeric');
    const nanos = binaryNanos(s.num, s.denom, exponent);
    // A fraction of one unit has no binary spelling: Kubernetes switches it to DecimalSI.
    const format = nanos > 0n && nanos < NANOS_PER_UNIT ? 'DecimalSI' : 'BinarySI';
    return new Quantity(s.positive ? nanos : -nanos, format);
  }

  /**
   * What Kubernetes' `UnmarshalJSON` reads: a JSON string, trimmed of white space first, or a
   * JSON number. A number reaches us already parsed, so its JavaScript spelling is what gets
   * parsed: the value is the same, but Kubernetes would keep the raw text's form ("1e3" stays
   * DecimalExponent there, while 1000 prints as "1k" here).
   */
  static fromJSON(value: string | number): Quantity {
    return Quantity.parse(typeof value === 'number' ? String(value) : trimGoSpace(value));
  }

  /**
   * value × 10^scale (Kubernetes' `NewScaledQuantity`, any format). Quantities hold whole
   * nano-units, so a finer scale must still land on one.
   */
  static fromScaled(value: bigint, scale: number, format: QuantityFormat = 'DecimalSI'): Quantity {
    const shift = scale + 9;
    if (shift >= 0) return new Quantity(value * pow10(shift), format);
    const divisor = pow10(-shift);
    assert(value % divisor === 0n, `${value}e${scale} is not a whole number of nano-units`);
    return new Quantity(value / divisor, format);
  }

  static fromNanos(nanos: bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(nanos, format);
  }

  static fromMilli(milli: bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(milli * 1_000_000n, format);
  }

  static fromInt(value: bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(value * NANOS_PER_UNIT, format);
  }

  /** q + y. A zero receiver takes y's format, as Kubernetes' `Add` does. */
  add(y: Quantity): Quantity {
    return new Quantity(this.nanos + y.nanos, this.nanos === 0n ? y.format : this.format);
  }

  /** q - y. A zero receiver takes y's format, as Kubernetes' `Sub` does. */
  sub(y: Quantity): Quantity {
    return new Quantity(this.nanos - y.nanos, this.nanos === 0n ? y.format : this.format);
  }

  neg(): Quantity {
    return new Quantity(-this.nanos, this.format);
  }

  /** Multiplies by an integer (Kubernetes' `Mul`), exactly. */
  mul(factor: bigint): Quantity {
    return new Quantity(this.nanos * factor, this.format);
  }

  cmp(y: Quantity): -1 | 0 | 1 {
    return this.nanos < y.nanos ? -1 : this.nanos > y.nanos ? 1 : 0;
  }

  equals(y: Quantity): boolean {
    return this.nanos === y.nanos;
  }

  isZero(): boolean {
    return this.nanos === 0n;
  }

  sign(): -1 | 0 | 1 {
    return this.nanos < 0n ? -1 : this.nanos > 0n ? 1 : 0;
  }

  /** True when the value is a whole number of units (no fractional part). */
  isInteger(): boolean {
    return this.nanos % NANOS_PER_UNIT === 0n;
  }

  /** The value in units, rounded away from zero (Kubernetes' `Value`). */
  value(): bigint {
    return this.scaledValue(0);
  }

  /** The value in milli-units, rounded away from zero (Kubernetes' `MilliValue`). */
  milliValue(): bigint {
    return this.scaledValue(-3);
  }

  /**
   * The value in units of 10^scale, rounded away from zero (Kubernetes' `ScaledValue`, with
   * `Scale` as a power of ten: -9 nano, -3 milli, 0, 3 kilo, …). Exact: no int64 overflow.
   */
  scaledValue(scale: number): bigint {
    const shift = scale + 9;
    if (shift <= 0) return this.nanos * pow10(-shift);
    const magnitude = ceilDiv(abs(this.nanos), pow10(shift));
    return this.nanos < 0n ? -magnitude : magnitude;
  }

  /**
   * Kubernetes' `RoundUp`: the value rounded away from zero to a multiple of 10^scale, and
   * whether that kept it unchanged. Like Kubernetes, a kept parse text survives only when the
   * scale it was parsed at is already at least as fine as `scale`.
   */
  roundUp(scale: number): { readonly quantity: Quantity; readonly exact: boolean } {
    if (this.cached !== undefined && this.cachedScale >= scale) return { quantity: this, exact: true };
    const shift = scale + 9;
    if (shift <= 0) return { quantity: this, exact: true };
    const unit = pow10(shift);
    const rounded = this.scaledValue(scale) * unit;
    return { quantity: new Quantity(rounded, this.format), exact: rounded === this.nanos };
  }

  /** The text Kubernetes prints for this quantity (its `String()`). */
  toString(): string {
    return this.cached ?? this.canonical();
  }

  toJSON(): string {
    return this.toString();
  }

  /** The canonical form, ignoring any text kept from parsing. */
  canonical(): string {
    if (this.nanos === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      const n = this.nanos;
      const inSmallRange = n > -1024n * NANOS_PER_UNIT && n < 1024n * NANOS_PER_UNIT;
      if (inSmallRange || n % NANOS_PER_UNIT !== 0n) format = 'DecimalSI';
    }
    if (format === 'BinarySI') return this.canonicalBinary();
    return this.canonicalDecimal(format);
  }

  private canonicalBinary(): string {
    let amount = this.nanos / NANOS_PER_UNIT;
    const negative = amount < 0n;
    if (negative) amount = -amount;
    let exponent = 0;
    while (amount >= 1024n && amount % 1024n === 0n && exponent < BINARY_SUFFIX_BY_EXPONENT.length - 1) {
      amount /= 1024n;
      exponent++;
    }
    return `${negative ? '-' : ''}${amount}${BINARY_SUFFIX_BY_EXPONENT[exponent]}`;
  }

  private canonicalDecimal(format: QuantityFormat): string {
    let mantissa = this.nanos;
    let exponent = -9;
    while (mantissa % 10n === 0n) {
      mantissa /= 10n;
      exponent++;
    }
    // The exponent goes down to a multiple of three: the mantissa stays an integer.
    const excess = ((exponent % 3) + 3) % 3;
    mantissa *= pow10(excess);
    exponent -= excess;
    if (format === 'DecimalExponent') return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
    // Beyond Exa there is no SI suffix; Kubernetes would print a wrong number here, we
    // stay exact by keeping the mantissa in E.
    if (exponent > 18) {
      mantissa *= pow10(exponent - 18);
      exponent = 18;
    }
    return `${mantissa}${DECIMAL_SUFFIX_BY_EXPONENT.get(exponent) ?? ''}`;
  }
}
