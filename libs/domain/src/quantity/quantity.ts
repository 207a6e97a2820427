import { assert } from '../assert.js';
import { DomainError } from '../errors.js';

/**
 * Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), exact.
 *
 * A parsed quantity is always a whole number of nano-units (Kubernetes rounds anything
 * smaller up to 1n), so the value is held as a BigInt count of nano-units: sums,
 * differences and comparisons are exact and no float ever touches a quota.
 */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** What a quantity looks like, for one that does not parse (Kubernetes prints its regular expression: issue 33). */
export const QUANTITY_EXAMPLES = 'must be a quantity such as "500m", "2", "1Gi" or "1e3"';

/** Why a quantity did not parse, in words (the same grammar and the same cases as Kubernetes' parse errors). */
export const QUANTITY_ERRORS = {
  formatWrong: QUANTITY_EXAMPLES,
  numeric: `${QUANTITY_EXAMPLES}: its number has no digits`,
  suffix: `${QUANTITY_EXAMPLES}: the suffix is none of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent (e3)`,
  tooLarge: 'quantity is too large: the magnitude must not exceed 10^30',
} as const;

export class QuantityParseError extends DomainError {
  constructor(
    readonly input: string,
    readonly reason: keyof typeof QUANTITY_ERRORS,
  ) {
    super('QuantityInvalid', QUANTITY_ERRORS[reason]);
    this.name = 'QuantityParseError';
  }
}

const NANOS_PER_UNIT = 1_000_000_000n;
const INT64_MAX = (1n << 63n) - 1n;
/** BinarySI values are capped at the int64 maximum, as Kubernetes does. */
const BINARY_MAX_NANOS = INT64_MAX * NANOS_PER_UNIT;
/**
 * Kubernetes keeps an (unscaled, scale) pair and so accepts "1e999999999" cheaply; an exact
 * BigInt cannot. Nothing real is near this bound (10^30 units), and refusing beats
 * allocating gigabytes. Exactly 10^30 is still accepted.
 */
const MAX_MAGNITUDE_NANOS = 10n ** 39n;
/** The digits of 10^39: a nano count with more digits is too large. */
const MAX_NANO_DIGITS = 40;
const MAX_INT64_DIGITS = 18;
/** Fraction digits taken per step when multiplying a long fraction: keeps each BigInt small. */
const FRACTION_CHUNK = 15;

const POW10: readonly bigint[] = Array.from({ length: MAX_NANO_DIGITS + 1 }, (_, i) => 10n ** BigInt(i));

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const DECIMAL_SUFFIX_BY_EXPONENT: ReadonlyMap<number, string> = new Map(
  [...DECIMAL_SUFFIXES].map(([suffix, exponent]) => [exponent, suffix]),
);
const BINARY_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const BINARY_SUFFIX_BY_EXPONENT: readonly string[] = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

interface Scanned {
  readonly positive: boolean;
  /** The numeric text as written (sign and leading zeros included). */
  readonly value: string;
  /** Integer digits with leading zeros removed ("0" if none). */
  readonly num: string;
  /** Fraction digits as written. */
  readonly denom: string;
  readonly suffix: string;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** The scanner Kubernetes uses: permissive, with the suffix checked afterwards. */
function scan(str: string): Scanned | undefined {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };

  const numStart = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos >= end) return { positive, value: str, num: str.slice(numStart), denom: '', suffix: '' };
  const num = pos > numStart ? str.slice(numStart, pos) : '0';

  let denom = '';
  if (str[pos] === '.') {
    pos++;
    const denomStart = pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(denomStart, pos);
    if (pos >= end) return { positive, value: str, num, denom, suffix: '' };
  }
  const value = str.slice(0, pos);

  const suffixStart = pos;
  while (pos < end && 'eEinumkKMGTP'.includes(str[pos] as string)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) return undefined;
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

interface Suffix {
  readonly base: 10 | 2;
  readonly exponent: number;
  readonly format: QuantityFormat;
}

/** Go's int32(n): Kubernetes keeps exponents and scales in int32 and lets them wrap. */
const int32 = (n: number): number => n | 0;

