import { DomainError } from '../errors.js';

/**
 * Kubernetes' quantity text (quantity.ts): the scanner and the suffixes it uses, and the exact
 * conversion of a scanned number to nano-units, with the errors a bad text gets.
 */

/** How a quantity is written: Kubernetes' three formats. */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** What a quantity looks like, for one that does not parse (Kubernetes prints its regular expression, which tells a caller little). */
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

export const NANOS_PER_UNIT = 1_000_000_000n;
export const INT64_MAX = (1n << 63n) - 1n;
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
export const MAX_INT64_DIGITS = 18;
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
export const DECIMAL_SUFFIX_BY_EXPONENT: ReadonlyMap<number, string> = new Map(
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
export const BINARY_SUFFIX_BY_EXPONENT: readonly string[] = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

export interface Scanned {
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
export function scan(str: string): Scanned | undefined {
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
export const int32 = (n: number): number => n | 0;

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

export function interpretSuffix(suffix: string): Suffix | undefined {
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

export const pow10 = (n: number): bigint => POW10[n] ?? 10n ** BigInt(n);

/** ceil(a / b) for a >= 0, b > 0. */
export const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

export function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

/**
 * The magnitude in nano-units of digits × 10^exponent, rounded up to a whole nano (Kubernetes
 * rounds every non-zero amount up, so nobody asks for some and gets none). Works on the text:
 * only the digits that land above the nano point become a BigInt, so a long or wildly
 * exponented input costs linear time, never a huge power of ten.
 */
export function decimalNanos(input: string, digits: string, exponent: number): bigint {
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
export function binaryNanos(num: string, denom: string, exponent: number): bigint {
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

export function trimGoSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isGoSpace(text.charCodeAt(start))) start++;
  while (end > start && isGoSpace(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}
