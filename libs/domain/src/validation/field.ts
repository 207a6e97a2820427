import { DomainError, type FieldCause } from '../errors.js';

/**
 * Field errors as Kubernetes builds and prints them (k8s.io/apimachinery
 * util/validation/field): the cause message is `ErrorBody()`, the overall message is
 * `NewInvalid`'s `<Kind> "<name>" is invalid: <aggregate>`.
 */
export type FieldReason =
  | 'FieldValueInvalid'
  | 'FieldValueRequired'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTypeInvalid'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany';

export interface FieldError extends FieldCause {
  readonly reason: FieldReason;
}

// ---- bounds on what an error holds ----

/**
 * At most this many field errors are described, in the causes and in the message; the rest are
 * counted ("and 18900 more errors"). A quota PUT with 19,000 invalid label keys was answered with
 * a 12 MB 422, and 40 of them at once took the API from 400 to 701 MB.
 */
export const FIELD_ERRORS_MAX = 100;
/** A bad value, or a key in a field path, is printed whole up to this many characters, then cut and its length said. */
export const PRINTED_VALUE_MAX = 256;

/** Text cut to PRINTED_VALUE_MAX characters, saying how long it was. */
function cut(text: string, whole: number): string {
  return `${text}... (${whole} characters)`;
}

/** A key or name as a field path or message shows it: whole, or its first PRINTED_VALUE_MAX characters and its length. */
export const cutText = (s: string): string => (s.length > PRINTED_VALUE_MAX ? cut(s.slice(0, PRINTED_VALUE_MAX), s.length) : s);

/** The first FIELD_ERRORS_MAX items, and how many were left out. */
export function firstOf<T>(items: readonly T[]): { readonly listed: readonly T[]; readonly more: number } {
  return items.length <= FIELD_ERRORS_MAX
    ? { listed: items, more: 0 }
    : { listed: items.slice(0, FIELD_ERRORS_MAX), more: items.length - FIELD_ERRORS_MAX };
}

/**
 * A field error found past FIELD_ERRORS_MAX in one list (checkEach): counted, never described,
 * so that the work and memory of a list's errors stop growing with the list.
 */
export const OMITTED: FieldError = Object.freeze({ reason: 'FieldValueInvalid', field: '', message: '' });

/** The errors described, and how many were only counted (OMITTED). */
export function described<T extends FieldCause>(errors: readonly T[]): { readonly errors: readonly T[]; readonly omitted: number } {
  const kept = errors.filter((e) => e !== OMITTED);
  return { errors: kept, omitted: errors.length - kept.length };
}

/**
 * The problems of every item, each described by `describe` up to FIELD_ERRORS_MAX, then counted
 * as OMITTED (`problems` must be cheap: it runs for every item).
 */
export function checkEach<T, P = string>(
  items: Iterable<T>,
  problems: (item: T) => readonly P[],
  describe: (item: T, problem: P) => FieldError,
): FieldError[] {
  const errs: FieldError[] = [];
  for (const item of items)
    for (const problem of problems(item)) errs.push(errs.length < FIELD_ERRORS_MAX ? describe(item, problem) : OMITTED);
  return errs;
}

/** Messages joined with `separator`, at most FIELD_ERRORS_MAX of them, then "and N more errors". */
export function listMessages(messages: readonly string[], separator = ', ', uncounted = 0): string {
  const { listed, more } = firstOf(messages);
  return more + uncounted === 0 ? listed.join(separator) : `${listed.join(separator)}${separator}and ${more + uncounted} more errors`;
}

// ---- field paths (field.Path.String()) ----

export const child = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);
export const key = (path: string, k: string): string => `${path}[${cutText(k)}]`;
export const index = (path: string, i: number): string => `${path}[${i}]`;

// ---- how a bad value is printed ----

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** Go's strconv.Quote (`%q`), which Kubernetes uses for plain string values. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (cp >= 0xd800 && cp <= 0xdfff)
      out += '\\ufffd'; // a lone surrogate reached Go as U+FFFD
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x80) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

function goJsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    // encoding/json escapes HTML-significant characters and the JS line separators.
    else if (cp < 0x20 || ch === '<' || ch === '>' || ch === '&' || cp === 0x2028 || cp === 0x2029) out += `\\u${hex(cp, 4)}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

/**
 * Go's json.Marshal, for the value shapes our errors carry: null, strings, numbers,
 * booleans, arrays and objects (printed in insertion order, as Go prints struct fields).
 */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goJsonString(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (typeof value === 'object') {
    if ('toJSON' in value && typeof value.toJSON === 'function') return goJson((value as { toJSON(): unknown }).toJSON());
    const fields = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${fields.map(([k, v]) => `${goJsonString(k)}:${goJson(v)}`).join(',')}}`;
  }
  return 'null';
}

