import { type ObjectMeta } from '../kube/types.js';
import { type StrictDecoder } from './decode.js';
import {
  type FieldError,
  byteLength,
  checkEach,
  child,
  forbidden,
  index,
  invalid,
  json,
  num,
  required,
  str,
  tooLong,
  tooMany,
} from './field.js';
import { isDNS1123Label, isQualifiedName, isValidLabelValue, nameIsDNSSubdomain } from './names.js';

/**
 * `metadata` as the API server accepts it on create: decoded strictly, then checked by
 * `ValidateObjectMeta` (apimachinery) plus core's finalizer-name rule.
 */

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly apiVersion?: string;
  readonly time?: string;
  readonly fieldsType?: string;
  readonly fieldsV1?: unknown;
  readonly subresource?: string;
}

/** Every `ObjectMeta` field a client may send. */
export interface FullObjectMeta extends ObjectMeta {
  readonly selfLink?: string;
  readonly deletionGracePeriodSeconds?: number;
  readonly ownerReferences?: readonly OwnerReference[];
  readonly finalizers?: readonly string[];
  readonly managedFields?: readonly ManagedFieldsEntry[];
}

const OBJECT_META_FIELDS = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
] as const;
const OWNER_REFERENCE_FIELDS = ['apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion'] as const;
const MANAGED_FIELDS_FIELDS = ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource'] as const;

/** What `metav1.Time` accepts: RFC 3339, optionally with fractional seconds. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Drops unset fields so the typed result carries only what was sent. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function timestamp(dec: StrictDecoder, raw: unknown, path: string): string | undefined {
  const value = dec.string(raw, path);
  if (value !== undefined && !RFC3339.test(value)) {
    dec.reject(invalid(path, str(value), 'must be an RFC 3339 date-time (e.g. "2006-01-02T15:04:05Z")'));
  }
  return value;
}

export function decodeObjectMeta(dec: StrictDecoder, raw: unknown, path: string): FullObjectMeta {
  const m = dec.object(raw, path, OBJECT_META_FIELDS);
  if (!m) return {};
  const f = (name: string): string => child(path, name);
  const ownerReferences = dec.array(m['ownerReferences'], f('ownerReferences'))?.map((item, i): OwnerReference => {
    const p = index(f('ownerReferences'), i);
    const o = dec.object(item, p, OWNER_REFERENCE_FIELDS) ?? {};
    return compact({
      apiVersion: dec.string(o['apiVersion'], child(p, 'apiVersion')) ?? '',
      kind: dec.string(o['kind'], child(p, 'kind')) ?? '',
      name: dec.string(o['name'], child(p, 'name')) ?? '',
      uid: dec.string(o['uid'], child(p, 'uid')) ?? '',
      controller: dec.boolean(o['controller'], child(p, 'controller')),
      blockOwnerDeletion: dec.boolean(o['blockOwnerDeletion'], child(p, 'blockOwnerDeletion')),
    });
  });
  const managedFields = dec.array(m['managedFields'], f('managedFields'))?.map((item, i): ManagedFieldsEntry => {
    const p = index(f('managedFields'), i);
    const o = dec.object(item, p, MANAGED_FIELDS_FIELDS) ?? {};
    return compact({
      manager: dec.string(o['manager'], child(p, 'manager')),
      operation: dec.string(o['operation'], child(p, 'operation')),
      apiVersion: dec.string(o['apiVersion'], child(p, 'apiVersion')),
      time: timestamp(dec, o['time'], child(p, 'time')),
      fieldsType: dec.string(o['fieldsType'], child(p, 'fieldsType')),
      // FieldsV1 is opaque JSON to the API server.
      fieldsV1: o['fieldsV1'] ?? undefined,
      subresource: dec.string(o['subresource'], child(p, 'subresource')),
    });
  });
  return compact({
    name: dec.string(m['name'], f('name')),
    generateName: dec.string(m['generateName'], f('generateName')),
    namespace: dec.string(m['namespace'], f('namespace')),
    selfLink: dec.string(m['selfLink'], f('selfLink')),
    uid: dec.string(m['uid'], f('uid')),
    resourceVersion: dec.string(m['resourceVersion'], f('resourceVersion')),
    generation: dec.integer(m['generation'], f('generation')),
    creationTimestamp: timestamp(dec, m['creationTimestamp'], f('creationTimestamp')),
    deletionTimestamp: timestamp(dec, m['deletionTimestamp'], f('deletionTimestamp')),
    deletionGracePeriodSeconds: dec.integer(m['deletionGracePeriodSeconds'], f('deletionGracePeriodSeconds')),
    labels: dec.stringMap(m['labels'], f('labels')),
    annotations: dec.stringMap(m['annotations'], f('annotations')),
    ownerReferences,
    finalizers: dec.stringArray(m['finalizers'], f('finalizers')),
    managedFields,
  });
}

export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;
/**
 * The service's bounds where Kubernetes leaves a list to its request size: labels'
 * keys and values together as annotations', and at most METADATA_LIST_MAX finalizers, owner
 * references and managed-fields entries. Checked before the entries, so that a list over its bound
 * costs one error: a Namespace with 190,000 finalizers was answered with a 52.8 MB error.
 */
