import { DomainError, type FieldCause } from '../errors.js';
import { Quantity, QuantityParseError } from '../quantity/quantity.js';
import { cutText, firstOf, key, listMessages } from '../validation/field.js';

/**
 * A set of named quantities (Kubernetes' `v1.ResourceList`), immutable. The helpers mirror
 * k8s.io/apiserver/pkg/quota/v1 (Add, Subtract, Max, LessThanOrEqual, Mask, …).
 */
export type ResourceList = Readonly<Record<string, Quantity>>;

/** A resource list as it appears in JSON: names to quantity strings. */
export type RawResourceList = Readonly<Record<string, string>>;

export const EMPTY: ResourceList = Object.freeze({});

const entries = (list: ResourceList): [string, Quantity][] => Object.entries(list);

const build = (pairs: Iterable<readonly [string, Quantity]>): ResourceList => Object.freeze(Object.fromEntries(pairs));

/**
 * Parses a JSON resource list. Every invalid quantity is reported (as a field cause under
 * `fieldPath`), not only the first. A quantity that does not parse is `QuantityInvalid` (the API
 * server refuses it while decoding, 400 BadRequest); a value of another type `ObjectInvalid`.
 */
export function parseResourceList(raw: unknown, fieldPath: string): ResourceList {
  if (raw === undefined || raw === null) return EMPTY;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new DomainError('ObjectInvalid', `${fieldPath}: must be an object of resource names to quantities`, [
      { reason: 'FieldValueTypeInvalid', field: fieldPath, message: 'must be an object of resource names to quantities' },
    ]);
  }
  const causes: FieldCause[] = [];
  const pairs: [string, Quantity][] = [];
  let unparsable = false;
  for (const [name, value] of Object.entries(raw)) {
    const field = key(fieldPath, name);
    if (typeof value !== 'string' && typeof value !== 'number') {
      causes.push({ reason: 'FieldValueTypeInvalid', field, message: 'must be a quantity string such as "500m" or "1Gi"' });
      continue;
    }
    try {
      pairs.push([name, Quantity.fromJSON(value)]);
    } catch (error) {
      if (!(error instanceof QuantityParseError)) throw error;
      unparsable = true;
      causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: "${cutText(String(value))}": ${error.message}` });
    }
  }
  if (causes.length > 0) {
    // At most FIELD_ERRORS_MAX described: a list can hold as many entries as a body values.
    throw new DomainError(
      unparsable ? 'QuantityInvalid' : 'ObjectInvalid',
      listMessages(causes.map((c) => `${c.field}: ${c.message}`)),
      firstOf(causes).listed,
    );
  }
  return build(pairs);
}

/** The JSON form, with every quantity printed as Kubernetes prints it. */
export function formatResourceList(list: ResourceList): Record<string, string> {
  return Object.fromEntries(entries(list).map(([name, q]) => [name, q.toString()]));
}

/** The JSON form with every quantity in canonical form (what our responses use). */
export function canonicalResourceList(list: ResourceList): Record<string, string> {
  return Object.fromEntries(entries(list).map(([name, q]) => [name, q.canonical()]));
}

export function resourceList(raw: Readonly<Record<string, string>>): ResourceList {
  return build(Object.entries(raw).map(([name, value]) => [name, Quantity.parse(value)]));
}

export function resourceNames(list: ResourceList): string[] {
  return Object.keys(list);
}

export function get(list: ResourceList, name: string): Quantity | undefined {
  return Object.prototype.hasOwnProperty.call(list, name) ? list[name] : undefined;
}

export function has(list: ResourceList, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(list, name);
}

/** a + b, key by key; keys in either appear in the result. */
export function add(a: ResourceList, b: ResourceList): ResourceList {
  const result = new Map<string, Quantity>(entries(a));
  for (const [name, q] of entries(b)) {
    const current = result.get(name);
    result.set(name, current ? current.add(q) : q);
  }
  return build(result);
}

/** a - b, key by key; keys in either appear in the result (b-only keys negated). */
export function subtract(a: ResourceList, b: ResourceList): ResourceList {
  const result = new Map<string, Quantity>(entries(a));
  for (const [name, q] of entries(b)) {
    const current = result.get(name);
    result.set(name, current ? current.sub(q) : q.neg());
  }
  return build(result);
}

/** The larger of each key; keys in either appear in the result. */
export function max(a: ResourceList, b: ResourceList): ResourceList {
  const result = new Map<string, Quantity>(entries(a));
  for (const [name, q] of entries(b)) {
    const current = result.get(name);
    if (!current || q.cmp(current) > 0) result.set(name, q);
  }
  return build(result);
}

/**
 * Whether a <= b for every key of a that b also has (Kubernetes' `LessThanOrEqual`): a key
 * b does not constrain never fails. Returns the keys that fail.
 */
export function lessThanOrEqual(a: ResourceList, b: ResourceList): { ok: boolean; exceeded: string[] } {
  const exceeded: string[] = [];
  for (const [name, q] of entries(a)) {
    const limit = get(b, name);
    if (limit && q.cmp(limit) > 0) exceeded.push(name);
  }
  return { ok: exceeded.length === 0, exceeded };
}

/** Only the named keys. */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const keep = new Set(names);
  return build(entries(list).filter(([name]) => keep.has(name)));
}

/** True if every quantity is zero (an empty list is zero). */
export function isZero(list: ResourceList): boolean {
  return entries(list).every(([, q]) => q.isZero());
}

/** The keys whose quantity is negative. */
export function negativeKeys(list: ResourceList): string[] {
  return entries(list)
    .filter(([, q]) => q.sign() < 0)
    .map(([name]) => name);
}

/** Same keys and equal values. */
export function equals(a: ResourceList, b: ResourceList): boolean {
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  return ak.every((name) => {
    const other = get(b, name);
    return other !== undefined && other.equals(a[name] as Quantity);
  });
}

/** Removes keys whose value is zero. */
export function withoutZeros(list: ResourceList): ResourceList {
  return build(entries(list).filter(([, q]) => !q.isZero()));
}

/** A list with the given entries (for building lists in code). */
export function fromEntries(pairs: Iterable<readonly [string, Quantity]>): ResourceList {
  return build(pairs);
}

/** Prints `name=value` pairs sorted by name, as Kubernetes' quota messages do. */
export function prettyPrint(list: ResourceList): string {
  return Object.keys(list)
    .sort()
    .map((name) => `${name}=${(list[name] as Quantity).toString()}`)
    .join(',');
}
