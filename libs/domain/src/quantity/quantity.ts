import { DomainError } from '../errors.js';

/**
 * Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), exact.
 *
 * A parsed quantity is always a whole number of nano-units (Kubernetes rounds anything
 * smaller up to 1n), so the value is held as a BigInt count of nano-units: sums,
 * differences and comparisons are exact and no float ever touches a quota.
 */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

const SPLIT_RE_STRING = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

/** Kubernetes' own parse error texts, so messages match what kubectl users know. */
export const QUANTITY_ERRORS = {
  formatWrong: `quantities must match the regular expression '${SPLIT_RE_STRING}'`,
  numeric: 'unable to parse numeric part of quantity',
  suffix: "unable to parse quantity's suffix",
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
 * BigInt cannot. Nothing real is near this bound, and refusing beats allocating gigabytes.
 */
const MAX_MAGNITUDE_NANOS = 10n ** 39n;
const MAX_INT64_DIGITS = 18;

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

/** Go's strconv.ParseInt(s, 10, 64) followed by int32(...): what Kubernetes does. */
function parseExponent(text: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const parsed = BigInt(text);
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

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** ceil(a / b) for a >= 0, b > 0. */
const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

const digitCount = (n: bigint): number => (n === 0n ? 0 : n.toString().length);

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

export class Quantity {
  private constructor(
    /** The exact value in nano-units. */
    readonly nanos: bigint,
    readonly format: QuantityFormat,
    /** Kubernetes keeps the text it parsed when that text is already canonical. */
    private readonly cached?: string,
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

    return Quantity.parseFast(str, scanned, suffix) ?? Quantity.parseExact(str, scanned, suffix);
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
   * Kubernetes' int64 fast path. It matters beyond speed: only here does Kubernetes keep the
   * input text as the printed form, and only here does a text with no digits (".") parse.
   */
  private static parseFast(str: string, s: Scanned, suffix: Suffix): Quantity | undefined {
    let scale: number;
    let precision: number;
    let mantissa = 1n;
    if (suffix.format === 'BinarySI') {
      scale = 0;
      if (suffix.exponent >= 0 && s.denom.length === 0) {
        mantissa = 1n << BigInt(suffix.exponent);
        precision = 15 - s.num.length - Math.trunc((suffix.exponent * 3) / 10) - 1;
      } else {
        precision = -1;
      }
    } else {
      scale = suffix.exponent;
      precision = MAX_INT64_DIGITS - (s.num.length + s.denom.length);
    }
    if (precision < 0) return undefined;
    scale -= s.denom.length;
    if (scale < -9) return undefined;

    const shifted = s.num + s.denom;
    const value = BigInt(shifted);
    const magnitude = value * mantissa;
    if (magnitude > INT64_MAX) return undefined;
    const nanos = (s.positive ? magnitude : -magnitude) * pow10(scale + 9);

    const canonical =
      suffix.format === 'BinarySI'
        ? suffix.exponent % 10 === 0 && (value & 7n) !== 0n
        : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
    return new Quantity(nanos, suffix.format, canonical ? str : undefined);
  }

  /** The arbitrary-precision path: round up to 1n, cap BinarySI at the int64 maximum. */
  private static parseExact(str: string, s: Scanned, suffix: Suffix): Quantity {
    // inf.Dec's scanner needs at least one digit in the numeric text.
    if (!/[0-9]/.test(s.value)) throw new QuantityParseError(str, 'numeric');
    const digits = BigInt(s.num + s.denom);
    let format = suffix.format;
    let magnitude: bigint;
    if (digits === 0n) {
      magnitude = 0n;
    } else if (suffix.base === 10) {
      const shift = suffix.exponent - s.denom.length + 9;
      if (digitCount(digits) + shift > 40) throw new QuantityParseError(str, 'tooLarge');
      if (shift >= 0) magnitude = digits * pow10(shift);
      else if (-shift > digitCount(digits) + 1) magnitude = 1n;
      else magnitude = ceilDiv(digits, pow10(-shift));
    } else {
      magnitude = ceilDiv(digits * (1n << BigInt(suffix.exponent)) * NANOS_PER_UNIT, pow10(s.denom.length));
    }
    if (format === 'BinarySI' && magnitude > BINARY_MAX_NANOS) magnitude = BINARY_MAX_NANOS;
    if (magnitude > MAX_MAGNITUDE_NANOS) throw new QuantityParseError(str, 'tooLarge');
    if (format === 'BinarySI' && magnitude > 0n && magnitude < NANOS_PER_UNIT) format = 'DecimalSI';
    return new Quantity(s.positive ? magnitude : -magnitude, format);
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
    return this.scaled(NANOS_PER_UNIT);
  }

  /** The value in milli-units, rounded away from zero (Kubernetes' `MilliValue`). */
  milliValue(): bigint {
    return this.scaled(1_000_000n);
  }

  private scaled(divisor: bigint): bigint {
    const magnitude = ceilDiv(abs(this.nanos), divisor);
    return this.nanos < 0n ? -magnitude : magnitude;
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