/**
 * A bad value already printed: Go prints a plain `string` with %q, simple numbers with %v
 * and anything else (named string types, quantities, slices, structs) as JSON.
 */
export type Printed = { readonly printed: string };
/** A string as Go's %q prints it; one longer than PRINTED_VALUE_MAX is cut first (never quoted whole). */
export const str = (s: string): Printed => ({ printed: quoteCut(s) });
export const json = (v: unknown): Printed => {
  const printed = goJson(v);
  return { printed: printed.length > PRINTED_VALUE_MAX ? cut(printed.slice(0, PRINTED_VALUE_MAX), printed.length) : printed };
};

/** goQuote of at most PRINTED_VALUE_MAX characters of `s`, saying how long it was when cut. */
export function quoteCut(s: string): string {
  return s.length > PRINTED_VALUE_MAX ? cut(goQuote(s.slice(0, PRINTED_VALUE_MAX)), s.length) : goQuote(s);
}
export const num = (n: number | bigint): Printed => ({ printed: String(n) });

const withDetail = (body: string, detail: string): string => (detail === '' ? body : `${body}: ${detail}`);

// ---- constructors (field.Invalid, field.Required, ...) ----

export function invalid(field: string, value: Printed, detail: string): FieldError {
  return { reason: 'FieldValueInvalid', field, message: withDetail(`Invalid value: ${value.printed}`, detail) };
}

export function typeInvalid(field: string, value: Printed, detail: string): FieldError {
  return { reason: 'FieldValueTypeInvalid', field, message: withDetail(`Invalid value: ${value.printed}`, detail) };
}

export function required(field: string, detail = ''): FieldError {
  return { reason: 'FieldValueRequired', field, message: withDetail('Required value', detail) };
}

export function forbidden(field: string, detail: string): FieldError {
  return { reason: 'FieldValueForbidden', field, message: withDetail('Forbidden', detail) };
}

export function duplicate(field: string, value: Printed): FieldError {
  return { reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${value.printed}` };
}

export function notSupported(field: string, value: Printed, supported: readonly string[]): FieldError {
  const detail = supported.length === 0 ? '' : `supported values: ${supported.map(goQuote).join(', ')}`;
  return { reason: 'FieldValueNotSupported', field, message: withDetail(`Unsupported value: ${value.printed}`, detail) };
}

export function tooLong(field: string, maxBytes: number): FieldError {
  const unit = maxBytes === 1 ? 'byte' : 'bytes';
  return { reason: 'FieldValueTooLong', field, message: `Too long: may not be more than ${maxBytes} ${unit}` };
}

/** `field.TooMany`: a list or map with more entries than allowed. */
export function tooMany(field: string, actual: number, max: number): FieldError {
  return { reason: 'FieldValueTooMany', field, message: `Too many: ${actual}: must have at most ${max} items` };
}

/** `field.Error.Error()`: the field, then the body. */
export const errorString = (e: FieldCause): string => (e.field === '' ? e.message : `${e.field}: ${e.message}`);

/**
 * Kubernetes' aggregate message: identical errors are printed once; a single error is
 * printed bare, several in brackets (at most FIELD_ERRORS_MAX, then how many more).
 */
export function aggregate(all: readonly FieldCause[]): string {
  const { errors, omitted } = described(all);
  const messages = [...new Set(errors.map(errorString))];
  return messages.length === 1 && omitted === 0 ? (messages[0] as string) : `[${listMessages(messages, ', ', omitted)}]`;
}

/**
 * `apierrors.NewInvalid`: every error becomes a cause (duplicates kept, as Kubernetes keeps
 * them), up to FIELD_ERRORS_MAX; the message says how many more there were.
 */
export function invalidObject(kind: string, name: string, errors: readonly FieldError[]): DomainError {
  return new DomainError(
    'ObjectInvalid',
    `${kind} ${quoteCut(name)} is invalid: ${aggregate(errors)}`,
    firstOf(described(errors).errors).listed,
  );
}

/** Whether `s` is longer than `max` UTF-8 bytes; a string with more UTF-16 units than that is, without counting. */
export function exceedsBytes(s: string, max: number): boolean {
  return s.length > max || byteLength(s) > max;
}

/** UTF-8 length: Go's len() on a string, which is what Kubernetes' length limits count. */
export function byteLength(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}
