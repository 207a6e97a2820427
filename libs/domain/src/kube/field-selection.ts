/**
 * The fields of an object that quota and LimitRanger read, as a tree. A webhook review carries
 * the whole object (a pod's environment, its managedFields, 100,000 labels: up to the API
 * server's 3 MB), and the decision needs a handful of fields of it; the edge reads only the
 * selected ones (the rest is skipped unread) and the domain decides on the same selection, so
 * what a review costs follows what quota needs, not what its sender put in it.
 *
 * `selectFields(value, selection)` is the meaning: what the edge's scanner materializes from a
 * body must equal it applied to the parsed body, and the domain must decide the same on it as on
 * the whole object (Kubernetes' own tables run through it: admitObject selects first).
 */
export interface FieldSelection {
  /** The whole value, as it is. */
  readonly whole?: true;
  /** An object: these keys, each selected in turn; a key the object lacks stays absent. */
  readonly keys?: Readonly<Record<string, FieldSelection>>;
  /** An array: every item, selected in turn. */
  readonly items?: FieldSelection;
  /** The most bytes a whole value may take as JSON (default SELECTED_VALUE_MAX_BYTES). */
  readonly maxBytes?: number;
  /** The most items of a selected array (default SELECTED_ITEMS_MAX). */
  readonly maxItems?: number;
}

/**
 * The bounds on what one review's decision reads, the service's own (Kubernetes bounds the
 * whole object only): one value (a name, a resource list) at most 64 KiB, a list at most 256
 * items (a pod's containers are bounded so already: validation/shape.ts), and everything
 * selected of one review together at most 512 KiB (a Namespace's labels and annotations, each
 * within Kubernetes' 256 KiB for annotations). Past them the review is refused, never decided
 * on part of what it asks.
 */
export const SELECTED_VALUE_MAX_BYTES = 64 * 1024;
export const SELECTED_ITEMS_MAX = 256;
export const SELECTED_BYTES_MAX = 512 * 1024;
/** Kubernetes' bound on all of an object's annotations together (TotalAnnotationSizeLimitB), which labels are held to here too. */
export const METADATA_MAP_MAX_BYTES = 256 * 1024;

/** The whole value. */
export const WHOLE: FieldSelection = Object.freeze({ whole: true });

/** Only what the value is: an object as `{}`, an array as `[]`, a scalar as it is (for fields read only for being set). */
export const PRESENCE: FieldSelection = Object.freeze({ keys: Object.freeze({}) });

/** An object's keys. */
export const keys = (selected: Readonly<Record<string, FieldSelection>>): FieldSelection => ({ keys: selected });

/** Every item of an array. */
export const each = (item: FieldSelection): FieldSelection => ({ items: item });

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The selected part of a parsed JSON value. Where the value is not of the selected shape it keeps
 * its type and loses its content (an array where an object is selected becomes `[]`, an object
 * where an array is selected `{}`), so that whoever reads it still sees the wrong type, and a
 * scalar stays as it is.
 */
export function selectFields(value: unknown, selection: FieldSelection): unknown {
  if (selection.whole) return value;
  if (Array.isArray(value))
    return selection.items ? value.map((item: unknown) => selectFields(item, selection.items as FieldSelection)) : [];
  if (!isObject(value)) return value;
  if (!selection.keys) return {};
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(selection.keys)) {
    if (Object.prototype.hasOwnProperty.call(value, key)) out[key] = selectFields(value[key], child);
  }
  return out;
}

/** The selection of what either reads: a whole value stays whole, and keeps what the other selects inside it (the edge's scanner records both). */
export function mergeSelections(a: FieldSelection, b: FieldSelection): FieldSelection {
  const keysOf = (x: FieldSelection, y: FieldSelection): Record<string, FieldSelection> | undefined => {
    if (!x.keys && !y.keys) return undefined;
    const merged: Record<string, FieldSelection> = { ...x.keys };
    for (const [key, child] of Object.entries(y.keys ?? {})) merged[key] = merged[key] ? mergeSelections(merged[key], child) : child;
    return merged;
  };
  const merged = keysOf(a, b);
  const items = a.items && b.items ? mergeSelections(a.items, b.items) : (a.items ?? b.items);
  const maxBytes = Math.max(a.maxBytes ?? 0, b.maxBytes ?? 0);
  const maxItems = Math.max(a.maxItems ?? 0, b.maxItems ?? 0);
  return {
    ...(a.whole || b.whole ? { whole: true as const } : {}),
    ...(merged ? { keys: merged } : {}),
    ...(items ? { items } : {}),
    ...(maxBytes > 0 ? { maxBytes } : {}),
    ...(maxItems > 0 ? { maxItems } : {}),
  };
}

/** `metadata` as every kind's admission reads it: the names stored with a decision, the version a change was read at, and a deletion in progress. */
export const OBJECT_METADATA_KEYS: Readonly<Record<string, FieldSelection>> = {
  name: WHOLE,
  resourceVersion: WHOLE,
  generateName: WHOLE,
  namespace: WHOLE,
  uid: WHOLE,
  deletionTimestamp: WHOLE,
  deletionGracePeriodSeconds: WHOLE,
};

/** What admission reads of an object of a kind it only counts (and of every object: its identity). */
export const OBJECT_FIELDS: FieldSelection = keys({ apiVersion: WHOLE, kind: WHOLE, metadata: keys(OBJECT_METADATA_KEYS) });

/** An object's fields: its identity (OBJECT_FIELDS) and these. */
export function objectFields(
  more: Readonly<Record<string, FieldSelection>>,
  metadata: Readonly<Record<string, FieldSelection>> = {},
): FieldSelection {
  return mergeSelections(OBJECT_FIELDS, keys({ ...more, metadata: keys(metadata) }));
}