/** Go's strconv.ParseInt(s, 10, 64) followed by int32(...): what Kubernetes does. */
function parseExponent(text: string): number | undefined {
  let start = text[0] === '-' || text[0] === '+' ? 1 : 0;
  if (start >= text.length) return undefined;
  for (let i = start; i < text.length; i++) if (!isDigit(text[i])) return undefined;
  // Leading zeros are legal ("e007"); counting digits after them bounds the BigInt below.
  while (start < text.length - 1 && text[start] === '0') start++;
  const digits = text.slice(start);
  if (digits.length > 19) return undefined;
  const parsed = text[0] === '-' ? -BigInt(digits) : BigInt(digits);
  if (parsed > INT64_MAX || parsed < -INT64_MAX - 1n) return undefined;
  return Number(BigInt.asIntN(32, parsed));
}

function interpretSuffix(suffix: string): Suffix | undefined {
  const decimal = DECIMAL_SUFFIXES.get(suffix);
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: 'DecimalSI' };
  const binary = BINARY_SUFFIXES.get(suffix);
  if (binary !== undefined) return { base: 2, exponent: binary, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const exponent = parseExponent(suffix.slice(1));
    if (exponent !== undefined) return { base: 10, exponent, format: 'DecimalExponent' };
  }
  return undefined;
}

const pow10 = (n: number): bigint => POW10[n] ?? 10n ** BigInt(n);

/** ceil(a / b) for a >= 0, b > 0. */
const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

/**
 * The magnitude in nano-units of digits × 10^exponent, rounded up to a whole nano (Kubernetes
 * rounds every non-zero amount up, so nobody asks for some and gets none). Works on the text:
 * only the digits that land above the nano point become a BigInt, so a long or wildly
 * exponented input costs linear time, never a huge power of ten.
 */
function decimalNanos(input: string, digits: string, exponent: number): bigint {
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 48) first++;
  const significant = digits.length - first;
  if (significant === 0) return 0n;
  const shift = exponent + 9;
  // At least 10^(significant - 1 + shift) nanos: beyond the bound whatever the digits are.
  if (significant + shift > MAX_NANO_DIGITS) throw new QuantityParseError(input, 'tooLarge');
  let nanos: bigint;
  if (shift >= 0) {
    nanos = BigInt(digits.slice(first)) * pow10(shift);
  } else {
    const whole = significant + shift;
    if (whole <= 0) {
      nanos = 1n;
    } else {
      nanos = BigInt(digits.slice(first, first + whole));
      if (/[1-9]/.test(digits.slice(first + whole))) nanos += 1n;
    }
  }
  if (nanos > MAX_MAGNITUDE_NANOS) throw new QuantityParseError(input, 'tooLarge');
  return nanos;
}

/** ceil(0.fraction × factor), exact, in time linear in the fraction's length. */
function ceilFractionTimes(fraction: string, factor: bigint): bigint {
  let end = fraction.length;
  while (end > 0 && fraction.charCodeAt(end - 1) === 48) end--;
  let carry = 0n;
  let inexact = false;
  // Long multiplication from the last digits up: each step keeps the whole part as carry.
  while (end > 0) {
    const start = Math.max(0, end - FRACTION_CHUNK);
    const total = BigInt(fraction.slice(start, end)) * factor + carry;
    const base = pow10(end - start);
    if (total % base !== 0n) inexact = true;
    carry = total / base;
    end = start;
  }
  return inexact ? carry + 1n : carry;
}

/** The magnitude in nano-units of num.denom × 2^exponent, rounded up, capped at the int64 maximum. */
function binaryNanos(num: string, denom: string, exponent: number): bigint {
  // num has no leading zeros: 20 digits are >= 10^19, over 2^63 already before the suffix.
  if (num.length > 19) return BINARY_MAX_NANOS;
  const factor = (1n << BigInt(exponent)) * NANOS_PER_UNIT;
  const nanos = BigInt(num) * factor + ceilFractionTimes(denom, factor);
  return nanos > BINARY_MAX_NANOS ? BINARY_MAX_NANOS : nanos;
}

/** Go's unicode.IsSpace, which strings.TrimSpace uses (not quite JavaScript's trim set). */
const isGoSpace = (c: number): boolean =>
  (c >= 0x09 && c <= 0x0d) ||
  c === 0x20 ||
  c === 0x85 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000;

function trimGoSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isGoSpace(text.charCodeAt(start))) start++;
  while (end > start && isGoSpace(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

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
