import { DomainError } from '../errors.js';
import { Quantity, QuantityParseError } from '../quantity/quantity.js';
import { RESOURCE_LIST_MAX } from './sizes.js';
import {
  type FieldError,
  child,
  cutText,
  errorString,
  FIELD_ERRORS_MAX,
  goJson,
  invalid,
  key,
  notSupported,
  quoteCut,
  str,
  typeInvalid,
} from './field.js';

/**
 * Reads untrusted JSON into typed values the way the API server's strict decoder does:
 * a field of the wrong JSON type, an unparsable quantity or a field the schema does not
 * have is a decoding error, and decoding errors stop the request before validation runs.
 * Every problem is collected, not only the first. `null` means "unset", as in Go.
 */

/** A resource list in the order its JSON had it. */
export type QuantityEntries = readonly (readonly [string, Quantity])[];

type JsonType = 'null' | 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';

function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'boolean':
      return 'boolean';
    default:
      return 'object';
  }
}

/** Go's strings.TrimSpace: unlike String.prototype.trim it trims U+0085 and keeps U+FEFF. */
const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const GO_TRIM_RE = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, 'g');
export const goTrimSpace = (s: string): string => s.replace(GO_TRIM_RE, '');

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export class StrictDecoder {
  private readonly decodeErrors: FieldError[] = [];
  private readonly unknownFields: FieldError[] = [];
  /** Problems found past FIELD_ERRORS_MAX: counted, never described (an error must stay small, whatever the body). */
  private omitted = 0;
  /** The first quantity that failed to parse: it alone makes the API server's message. */
  private firstQuantityError: string | undefined;

  constructor(
    /** The kind being decoded, for messages (`ResourceQuota`). */
    readonly kind: string,
    /** Its group and version (`v1`, `quota.openshift.io/v1`). */
    readonly apiVersion = 'v1',
  ) {}

  /** Whether FIELD_ERRORS_MAX problems are described already: a new one is then only counted. */
  private full(): boolean {
    if (this.decodeErrors.length + this.unknownFields.length < FIELD_ERRORS_MAX) return false;
    this.omitted++;
    return true;
  }

  private wrongType(raw: unknown, path: string, expected: string): undefined {
    if (!this.full()) this.decodeErrors.push(typeInvalid(path, str(jsonType(raw)), `must be of type ${expected}`));
    return undefined;
  }

  /** An object whose keys must all be in `known`. */
  object(raw: unknown, path: string, known: readonly string[]): Readonly<Record<string, unknown>> | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (!isObject(raw)) return this.wrongType(raw, path, 'object');
    for (const name of Object.keys(raw)) {
      if (!known.includes(name) && !this.full()) {
        const field = child(path, cutText(name));
        this.unknownFields.push({ reason: 'FieldValueInvalid', field, message: `unknown field ${quoteCut(field)}` });
      }
    }
    return raw;
  }

  string(raw: unknown, path: string): string | undefined {
    if (raw === undefined || raw === null) return undefined;
    return typeof raw === 'string' ? raw : this.wrongType(raw, path, 'string');
  }

  integer(raw: unknown, path: string): number | undefined {
    if (raw === undefined || raw === null) return undefined;
    return typeof raw === 'number' && Number.isSafeInteger(raw) ? raw : this.wrongType(raw, path, 'integer');
  }

  boolean(raw: unknown, path: string): boolean | undefined {
    if (raw === undefined || raw === null) return undefined;
    return typeof raw === 'boolean' ? raw : this.wrongType(raw, path, 'boolean');
  }

  array(raw: unknown, path: string): readonly unknown[] | undefined {
    if (raw === undefined || raw === null) return undefined;
    return Array.isArray(raw) ? raw : this.wrongType(raw, path, 'array');
  }

  /** A list of strings; a `null` element decodes to "" as in Go. */
  stringArray(raw: unknown, path: string): string[] | undefined {
    const items = this.array(raw, path);
    return items?.map((item, i) => this.string(item, `${path}[${i}]`) ?? '');
  }

  /** A map of strings (labels, annotations); a `null` value decodes to "". */
  stringMap(raw: unknown, path: string): Record<string, string> | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (!isObject(raw)) return this.wrongType(raw, path, 'object');
    return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, this.string(v, key(path, k)) ?? '']));
  }

  /**
   * A resource list. Like `Quantity.UnmarshalJSON`: a string (trimmed) or a bare JSON
   * number is parsed, `null` is zero, anything else fails the quantity format.
   */
  quantities(raw: unknown, path: string): QuantityEntries | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (!isObject(raw)) return this.wrongType(raw, path, 'object');
    // A list over the bound is refused by its size (sizes.ts), whatever its quantities say: they
    // are not parsed (19,000 bad ones cost ~0.6 s of errors), and the names keep their count.
    if (Object.keys(raw).length > RESOURCE_LIST_MAX) return Object.keys(raw).map((name) => [name, Quantity.ZERO] as const);
    const entries: (readonly [string, Quantity])[] = [];
    for (const [name, value] of Object.entries(raw)) {
      const q = this.quantity(value, key(path, name));
      if (q) entries.push([name, q]);
    }
    return entries;
  }

  private quantity(raw: unknown, path: string): Quantity | undefined {
    if (raw === null || raw === undefined) return Quantity.ZERO;
    const text = typeof raw === 'string' ? goTrimSpace(raw) : typeof raw === 'number' ? String(raw) : goJson(raw);
    try {
      return Quantity.parse(text);
    } catch (error) {
      if (!(error instanceof QuantityParseError)) throw error;
      const cause = invalid(path, str(text), error.message);
      if (!this.full()) this.decodeErrors.push(cause);
      this.firstQuantityError ??= errorString(cause);
      return undefined;
    }
  }

  /**
   * `apiVersion` and `kind` must name this kind when given; when absent the request's
   * own resource type applies, as on the API server.
   */
  typeMeta(raw: Readonly<Record<string, unknown>>): void {
    const apiVersion = this.string(raw['apiVersion'], 'apiVersion');
    if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== this.apiVersion) {
      this.decodeErrors.push(notSupported('apiVersion', str(apiVersion), [this.apiVersion]));
    }
    const kind = this.string(raw['kind'], 'kind');
    if (kind !== undefined && kind !== '' && kind !== this.kind) {
      this.decodeErrors.push(notSupported('kind', str(kind), [this.kind]));
    }
  }

  /** Records a decoding problem found by a caller (e.g. a malformed timestamp). */
  reject(error: FieldError): void {
    if (!this.full()) this.decodeErrors.push(error);
  }

  /** Every decoding problem described so far (FIELD_ERRORS_MAX at most): wrong types, bad quantities, then unknown fields. */
  errors(): FieldError[] {
    return [...this.decodeErrors, ...this.unknownFields];
  }

  /**
   * Throws if anything failed to decode. The message reads like the API server's
   * (`<Kind> in version "v1" cannot be handled as a <Kind>: ...`). A quantity that does not
   * parse stops Go's JSON decoder at once, so then the message is that parse error alone (with
   * its field and value, which Kubernetes leaves out); otherwise every problem is listed,
   * unknown fields as strict field validation lists them. The causes always carry every
   * problem found.
   */
  throwIfInvalid(): void {
    if (this.decodeErrors.length === 0 && this.unknownFields.length === 0) return;
    let detail: string;
    if (this.firstQuantityError !== undefined) {
      detail = this.firstQuantityError;
    } else {
      const parts = this.decodeErrors.map(errorString);
      if (this.unknownFields.length > 0) parts.push(`strict decoding error: ${this.unknownFields.map((e) => e.message).join(', ')}`);
      detail = this.omitted === 0 ? parts.join(', ') : `${parts.join(', ')}, and ${this.omitted} more errors`;
    }
    const version = this.apiVersion.slice(this.apiVersion.indexOf('/') + 1);
    throw new DomainError(
      'ObjectMalformed',
      `${this.kind} in version "${version}" cannot be handled as a ${this.kind}: ${detail}`,
      this.errors(),
    );
  }

  /** For the top level: anything but an object is refused outright. */
  root(raw: unknown, known: readonly string[]): Readonly<Record<string, unknown>> {
    if (!isObject(raw)) {
      this.wrongType(raw, '', 'object');
      this.throwIfInvalid();
    }
    return this.object(raw, '', known) ?? {};
  }
}
