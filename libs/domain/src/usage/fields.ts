import { DomainError, type FieldCause } from '../errors.js';
import { EMPTY, parseResourceList, type ResourceList } from '../resources/resource-list.js';
import { cutText, exceedsBytes, firstOf, listMessages } from '../validation/field.js';
import { RESOURCE_LIST_MAX } from '../validation/sizes.js';

/**
 * The longest string an evaluator reads. What it reads ends up stored (class names become
 * resource names and scope facts of a reservation) or in messages (container names): Kubernetes
 * holds each to a DNS name (at most 253), and so does the ledger.
 */
export const EVALUATED_STRING_MAX_BYTES = 253;

/**
 * Reads the parts of a JSON object the evaluators need, collecting every field problem so
 * that one DomainError reports them all (as Kubernetes' decoding would have refused the object
 * outright): 'QuantityInvalid' (400, as the API server answers) when a quantity does not parse,
 * else 'ObjectInvalid'.
 */
export class FieldReader {
  private readonly causes: FieldCause[] = [];
  /** Every resource name the object's lists name: its reservation records each. */
  private readonly resourceNames = new Set<string>();
  private unparsable = false;

  /** `stored`: the object is one the API server stored (UsageOptions.stored): the ledger's own bounds are not applied. */
  constructor(
    private readonly what: string,
    private readonly stored = false,
  ) {}

  /**
   * A resource list; an invalid one is reported and read as empty. One object may name at most
   * RESOURCE_LIST_MAX different resources over all its lists (names Kubernetes would refuse are
   * charged nowhere, but the rest are recorded with its reservation).
   */
  resources(raw: unknown, path: string): ResourceList {
    const count = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? Object.keys(raw).length : 0;
    if (count > RESOURCE_LIST_MAX && !this.stored) {
      this.causes.push({
        reason: 'FieldValueTooMany',
        field: path,
        message: `Too many: ${count}: must have at most ${RESOURCE_LIST_MAX} items`,
      });
      return EMPTY;
    }
    try {
      const list = parseResourceList(raw, path);
      for (const name of Object.keys(list)) this.resourceNames.add(name);
      return list;
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

  /** A string, '' when absent (Go's zero value); at most EVALUATED_STRING_MAX_BYTES. */
  string(raw: unknown, path: string): string {
    if (raw === undefined || raw === null) return '';
    if (typeof raw !== 'string') {
      this.typeInvalid(path, 'must be a string');
      return '';
    }
    if (this.stored || !exceedsBytes(raw, EVALUATED_STRING_MAX_BYTES)) return raw;
    this.causes.push({
      reason: 'FieldValueTooLong',
      field: path,
      message: `Too long: may not be more than ${EVALUATED_STRING_MAX_BYTES} bytes`,
    });
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
    this.causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: "${cutText(value)}": ${message}` });
  }

  /** Throws the collected problems, if any. */
  done(): void {
    if (this.resourceNames.size > RESOURCE_LIST_MAX && !this.stored) {
      this.causes.push({
        reason: 'FieldValueTooMany',
        field: 'spec',
        message: `Too many: more than ${RESOURCE_LIST_MAX} different resource names in one object: must have at most ${RESOURCE_LIST_MAX}`,
      });
    }
    if (this.causes.length === 0) return;
    const detail = listMessages(this.causes.map((cause) => `${cause.field}: ${cause.message}`));
    if (this.unparsable) throw new DomainError('QuantityInvalid', `${this.what} cannot be decoded: ${detail}`, firstOf(this.causes).listed);
    throw new DomainError('ObjectInvalid', `${this.what} is invalid: ${detail}`, firstOf(this.causes).listed);
  }

  private typeInvalid(field: string, message: string): void {
    this.causes.push({ reason: 'FieldValueTypeInvalid', field, message });
  }
}

/** A field of a JSON object that may be anything (or missing). */
export function field(object: Readonly<Record<string, unknown>> | undefined, name: string): unknown {
  return object === undefined ? undefined : object[name];
}
