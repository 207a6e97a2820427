import { SELECTED_ITEMS_MAX, type FieldSelection } from '@quota/domain';

/**
 * One pass over a JSON body's bytes before anything is built from it: it checks the JSON is well
 * formed, how deep it nests, how many values it holds, and whether any string carries what
 * PostgreSQL cannot store (NUL, or an unpaired UTF-16 surrogate, which jsonb refuses); and, given
 * a selection (the fields admission reads: @quota/domain fields-read), where in the bytes each
 * selected value lies. Nothing else is built: a 1.8 MB pod's environment costs its scan and no
 * objects, and only the selected values are then parsed (json-select.ts). Linear in the body,
 * recursive only to `depthMax` levels. The path of a problem is built only when there is one.
 */
export interface JsonLimits {
  /** Most levels of arrays and objects, the outermost included. */
  readonly depthMax: number;
  /** Most values in the whole document: every object, array, string, number, true, false and null (keys are not values). */
  readonly valuesMax: number;
}

export interface JsonProblem {
  /** Where: `body.request.object.metadata.labels`, `body.items[3]`. */
  readonly field: string;
  readonly message: string;
  /** The bytes are not JSON (as JSON.parse would refuse them), rather than JSON out of bounds. */
  readonly syntax?: true;
}

/** Where a selected value lies: its bytes, and where its selected members lie. */
export interface Found {
  readonly start: number;
  end: number;
  readonly kind: 'object' | 'array' | 'scalar';
  /** An object's selected keys (the last of a repeated key, as JSON.parse keeps it). */
  readonly keys?: Map<string, Found>;
  /** An array's items, the first `itemsMax` of them. */
  readonly items?: Found[];
  /** How many items the array has. */
  count?: number;
}

export interface JsonScan {
  readonly problem?: JsonProblem;
  /** The document's value, when a selection was given (its root is always selected). */
  readonly found?: Found;
  /** No bytes at all (not even whitespace). */
  readonly empty: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_U = 0x75;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
/** After a backslash: `"` `\` `/` b f n r t (u is read apart). */
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const LITERALS: Readonly<Record<number, readonly number[]>> = {
  0x74: [...Buffer.from('true')],
  0x66: [...Buffer.from('false')],
  0x6e: [...Buffer.from('null')],
};

const OBJECT = 1;
const ARRAY = 2;
const UNSTORABLE = 'must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate';

const isDigit = (b: number | undefined): boolean => b !== undefined && b >= ZERO && b <= NINE;
const isWhitespace = (b: number | undefined): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function hexValue(b: number | undefined): number {
  if (b === undefined) return -1;
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  return -1;
}

/** Stops a scan with its problem (thrown through the recursion, caught once at the top). */
class Stop {
  constructor(readonly problem: JsonProblem) {}
}

interface SelectedKey {
  readonly key: string;
  /** The key as UTF-8, to compare with a key's bytes as they stand in a body. */
  readonly bytes: Buffer;
  readonly selection: FieldSelection;
}

/** A selection's keys by their length in bytes: most keys of a body are skipped on their length alone, never decoded. */
const keyIndexes = new WeakMap<FieldSelection, ReadonlyMap<number, readonly SelectedKey[]>>();

function keyIndexOf(selection: FieldSelection): ReadonlyMap<number, readonly SelectedKey[]> {
  let index = keyIndexes.get(selection);
  if (!index) {
    const built = new Map<number, SelectedKey[]>();
    for (const [key, child] of Object.entries(selection.keys ?? {})) {
      const bytes = Buffer.from(key, 'utf8');
      built.set(bytes.length, [...(built.get(bytes.length) ?? []), { key, bytes, selection: child }]);
    }
    keyIndexes.set(selection, (index = built));
  }
  return index;
}

/** Scans `bytes` (a whole body); with `selection`, also finds where the selected values lie. */
export function scanJson(bytes: Buffer, limits: JsonLimits, selection?: FieldSelection, rootName = 'body'): JsonScan {
  const scanner = new Scanner(bytes, limits, rootName);
  return scanner.run(selection);
}

class Scanner {
  private i = 0;
  /** Whether the string read last had an escape. */
  private escaped = false;
  private values = 0;
  private depth = 0;
  // Per level, for a problem's path only: what the level is, and the item or key being read.
  private readonly kind: Uint8Array;
  private readonly index: Int32Array;
  private readonly keyStart: Int32Array;
  private readonly keyEnd: Int32Array;

  constructor(
    private readonly bytes: Buffer,
    private readonly limits: JsonLimits,
    private readonly rootName: string,
  ) {
    const levels = Math.max(1, limits.depthMax) + 2;
    this.kind = new Uint8Array(levels);
    this.index = new Int32Array(levels);
    this.keyStart = new Int32Array(levels);
    this.keyEnd = new Int32Array(levels);
  }

