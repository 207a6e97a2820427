/**
 * One pass over a JSON body's bytes before anything parses it: how deep it nests, how many
 * values it holds, and whether any string carries what PostgreSQL cannot store (NUL, or an
 * unpaired UTF-16 surrogate, which jsonb refuses). Linear in the body and allocation-free
 * (per-level state lives in typed arrays reused by every scan), so a hostile body costs its length and no more:
 * `JSON.parse` then runs only on bodies within the limits. The path of a problem is built
 * only when there is one to report.
 *
 * The scan does not validate JSON; the parser after it does. On invalid JSON it may report
 * a problem the parser would have reported differently: either way the answer is a 400.
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
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const LOWER_U = 0x75;

const OBJECT = 1;
const ARRAY = 2;

/** A byte that starts a number, true, false or null. */
function startsScalar(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x74 || b === 0x66 || b === 0x6e;
}

function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
}

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  return -1;
}

/** The code unit of the `\uXXXX` escape whose `u` is at `at`, or -1 when it is not one. */
function escapedUnit(bytes: Uint8Array, at: number): number {
  if (at + 4 >= bytes.length) return -1;
  let unit = 0;
  for (let k = 1; k <= 4; k++) {
    const digit = hexValue(bytes[at + k] as number);
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

const UNSTORABLE = 'must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate';

/**
 * Per-level state, reused by every scan: a scan runs to its end synchronously, so one set
 * serves the process (allocating it per body cost more than scanning a small body). Each level
 * is set when a container opens, before it is read.
 */
let scratch = levels(66);

function levels(size: number) {
  return { kind: new Uint8Array(size), index: new Int32Array(size), keyStart: new Int32Array(size), keyEnd: new Int32Array(size), expectKey: new Uint8Array(size) };
}

/** Length: one pass of a hand-written scanner, whose states read best in one loop. */
export function scanJson(bytes: Uint8Array, limits: JsonLimits, rootName = 'body'): JsonProblem | undefined {
  if (scratch.kind.length < limits.depthMax + 2) scratch = levels(limits.depthMax + 2);
  const { kind, index, keyStart, keyEnd, expectKey } = scratch;
  // Level 0 is outside every container.
  kind[0] = 0;
  expectKey[0] = 0;
  let depth = 0;
  let values = 0;
  /** The last byte outside strings that was not whitespace (0: none yet). */
  let previous = 0;

  const path = (to: number): string => {
    let out = rootName;
    for (let d = 1; d <= to; d++) {
      if (kind[d] === ARRAY) out += `[${index[d]}]`;
      else if ((keyStart[d] as number) >= 0) out += `.${keyText(bytes, keyStart[d] as number, keyEnd[d] as number)}`;
    }
    return out;
  };

  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b === QUOTE) {
      const isKey = kind[depth] === OBJECT && expectKey[depth] === 1;
      if (!isKey && ++values > limits.valuesMax) return { field: path(depth), message: `holds more than ${limits.valuesMax} values` };
      const start = i;
      // The string's bytes: only escapes matter; its end is the next unescaped quote.
      for (i++; i < bytes.length; i++) {
        const c = bytes[i] as number;
        if (c === QUOTE) break;
        if (c !== BACKSLASH) continue;
        i++;
        if (bytes[i] !== LOWER_U) continue;
        const unit = escapedUnit(bytes, i);
        if (unit < 0) continue;
        i += 4;
        let bad = unit === 0 || (unit >= 0xdc00 && unit <= 0xdfff);
        if (unit >= 0xd800 && unit <= 0xdbff) {
          const low = bytes[i + 1] === BACKSLASH && bytes[i + 2] === LOWER_U ? escapedUnit(bytes, i + 2) : -1;
          if (low >= 0xdc00 && low <= 0xdfff) i += 6;
          else bad = true;
        }
        if (bad) {
          // A key's problem belongs to the object holding it; a value's to its own place.
          return isKey ? { field: path(depth - 1), message: `has a key that ${UNSTORABLE}` } : { field: path(depth), message: UNSTORABLE };
        }
      }
      if (isKey) {
        keyStart[depth] = start;
        keyEnd[depth] = i + 1;
      }
      previous = QUOTE;
      continue;
    }
    if (isWhitespace(b)) continue;
    switch (b) {
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (depth >= limits.depthMax) return { field: path(depth), message: `is nested more than ${limits.depthMax} levels deep` };
        if (++values > limits.valuesMax) return { field: path(depth), message: `holds more than ${limits.valuesMax} values` };
        depth++;
        kind[depth] = b === OPEN_OBJECT ? OBJECT : ARRAY;
        index[depth] = 0;
        keyStart[depth] = -1;
        expectKey[depth] = 1;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (depth > 0) depth--;
        break;
      case COMMA:
        if (kind[depth] === ARRAY) index[depth] = (index[depth] as number) + 1;
        else expectKey[depth] = 1;
        break;
      case COLON:
        expectKey[depth] = 0;
        break;
      default:
        // A number or literal counts once, at its first byte (the one after `[`, `,` or `:`).
        if (startsScalar(b) && (previous === 0 || previous === OPEN_ARRAY || previous === COMMA || previous === COLON) && ++values > limits.valuesMax) {
          return { field: path(depth), message: `holds more than ${limits.valuesMax} values` };
        }
    }
    previous = b;
  }
  return undefined;
}

/** A key for a path: decoded when it is valid JSON text, as written otherwise; long keys shortened. */
function keyText(bytes: Uint8Array, start: number, end: number): string {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset + start, Math.min(end - start, 258)).toString('utf8');
  try {
    const key = JSON.parse(end - start > 258 ? `${raw.slice(0, -1)}"` : raw) as string;
    return end - start > 258 ? `${key}…` : key;
  } catch {
    return raw;
  }
}
