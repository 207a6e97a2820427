import { DomainError, type FieldCause } from '../errors.js';
import { EMPTY, parseResourceList, type ResourceList } from '../resources/resource-list.js';

/**
 * Reads the parts of a JSON object the evaluators need, collecting every field problem so
 * that one DomainError reports them all (as Kubernetes' decoding would have refused the object
 * outright): 'QuantityInvalid' (400, as the API server answers) when a quantity does not parse,
 * else 'ObjectInvalid'.
 */
export class FieldReader {
  private readonly causes: FieldCause[] = [];
  private unparsable = false;

  constructor(private readonly what: string) {}

  /** A resource list; an invalid one is reported and read as empty. */
  resources(raw: unknown, path: string): ResourceList {
    try {
      return parseResourceList(raw, path);
    } catch (error) {
      if (!(error instanceof DomainError) || (error.code !== 'ObjectInvalid' && error.code !== 'QuantityInvalid')) throw error;
      this.unparsable ||= error.code === 'QuantityInvalid';
      this.causes.push(...error.causes);
      return EMPTY;
    }
  }

  /** An object, or undefined when absent (null included). */
  object(raw: unknown, path: string): Readonly<Record<string, unknown>> | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw === 'object' && !Array.isArray(raw)) return raw as Readonly<Record<string, unknown>>;
    this.typeInvalid(path, 'must be an object');
    return undefined;
  }

  /** An array, empty when absent. */
  array(raw: unknown, path: string): readonly unknown[] {
    if (raw === undefined || raw === null) return [];
    if (Array.isArray(raw)) return raw;
    this.typeInvalid(path, 'must be an array');
    return [];
  }

  /** A string, '' when absent (Go's zero value). */
  string(raw: unknown, path: string): string {
    if (raw === undefined || raw === null) return '';
    if (typeof raw === 'string') return raw;
    this.typeInvalid(path, 'must be a string');
    return '';
  }

  /** A string, or undefined when absent (a Go *string). */
  optionalString(raw: unknown, path: string): string | undefined {
    if (raw === undefined || raw === null) return undefined;
    return this.string(raw, path);
  }

  /** An integer, or undefined when absent (a Go *int64). */
  optionalInteger(raw: unknown, path: string): number | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw === 'number' && Number.isInteger(raw)) return raw;
    this.typeInvalid(path, 'must be an integer');
    return undefined;
  }

  /** A boolean, or undefined when absent (a Go *bool). */
  optionalBoolean(raw: unknown, path: string): boolean | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw === 'boolean') return raw;
    this.typeInvalid(path, 'must be a boolean');
    return undefined;
  }

  /** Records a field whose value Kubernetes would not accept. */
  invalid(field: string, value: string, message: string): void {
    this.causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: "${value}": ${message}` });
  }

  /** Throws the collected problems, if any. */
  done(): void {
    if (this.causes.length === 0) return;
    const detail = this.causes.map((cause) => `${cause.field}: ${cause.message}`).join(', ');
    if (this.unparsable) throw new DomainError('QuantityInvalid', `${this.what} cannot be decoded: ${detail}`, [...this.causes]);
    throw new DomainError('ObjectInvalid', `${this.what} is invalid: ${detail}`, [...this.causes]);
  }

  private typeInvalid(field: string, message: string): void {
    this.causes.push({ reason: 'FieldValueTypeInvalid', field, message });
  }
}

/** A field of a JSON object that may be anything (or missing). */
export function field(object: Readonly<Record<string, unknown>> | undefined, name: string): unknown {
  return object === undefined ? undefined : object[name];
}