  run(selection: FieldSelection | undefined): JsonScan {
    const b = this.bytes;
    // A UTF-8 byte order mark, which the body's decoding drops.
    if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) this.i = 3;
    if (b.length === 0) return { empty: true };
    try {
      this.whitespace();
      const found = this.value(selection ?? undefined);
      this.whitespace();
      if (this.i < b.length) this.syntax('unexpected data after the JSON value');
      return found ? { found, empty: false } : { empty: false };
    } catch (error) {
      if (error instanceof Stop) return { problem: error.problem, empty: false };
      throw error;
    }
  }

  /** Length: one value of each kind, read in place; a switch reads best whole. */
  private value(selection: FieldSelection | undefined): Found | undefined {
    this.whitespace();
    const start = this.i;
    const b = this.bytes[start];
    switch (b) {
      case OPEN_OBJECT:
        return this.object(selection, start);
      case OPEN_ARRAY:
        return this.array(selection, start);
      case QUOTE:
        this.count(this.depth);
        this.string(false);
        break;
      case 0x74:
      case 0x66:
      case 0x6e:
        this.count(this.depth);
        this.literal(LITERALS[b] as readonly number[]);
        break;
      default:
        if (b !== MINUS && !isDigit(b)) this.syntax(b === undefined ? 'unexpected end of JSON input' : `unexpected ${this.shown(start)}`);
        this.count(this.depth);
        this.number();
    }
    return selection ? { start, end: this.i, kind: 'scalar' } : undefined;
  }

  private object(selection: FieldSelection | undefined, start: number): Found | undefined {
    this.open(OBJECT);
    const keys = selection?.keys;
    const index = keys ? keyIndexOf(selection) : undefined;
    const found: Found | undefined = selection
      ? { start, end: start, kind: 'object', ...(keys ? { keys: new Map<string, Found>() } : {}) }
      : undefined;
    this.whitespace();
    if (this.bytes[this.i] === CLOSE_OBJECT) return this.close(found);
    for (;;) {
      this.whitespace();
      if (this.bytes[this.i] !== QUOTE) this.syntax(`expected a property name, found ${this.shown(this.i)}`);
      const keyStart = this.i;
      this.string(true);
      this.keyStart[this.depth] = keyStart;
      this.keyEnd[this.depth] = this.i;
      this.whitespace();
      if (this.bytes[this.i] !== COLON) this.syntax(`expected ':' after a property name, found ${this.shown(this.i)}`);
      this.i++;
      const selected = index ? this.selectedKey(index, keyStart, this.keyEnd[this.depth] as number) : undefined;
      const child = this.value(selected?.selection);
      if (child && selected) found?.keys?.set(selected.key, child);
      this.whitespace();
      const next = this.bytes[this.i];
      this.i++;
      if (next === COMMA) continue;
      if (next === CLOSE_OBJECT) break;
      this.i--;
      this.syntax(`expected ',' or '}' after a property value, found ${this.shown(this.i)}`);
    }
    this.depth--;
    return this.ended(found);
  }

  private array(selection: FieldSelection | undefined, start: number): Found | undefined {
    this.open(ARRAY);
    const item = selection?.items;
    const itemsMax = selection?.maxItems ?? SELECTED_ITEMS_MAX;
    const found: Found | undefined = selection ? { start, end: start, kind: 'array', ...(item ? { items: [], count: 0 } : {}) } : undefined;
    this.whitespace();
    if (this.bytes[this.i] === CLOSE_ARRAY) return this.close(found);
    for (let at = 0; ; at++) {
      this.index[this.depth] = at;
      // Past the most items a selection reads, the rest are only counted (materializing refuses them).
      const child = this.value(item && at < itemsMax ? item : undefined);
      if (found?.items) {
        if (child) found.items.push(child);
        found.count = at + 1;
      }
      this.whitespace();
      const next = this.bytes[this.i];
      this.i++;
      if (next === COMMA) continue;
      if (next === CLOSE_ARRAY) break;
      this.i--;
      this.syntax(`expected ',' or ']' after an array item, found ${this.shown(this.i)}`);
    }
    this.depth--;
    return this.ended(found);
  }

  /** At a `{` or `[`: one more value and one more level, within the limits. */
  private open(kind: number): void {
    if (this.depth >= this.limits.depthMax) this.stop(this.path(this.depth), `is nested more than ${this.limits.depthMax} levels deep`);
    this.count(this.depth);
    this.depth++;
    this.kind[this.depth] = kind;
    this.index[this.depth] = 0;
    this.keyStart[this.depth] = -1;
    this.i++;
  }

  /** An empty object or array, at its closing byte. */
  private close(found: Found | undefined): Found | undefined {
    this.i++;
    this.depth--;
    return this.ended(found);
  }

  private ended(found: Found | undefined): Found | undefined {
    if (found) found.end = this.i;
    return found;
  }

  private count(depth: number): void {
    if (++this.values > this.limits.valuesMax) this.stop(this.path(depth), `holds more than ${this.limits.valuesMax} values`);
  }

