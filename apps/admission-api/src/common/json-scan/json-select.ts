import { SELECTED_BYTES_MAX, SELECTED_ITEMS_MAX, SELECTED_VALUE_MAX_BYTES, type FieldSelection } from '@quota/domain';
import type { Found } from './json-scan.js';

/**
 * A selected value over budget: one value, one list, or all of one review together larger than
 * the decision reads (@quota/domain SELECTED_*). The review is refused, never decided on part of it.
 */
export class SelectionTooLarge extends Error {
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
    this.name = 'SelectionTooLarge';
  }
}

/** What may still be parsed of one body, in bytes (SELECTED_BYTES_MAX to start with). */
export interface SelectionBudget {
  bytes: number;
}

export const selectionBudget = (): SelectionBudget => ({ bytes: SELECTED_BYTES_MAX });

/**
 * The selected part of a scanned value (json-scan.ts `Found`), parsed: equal to
 * `selectFields(JSON.parse(body), selection)` (@quota/domain field-selection.ts, checked by
 * json-select.spec.ts), but only the selected values are parsed, each within the budget.
 * `found` must have been scanned with a selection covering `selection` (the union of every kind's).
 */
export function materialize(bytes: Buffer, found: Found, selection: FieldSelection, path: string, budget: SelectionBudget): unknown {
  if (selection.whole || found.kind === 'scalar') return parsed(bytes, found, selection, path, budget);
  if (found.kind === 'array') {
    if (!selection.items) return [];
    const max = selection.maxItems ?? SELECTED_ITEMS_MAX;
    const count = found.count ?? 0;
    if (count > max) throw new SelectionTooLarge(path, `Too many: ${count}: must have at most ${max} items`);
    const items = found.items ?? [];
    if (items.length !== count) throw new Error(`${path} was scanned with a selection that does not cover its items`);
    return items.map((item, i) => materialize(bytes, item, selection.items as FieldSelection, `${path}[${i}]`, budget));
  }
  if (!selection.keys) return {};
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(selection.keys)) {
    const member = found.keys?.get(key);
    if (member) out[key] = materialize(bytes, member, child, `${path}.${key}`, budget);
  }
  return out;
}

/**
 * One whole value, parsed as JSON.parse parses the body it is part of (UTF-8, invalid sequences
 * replaced). A string or number is a copy of its bytes, however long (the body bounds it, and the
 * readers hold each to Kubernetes' lengths with Kubernetes' messages); an object or array is
 * parsed within its bound and the budget.
 */
function parsed(bytes: Buffer, found: Found, selection: FieldSelection, path: string, budget: SelectionBudget): unknown {
  if (found.kind === 'scalar') return JSON.parse(bytes.toString('utf8', found.start, found.end));
  const size = found.end - found.start;
  const max = selection.maxBytes ?? SELECTED_VALUE_MAX_BYTES;
  if (size > max) throw new SelectionTooLarge(path, `Too long: ${size} bytes: must have at most ${max} bytes`);
  budget.bytes -= size;
  if (budget.bytes < 0)
    throw new SelectionTooLarge(path, `the fields admission reads of this request take more than ${SELECTED_BYTES_MAX} bytes in all`);
  return JSON.parse(bytes.toString('utf8', found.start, found.end));
}

/**
 * A body scanned for a selection and not parsed (a `@JsonBody` handler's body given a selection):
 * its bytes and where the selected values lie, to be read with `read`.
 */
export class ScannedBody {
  constructor(
    readonly bytes: Buffer,
    readonly root: Found,
  ) {}

  /** The value at `path` (keys from the root), if the selection found it there. */
  at(path: readonly string[]): Found | undefined {
    let found: Found | undefined = this.root;
    for (const key of path) found = found?.keys?.get(key);
    return found;
  }

  /** The selected part of `found`, parsed within `budget`. */
  read(found: Found, selection: FieldSelection, path: string, budget: SelectionBudget): unknown {
    return materialize(this.bytes, found, selection, path, budget);
  }
}