export const TOTAL_LABEL_SIZE_LIMIT_BYTES = 256 * 1024;
export const METADATA_LIST_MAX = 256;
const FIELD_MANAGER_MAX_LENGTH = 128;
const MAX_SUBRESOURCE_NAME_LENGTH = 256;
const STANDARD_FINALIZERS: ReadonlySet<string> = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** Core's finalizer rule (validateKubeFinalizerName): a name without a '/' must be a standard finalizer. */
export function isStandardOrQualifiedFinalizer(finalizer: string): boolean {
  return finalizer.includes('/') || STANDARD_FINALIZERS.has(finalizer);
}

export interface ObjectMetaRules {
  /** `ValidateNameFunc`: the name rule of the kind (`prefix` is true for generateName). */
  readonly nameFn: (name: string, prefix: boolean) => string[];
  readonly requiresNamespace: boolean;
}

export const NAMESPACED_DNS_SUBDOMAIN: ObjectMetaRules = { nameFn: nameIsDNSSubdomain, requiresNamespace: true };

/** `ValidateObjectMeta` for a create: the checks, in Kubernetes' order. */
export function validateObjectMeta(meta: FullObjectMeta, rules: ObjectMetaRules, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  const f = (name: string): string => child(path, name);

  const generateName = meta.generateName ?? '';
  if (generateName !== '') {
    errs.push(...rules.nameFn(generateName, true).map((msg) => invalid(f('generateName'), str(generateName), msg)));
  }
  const name = meta.name ?? '';
  // With a generateName the API server generates the name (a random suffix) before it
  // validates, so "required" cannot happen; the random name is not ours to invent.
  if (name === '' && generateName === '') errs.push(required(f('name'), 'name or generateName is required'));
  else if (name !== '') errs.push(...rules.nameFn(name, false).map((msg) => invalid(f('name'), str(name), msg)));

  const namespace = meta.namespace ?? '';
  if (rules.requiresNamespace) {
    if (namespace === '') errs.push(required(f('namespace')));
    else errs.push(...isDNS1123Label(namespace).map((msg) => invalid(f('namespace'), str(namespace), msg)));
  } else if (namespace !== '') {
    errs.push(forbidden(f('namespace'), 'not allowed on this type'));
  }

  if ((meta.generation ?? 0) < 0) errs.push(invalid(f('generation'), num(meta.generation ?? 0), 'must be greater than or equal to 0'));
  errs.push(...validateLabels(meta.labels ?? {}, f('labels')));
  errs.push(...validateAnnotations(meta.annotations ?? {}, f('annotations')));
  errs.push(...listBound(meta.ownerReferences, f('ownerReferences'), validateOwnerReferences));
  errs.push(...listBound(meta.finalizers, f('finalizers'), validateMetadataFinalizers));
  errs.push(...listBound(meta.managedFields, f('managedFields'), validateManagedFields));
  return errs;
}

/** A list's entries validated, or, over METADATA_LIST_MAX, the one error that says so. */
function listBound<T>(
  list: readonly T[] | undefined,
  path: string,
  validate: (list: readonly T[], path: string) => FieldError[],
): FieldError[] {
  if (list === undefined) return [];
  return list.length > METADATA_LIST_MAX ? [tooMany(path, list.length, METADATA_LIST_MAX)] : validate(list, path);
}