  /** Length: a string's bytes, its escapes checked and the unstorable ones refused; one loop reads best. */
  private string(isKey: boolean): void {
    const b = this.bytes;
    let i = this.i + 1;
    this.escaped = false;
    for (;;) {
      const c = b[i];
      if (c === undefined) this.syntax('unterminated string');
      if (c === QUOTE) break;
      if (c < 0x20) {
        this.i = i;
        this.syntax('a control character in a string must be escaped');
      }
      if (c !== BACKSLASH) {
        i++;
        continue;
      }
      this.escaped = true;
      const escaped = b[i + 1];
      if (escaped !== LOWER_U) {
        if (escaped === undefined || !SIMPLE_ESCAPES.has(escaped)) {
          this.i = i;
          this.syntax('a bad escape in a string');
        }
        i += 2;
        continue;
      }
      const unit = this.escapedUnit(i + 1);
      i += 6;
      let bad = unit === 0 || (unit >= 0xdc00 && unit <= 0xdfff);
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const low = b[i] === BACKSLASH && b[i + 1] === LOWER_U ? this.escapedUnit(i + 1) : -1;
        if (low >= 0xdc00 && low <= 0xdfff) i += 6;
        else bad = true;
      }
      // A key's problem belongs to the object holding it; a value's to its own place.
      if (bad) this.stop(this.path(isKey ? this.depth - 1 : this.depth), isKey ? `has a key that ${UNSTORABLE}` : UNSTORABLE);
    }
    this.i = i + 1;
  }

  /** The code unit of the `\uXXXX` whose `u` is at `at`; a bad one is a syntax error. */
  private escapedUnit(at: number): number {
    let unit = 0;
    for (let k = 1; k <= 4; k++) {
      const digit = hexValue(this.bytes[at + k]);
      if (digit < 0) {
        this.i = at;
        this.syntax('a bad \\u escape in a string');
      }
      unit = unit * 16 + digit;
    }
    return unit;
  }

  private number(): void {
    const b = this.bytes;
    let i = this.i;
    if (b[i] === MINUS) i++;
    if (b[i] === ZERO) i++;
    else if (isDigit(b[i])) while (isDigit(b[i])) i++;
    else this.at(i, 'a number needs a digit');
    if (b[i] === DOT) {
      i++;
      if (!isDigit(b[i])) this.at(i, 'a number needs a digit after its point');
      while (isDigit(b[i])) i++;
    }
    if (b[i] === LOWER_E || b[i] === UPPER_E) {
      i++;
      if (b[i] === PLUS || b[i] === MINUS) i++;
      if (!isDigit(b[i])) this.at(i, 'a number needs a digit in its exponent');
      while (isDigit(b[i])) i++;
    }
    this.i = i;
  }

  private literal(text: readonly number[]): void {
    for (let k = 0; k < text.length; k++) if (this.bytes[this.i + k] !== text[k]) this.at(this.i + k, `unexpected ${this.shown(this.i)}`);
    this.i += text.length;
  }

  private whitespace(): void {
    while (isWhitespace(this.bytes[this.i])) this.i++;
  }

  private at(i: number, message: string): never {
    this.i = i;
    return this.syntax(message);
  }

  private syntax(message: string): never {
    throw new Stop({ field: this.path(this.depth), message: `${message} at byte ${this.i}`, syntax: true });
  }

  private stop(field: string, message: string): never {
    throw new Stop({ field, message });
  }

  /** What is at `i`, for a message: a character (quoted) or the end. */
  private shown(i: number): string {
    const b = this.bytes[i];
    if (b === undefined) return 'the end of the input';
    return b >= 0x20 && b < 0x7f ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16).padStart(2, '0')}`;
  }

  /** The selected key whose quoted text is at [start, end), if any: by its bytes, or decoded when it has escapes. */
  private selectedKey(index: ReadonlyMap<number, readonly SelectedKey[]>, start: number, end: number): SelectedKey | undefined {
    if (this.escaped) {
      const key = JSON.parse(this.bytes.toString('utf8', start, end)) as string;
      return index.get(Buffer.byteLength(key))?.find((candidate) => candidate.key === key);
    }
    const candidates = index.get(end - start - 2);
    return candidates?.find((candidate) => this.bytes.compare(candidate.bytes, 0, candidate.bytes.length, start + 1, end - 1) === 0);
  }

  private path(to: number): string {
    let out = this.rootName;
    for (let d = 1; d <= to; d++) {
      if (this.kind[d] === ARRAY) out += `[${this.index[d]}]`;
      else if ((this.keyStart[d] as number) >= 0) out += `.${this.shortKey(this.keyStart[d] as number, this.keyEnd[d] as number)}`;
    }
    return out;
  }

  /** A key for a path: decoded when it is valid JSON text, as written otherwise; long keys shortened. */
  private shortKey(start: number, end: number): string {
    const raw = this.bytes.toString('utf8', start, Math.min(end, start + 258));
    try {
      const key = JSON.parse(end - start > 258 ? `${raw.slice(0, -1)}"` : raw) as string;
      return end - start > 258 ? `${key}…` : key;
    } catch {
      return raw;
    }
  }
}
