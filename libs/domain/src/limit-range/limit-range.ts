import { InvariantViolation } from '../assert.js';
import { DomainError } from '../errors.js';
import type { LimitRange, LimitRangeItem, RawQuantities } from '../kube/types.js';
import { parseResourceList, type ResourceList } from '../resources/resource-list.js';

/** The `LimitRangeItem.type` values Kubernetes knows (corev1.LimitType). */
export const LIMIT_TYPE_CONTAINER = 'Container';
export const LIMIT_TYPE_POD = 'Pod';
export const LIMIT_TYPE_PVC = 'PersistentVolumeClaim';

/** The annotation LimitRanger writes on a pod it defaulted. */
export { LIMIT_RANGER_ANNOTATION } from '../kube/annotations.js';

/** A LimitRangeItem with its quantities parsed. */
export interface ParsedLimitRangeItem {
  readonly type: string;
  readonly min: ResourceList;
  readonly max: ResourceList;
  readonly default: ResourceList;
  readonly defaultRequest: ResourceList;
  readonly maxLimitRequestRatio: ResourceList;
}

export interface ParsedLimitRange {
  /** `metadata.name` ('' when absent), to say which LimitRange refused a request. */
  readonly name: string;
  readonly items: readonly ParsedLimitRangeItem[];
}

/**
 * Stored LimitRanges were validated by the API server, so an unparsable quantity in one is
 * a bug of whoever handed it to us, not bad input from the request.
 */
function parseStored(raw: RawQuantities | undefined, field: string): ResourceList {
  try {
    return parseResourceList(raw, field);
  } catch (error) {
    if (error instanceof DomainError) throw new InvariantViolation(`stored LimitRange has an invalid quantity: ${error.message}`);
    throw error;
  }
}

export function parseLimitRange(limitRange: LimitRange): ParsedLimitRange {
  const name = limitRange.metadata?.name ?? '';
  const items = (limitRange.spec?.limits ?? []).map((item, i): ParsedLimitRangeItem => {
    const field = (part: string) => `${name}: spec.limits[${i}].${part}`;
    return {
      type: item.type,
      min: parseStored(item.min, field('min')),
      max: parseStored(item.max, field('max')),
      default: parseStored(item.default, field('default')),
      defaultRequest: parseStored(item.defaultRequest, field('defaultRequest')),
      maxLimitRequestRatio: parseStored(item.maxLimitRequestRatio, field('maxLimitRequestRatio')),
    };
  });
  return { name, items };
}

/**
 * The API server's defaulting of a LimitRange (SetDefaults_LimitRangeItem in
 * pkg/apis/core/v1/defaults.go), run whenever Kubernetes decodes one, so LimitRanger only
 * ever sees defaulted LimitRanges: on a Container item, a missing `default` comes from
 * `max`, and a missing `defaultRequest` from `default`, else from `min`. Idempotent.
 * admitLimitRanger applies it on read; the admin API should apply it on write too, so
 * that a stored LimitRange reads back as Kubernetes would return it.
 */
export function withLimitRangeApiDefaults(limitRange: LimitRange): LimitRange {
  const items = limitRange.spec?.limits;
  if (!items) return limitRange;
  const defaulted = items.map((item): LimitRangeItem => {
    if (item.type !== LIMIT_TYPE_CONTAINER) return item;
    const fill = (target: Record<string, string>, from: RawQuantities | undefined) => {
      for (const [key, value] of Object.entries(from ?? {})) if (!Object.prototype.hasOwnProperty.call(target, key)) target[key] = value;
    };
    const def: Record<string, string> = { ...item.default };
    fill(def, item.max);
    const defaultRequest: Record<string, string> = { ...item.defaultRequest };
    fill(defaultRequest, def);
    fill(defaultRequest, item.min);
    return { ...item, default: def, defaultRequest };
  });
  return { ...limitRange, spec: { ...limitRange.spec, limits: defaulted } };
}