/** The finalizers' names, then core's rule: an unprefixed finalizer must be one of the standard ones. */
function validateMetadataFinalizers(finalizers: readonly string[], path: string): FieldError[] {
  const errs = validateFinalizers(finalizers, path);
  finalizers.forEach((finalizer, i) => {
    if (!isStandardOrQualifiedFinalizer(finalizer)) {
      errs.push(invalid(index(path, i), str(finalizer), 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}

/** Keys and values together in bytes, stopping once past `max` (a map can hold 200,000 entries). */
function totalBytesOver(map: Readonly<Record<string, string>>, max: number): boolean {
  let total = 0;
  for (const [k, v] of Object.entries(map)) {
    total += byteLength(k) + byteLength(v);
    if (total > max) return true;
  }
  return false;
}

/**
 * Keys are qualified names, values label values; both errors name the map, not the key. Keys and
 * values together at most TOTAL_LABEL_SIZE_LIMIT_BYTES (the service's bound), checked first.
 */
export function validateLabels(labels: Readonly<Record<string, string>>, path: string): FieldError[] {
  if (totalBytesOver(labels, TOTAL_LABEL_SIZE_LIMIT_BYTES)) return [tooLong(path, TOTAL_LABEL_SIZE_LIMIT_BYTES)];
  const problems = ([k, v]: readonly [string, string]) => [
    ...isQualifiedName(k).map((msg) => ({ value: k, msg })),
    ...isValidLabelValue(v).map((msg) => ({ value: v, msg })),
  ];
  return checkEach(Object.entries(labels), problems, (_entry, { value, msg }) => invalid(path, str(value), msg));
}

/** Keys are qualified names, case-insensitively; keys and values together at most 256 KiB, checked first. */
export function validateAnnotations(annotations: Readonly<Record<string, string>>, path: string): FieldError[] {
  if (totalBytesOver(annotations, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES)) return [tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES)];
  return checkEach(
    Object.keys(annotations),
    (k) => isQualifiedName(k.toLowerCase()),
    (k, msg) => invalid(path, str(k), msg),
  );
}

/**
 * The version `schema.FromAPIVersionAndKind` finds in an apiVersion: "" and "/" have
 * none, "v1" and "group/v1" have one, anything with two slashes fails to parse (none).
 */
function parseGroupVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: apiVersion };
  if (parts.length === 2) return { group: parts[0] as string, version: parts[1] as string };
  return { group: '', version: '' };
}

/**
 * Kubernetes reports owner-reference problems under the list's path, not the item's
 * (`metadata.ownerReferences.kind`), and as invalid values rather than required ones.
 */
function validateOwnerReferences(refs: readonly OwnerReference[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs) {
    const gv = parseGroupVersion(ref.apiVersion);
    if (gv.version === '') errs.push(invalid(child(path, 'apiVersion'), str(ref.apiVersion), 'version must not be empty'));
    if (ref.kind === '') errs.push(invalid(child(path, 'kind'), str(ref.kind), 'must not be empty'));
    if (ref.name === '') errs.push(invalid(child(path, 'name'), str(ref.name), 'must not be empty'));
    // The uid is a named string type upstream: printed as JSON.
    if (ref.uid === '') errs.push(invalid(child(path, 'uid'), json(ref.uid), 'must not be empty'));
    // Events may not own anything, whichever way "v1" is spelled ("v1" or "/v1").
    if (gv.group === '' && gv.version === 'v1' && ref.kind === 'Event') {
      errs.push(invalid(path, json(ref), '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.controller === true) {
      const current = `${ref.kind}/${ref.name}`;
      if (firstController === '') firstController = current;
      else
        errs.push(
          invalid(
            path,
            json(refs),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
    }
  }
  return errs;
}

function validateFinalizers(finalizers: readonly string[], path: string): FieldError[] {
  const errs = checkEach(
    finalizers,
    (fin) => isQualifiedName(fin),
    (fin, msg) => invalid(path, str(fin), msg),
  );
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(path, json(finalizers), 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

/** Go's unicode.IsPrint, per code point (the ASCII space is printable, other spaces are not). */
const PRINTABLE_RUNE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** `ValidateFieldManager`: at most 128 bytes, and only printable characters. */
function validateFieldManager(manager: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) errs.push(tooLong(path, FIELD_MANAGER_MAX_LENGTH));
  let position = 0; // a byte offset, as Go's range over a string gives
  for (const ch of manager) {
    const cp = ch.codePointAt(0) ?? 0;
    // A lone surrogate reached Go as U+FFFD, which is printable.
    const printable = (cp >= 0xd800 && cp <= 0xdfff) || PRINTABLE_RUNE.test(ch);
    if (!printable) {
      const rune = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
      errs.push(invalid(path, str(manager), `invalid character ${rune} (at position ${position})`));
    }
    position += byteLength(ch);
  }
  return errs;
}

function validateManagedFields(entries: readonly ManagedFieldsEntry[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  entries.forEach((entry, i) => {
    const p = index(path, i);
    const operation = entry.operation ?? '';
    // An empty operation is just another unsupported one; the operation type prints as JSON.
    if (operation !== 'Apply' && operation !== 'Update') {
      errs.push(invalid(child(p, 'operation'), json(operation), 'must be `Apply` or `Update`'));
    }
    const fieldsType = entry.fieldsType ?? '';
    if (fieldsType !== '' && fieldsType !== 'FieldsV1') errs.push(invalid(child(p, 'fieldsType'), str(fieldsType), 'must be `FieldsV1`'));
    errs.push(...validateFieldManager(entry.manager ?? '', child(p, 'manager')));
    if (byteLength(entry.subresource ?? '') > MAX_SUBRESOURCE_NAME_LENGTH) {
      errs.push(tooLong(child(p, 'subresource'), MAX_SUBRESOURCE_NAME_LENGTH));
    }
  });
  return errs;
}
