import { type LimitRange, type LimitRangeItem } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import { type QuantityEntries, StrictDecoder } from './decode.js';
import { type FieldError, child, duplicate, forbidden, index, invalid, invalidObject, json, key, required } from './field.js';
import { type FullObjectMeta, NAMESPACED_DNS_SUBDOMAIN, decodeObjectMeta, validateObjectMeta } from './object-meta.js';
import { assertDefinitionSize, limitRangeSizeErrors } from './sizes.js';
import { isOvercommitAllowed, validateLimitRangeResourceName, validateLimitRangeTypeName } from './resource-names.js';

/**
 * LimitRange validation on create, as the API server does it: strict decoding, then
 * `ValidateLimitRange` (pkg/apis/core/validation). Note that Kubernetes does not check
 * LimitRange quantities for sign: only their order is checked.
 */

const KIND = 'LimitRange';
const ITEM_FIELDS = ['type', 'max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

interface DecodedItem {
  readonly type: string;
  readonly max: QuantityEntries | undefined;
  readonly min: QuantityEntries | undefined;
  readonly default: QuantityEntries | undefined;
  readonly defaultRequest: QuantityEntries | undefined;
  readonly maxLimitRequestRatio: QuantityEntries | undefined;
}

interface DecodedLimitRange {
  readonly metadata: FullObjectMeta;
  readonly limits: readonly DecodedItem[] | undefined;
}

function decode(raw: unknown): DecodedLimitRange {
  const dec = new StrictDecoder(KIND);
  const top = dec.root(raw, ['apiVersion', 'kind', 'metadata', 'spec']);
  dec.typeMeta(top);
  const metadata = decodeObjectMeta(dec, top['metadata'], 'metadata');
  const spec = dec.object(top['spec'], 'spec', ['limits']) ?? {};
  const limits = dec.array(spec['limits'], 'spec.limits')?.map((item, i): DecodedItem => {
    const path = index('spec.limits', i);
    const o = dec.object(item, path, ITEM_FIELDS) ?? {};
    return {
      type: dec.string(o['type'], child(path, 'type')) ?? '',
      max: dec.quantities(o['max'], child(path, 'max')),
      min: dec.quantities(o['min'], child(path, 'min')),
      default: dec.quantities(o['default'], child(path, 'default')),
      defaultRequest: dec.quantities(o['defaultRequest'], child(path, 'defaultRequest')),
      maxLimitRequestRatio: dec.quantities(o['maxLimitRequestRatio'], child(path, 'maxLimitRequestRatio')),
    };
  });
  dec.throwIfInvalid();
  return { metadata, limits };
}

/**
 * The API server defaults a Container item before validating and storing it
 * (SetDefaults_LimitRangeItem): a missing `default` key comes from `max`, a missing
 * `defaultRequest` key from `default`, then `min`. Validation then sees, and the store
 * keeps, the defaulted item.
 */
function withApiDefaults(item: DecodedItem): DecodedItem {
  if (item.type !== 'Container') return item;
  const fill = (target: QuantityEntries | undefined, ...sources: (QuantityEntries | undefined)[]): QuantityEntries | undefined => {
    const result = [...(target ?? [])];
    const present = new Set(result.map(([name]) => name));
    for (const [name, quantity] of sources.flatMap((source) => source ?? [])) {
      if (present.has(name)) continue;
      present.add(name);
      result.push([name, quantity]);
    }
    return result.length > 0 || target ? result : undefined;
  };
  const defaults = fill(item.default, item.max);
  return { ...item, default: defaults, defaultRequest: fill(item.defaultRequest, defaults, item.min) };
}

/** `resource.MaxMilliValue`: below it Kubernetes compares ratios in milli-units. */
const MAX_MILLI_VALUE = (2n ** 63n - 1n) / 1000n;
const ONE = Quantity.fromInt(1n);

/** A finite double as an exact fraction: |x| = mantissa * 2^exponent. */
function exactBinary(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // Subnormals have no implicit leading bit and the smallest exponent.
  return biased === 0 ? { mantissa: fraction, exponent: -1074 } : { mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}

/**
 * Go's `%f`: six decimals of the exact binary value, ties rounded to even (JavaScript's
 * toFixed rounds ties up), the sign of a negative zero kept, Go's spelling of infinities.
 */
function formatF(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const negative = x < 0 || Object.is(x, -0);
  const { mantissa, exponent } = exactBinary(x);
  const scale = 1_000_000n;
  let units: bigint;
  if (exponent >= 0) {
    units = (mantissa << BigInt(exponent)) * scale;
  } else {
    const numerator = mantissa * scale;
    const denominator = 1n << BigInt(-exponent);
    units = numerator / denominator;
    const twice = (numerator % denominator) * 2n;
    if (twice > denominator || (twice === denominator && units % 2n === 1n)) units += 1n;
  }
  const fraction = (units % scale).toString().padStart(6, '0');
  return `${negative ? '-' : ''}${units / scale}.${fraction}`;
}

/** `max/min` as Kubernetes computes it: float64 of milli (or whole) values. */
function ratioCheck(ratio: Quantity, min: Quantity, max: Quantity): { ratio: number; limit: number } {
  let ratioValue = Number(ratio.value());
  let minValue = min.value();
  let maxValue = max.value();
  if (ratio.value() < MAX_MILLI_VALUE && minValue < MAX_MILLI_VALUE && maxValue < MAX_MILLI_VALUE) {
    ratioValue = Number(ratio.milliValue()) / 1000;
    minValue = min.milliValue();
    maxValue = max.milliValue();
  }
  return { ratio: ratioValue, limit: Number(maxValue) / Number(minValue) };
}

function validateItem(item: DecodedItem, path: string, seenTypes: Set<string>): FieldError[] {
  const errs = validateLimitRangeTypeName(item.type, child(path, 'type'));
  if (seenTypes.has(item.type)) errs.push(duplicate(child(path, 'type'), json(item.type)));
  seenTypes.add(item.type);

  // Every resource named anywhere in the item, in first-seen order.
  const keys = new Set<string>();
  const collect = (entries: QuantityEntries | undefined, field: string): Map<string, Quantity> => {
    const map = new Map<string, Quantity>();
    for (const [name, q] of entries ?? []) {
      errs.push(...validateLimitRangeResourceName(item.type, name, key(child(path, field), name)));
      keys.add(name);
      map.set(name, q);
    }
    return map;
  };
  const max = collect(item.max, 'max');
  const min = collect(item.min, 'min');
  let defaults = new Map<string, Quantity>();
  let defaultRequests = new Map<string, Quantity>();
  if (item.type === 'Pod') {
    // Defaults are applied per container, so a Pod limit cannot carry them.
    if ((item.default?.length ?? 0) > 0) errs.push(forbidden(child(path, 'default'), "may not be specified when `type` is 'Pod'"));
    if ((item.defaultRequest?.length ?? 0) > 0) {
      errs.push(forbidden(child(path, 'defaultRequest'), "may not be specified when `type` is 'Pod'"));
    }
  } else {
    defaults = collect(item.default, 'default');
    defaultRequests = collect(item.defaultRequest, 'defaultRequest');
  }
  if (item.type === 'PersistentVolumeClaim' && !min.has('storage') && !max.has('storage')) {
    // Kubernetes names the item's own path plus `.limits` here.
    errs.push(required(child(path, 'limits'), 'either minimum or maximum storage value is required, but neither was provided'));
  }
  const ratios = collect(item.maxLimitRequestRatio, 'maxLimitRequestRatio');

  for (const name of keys) {
    const lo = min.get(name);
    const hi = max.get(name);
    const def = defaults.get(name);
    const defReq = defaultRequests.get(name);
    const ratio = ratios.get(name);
    const at = (field: string): string => key(child(path, field), name);

    if (lo && hi && lo.cmp(hi) > 0) errs.push(invalid(at('min'), json(lo), `min value ${lo} is greater than max value ${hi}`));
    if (defReq && lo && lo.cmp(defReq) > 0) {
      errs.push(invalid(at('defaultRequest'), json(defReq), `min value ${lo} is greater than default request value ${defReq}`));
    }
    if (defReq && hi && defReq.cmp(hi) > 0) {
      errs.push(invalid(at('defaultRequest'), json(defReq), `default request value ${defReq} is greater than max value ${hi}`));
    }
    if (defReq && def && defReq.cmp(def) > 0) {
      errs.push(invalid(at('defaultRequest'), json(defReq), `default request value ${defReq} is greater than default limit value ${def}`));
    }
    // The next two print min and max as the bad value, not the default: Kubernetes does.
    if (def && lo && lo.cmp(def) > 0) errs.push(invalid(at('default'), json(lo), `min value ${lo} is greater than default value ${def}`));
    if (def && hi && def.cmp(hi) > 0) errs.push(invalid(at('default'), json(hi), `default value ${def} is greater than max value ${hi}`));
    if (ratio && ratio.cmp(ONE) < 0) errs.push(invalid(at('maxLimitRequestRatio'), json(ratio), `ratio ${ratio} is less than 1`));
    if (ratio && lo && hi) {
      const check = ratioCheck(ratio, lo, hi);
      if (check.ratio > check.limit) {
        errs.push(invalid(at('maxLimitRequestRatio'), json(ratio), `ratio ${ratio} is greater than max/min = ${formatF(check.limit)}`));
      }
    }
    // Hugepages and extended resources cannot be overcommitted: request must equal limit.
    if (!isOvercommitAllowed(name) && def && defReq && def.cmp(defReq) !== 0) {
      errs.push(
        invalid(at('defaultRequest'), json(defReq), `default value ${def} must equal to defaultRequest value ${defReq} in ${name}`),
      );
    }
  }
  return errs;
}

function validate(lr: DecodedLimitRange): FieldError[] {
  const seenTypes = new Set<string>();
  return [
    ...validateObjectMeta(lr.metadata, NAMESPACED_DNS_SUBDOMAIN),
    ...(lr.limits ?? []).flatMap((item, i) => validateItem(item, index('spec.limits', i), seenTypes)),
  ];
}

const rawList = (entries: QuantityEntries | undefined): Record<string, string> | undefined =>
  entries && Object.fromEntries(entries.map(([name, q]) => [name, q.toString()]));

function toItem(item: DecodedItem): LimitRangeItem {
  const lists = {
    max: rawList(item.max),
    min: rawList(item.min),
    default: rawList(item.default),
    defaultRequest: rawList(item.defaultRequest),
    maxLimitRequestRatio: rawList(item.maxLimitRequestRatio),
  };
  return { type: item.type, ...Object.fromEntries(Object.entries(lists).filter(([, v]) => v !== undefined)) };
}

/**
 * Validates an untrusted LimitRange (parsed JSON) exactly as the API server would on
 * create, and returns it typed, with quantities printed as Kubernetes prints them.
 * Throws `DomainError('ObjectInvalid')` with one `FieldCause` per problem.
 */
export function validateLimitRange(obj: unknown): LimitRange {
  return validated(decode(obj));
}

/**
 * What the API server does with a LimitRange it is asked to store: decode, apply its
 * defaulting, then validate, and return the defaulted object (which is what it stores and
 * what a read returns). The admin API uses this; `validateLimitRange` is validation alone.
 */
export function prepareLimitRangeForStorage(obj: unknown): LimitRange {
  const lr = decode(obj);
  return validated({ ...lr, limits: lr.limits?.map(withApiDefaults) });
}

function validated(lr: DecodedLimitRange): LimitRange {
  assertDefinitionSize(KIND, lr.metadata.name ?? '', limitRangeSizeErrors({ spec: { limits: lr.limits?.map(toItem) ?? [] } }));
  const errs = validate(lr);
  if (errs.length > 0) throw invalidObject(KIND, lr.metadata.name ?? '', errs);
  return {
    apiVersion: 'v1',
    kind: KIND,
    metadata: lr.metadata,
    spec: lr.limits ? { limits: lr.limits.map(toItem) } : {},
  };
}
