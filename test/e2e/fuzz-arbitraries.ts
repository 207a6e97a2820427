import fc from 'fast-check';

/**
 * Generators for test/e2e/fuzz.test.ts: hostile values (strings, quantities, times, keys),
 * a JSON model that can also express what JSON.stringify cannot (duplicate keys, raw number
 * literals such as 1e400, 100k levels of nesting), and mutations of valid request bodies.
 * Mutating valid bodies reaches the code behind the first validation step; random JSON
 * alone rarely gets past `apiVersion`.
 */

// ------------------------------------------------------------------ a JSON model

/** Text put into the body verbatim: a number literal JSON.parse turns into Infinity, deep nesting, a huge string. */
export class Raw {
  constructor(
    readonly text: string,
    private readonly label?: string,
  ) {}

  // Counterexamples stay readable: a 300 KB literal is named, not printed.
  [fc.toStringMethod](): string {
    return this.label ?? `raw(${JSON.stringify(this.text.length > 80 ? `${this.text.slice(0, 80)}…` : this.text)})`;
  }
}

/** An object written with the same key more than once, in this order (JSON.parse keeps the last). */
export class DupKeys {
  constructor(readonly entries: readonly (readonly [string, Body])[]) {}

  [fc.toStringMethod](): string {
    return `dupKeys(${this.entries.map(([k, v]) => `${JSON.stringify(k)}: ${fc.stringify(v)}`).join(', ')})`;
  }
}

export type Body = null | boolean | number | string | Raw | DupKeys | readonly Body[] | { readonly [key: string]: Body };
export type Path = readonly (string | number)[];

const isRecord = (v: Body): v is { readonly [key: string]: Body } =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Raw) && !(v instanceof DupKeys);

/** JSON text of the model. Own `__proto__` keys survive: Object.entries lists them, unlike a prototype. */
export function serialize(value: Body): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof DupKeys) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  if (isRecord(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Object.fromEntries defines keys (an assignment to `__proto__` would replace the prototype instead). */
const fromEntries = (entries: readonly (readonly [string, Body])[]): { readonly [key: string]: Body } => Object.fromEntries(entries);

/** Every node of the model, root first, in a stable order (Raw and DupKeys are leaves). */
function pathsOf(value: Body, path: Path = []): Path[] {
  if (Array.isArray(value)) return [path, ...value.flatMap((v, i) => pathsOf(v, [...path, i]))];
  if (isRecord(value)) return [path, ...Object.entries(value).flatMap(([k, v]) => pathsOf(v, [...path, k]))];
  return [path];
}

/**
 * The `at` of a mutation that lands on `path` of `body`: how the counterexamples kept as
 * examples name their node (indices follow the body's shape, not its string values).
 */
export function pathIndex(body: Body, path: Path): number {
  const index = pathsOf(body).findIndex((p) => p.length === path.length && p.every((step, i) => step === path[i]));
  if (index < 0) throw new Error(`no node at ${JSON.stringify(path)}`);
  return index;
}

function getAt(value: Body, path: Path): Body {
  let node = value;
  for (const step of path)
    node = Array.isArray(node) ? ((node as Body[])[step as number] ?? null) : ((node as Record<string, Body>)[step as string] ?? null);
  return node;
}

/** The model with the node at `path` replaced by `update(node)`; `undefined` removes it. */
function updateAt(value: Body, path: Path, update: (node: Body) => Body | undefined): Body | undefined {
  const [step, ...rest] = path;
  if (step === undefined) return update(value);
  if (Array.isArray(value)) {
    const list = value as readonly Body[];
    return list.flatMap((v, i) => {
      if (i !== step) return [v];
      const next = updateAt(v, rest, update);
      return next === undefined ? [] : [next];
    });
  }
  if (isRecord(value)) {
    return fromEntries(
      Object.entries(value).flatMap(([k, v]): [string, Body][] => {
        if (k !== step) return [[k, v]];
        const next = updateAt(v, rest, update);
        return next === undefined ? [] : [[k, next]];
      }),
    );
  }
  return value;
}

// ------------------------------------------------------------------ hostile values

/** Characters that break storage or comparison: NUL (PostgreSQL text refuses it), lone surrogates (jsonb refuses them), BOM, bidi override, combining marks. */
const NASTY_CHARS = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\u202e',
  '\u0301',
  '\u2028',
  '\n',
  '\r',
  '\t',
  '"',
  '\\',
  '/',
  '%',
  '\u00e9',
  '\u{1f600}',
  '\uffff',
];

export const NASTY_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'then',
  'length',
];

const nastyConstants = fc.constantFrom(
  '',
  ' ',
  '..',
  '.',
  '-a',
  'a-',
  'A',
  'a_b',
  'a.b',
  'a/b',
  '../../etc/passwd',
  '%00',
  '%2F',
  'null',
  'undefined',
  'NaN',
  'true',
  '0',
  '{}',
  '[]',
  "'; DROP TABLE ledger_events;--",
  'x'.repeat(63),
  'x'.repeat(64),
  'x'.repeat(253),
  'x'.repeat(254),
  ...NASTY_KEYS,
  ...NASTY_CHARS,
);

/** Any string, biased toward the ones that break things. */
export const weirdString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: nastyConstants, weight: 3 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }), weight: 1 },
  // A plausible value with one poisonous character inside.
  {
    arbitrary: fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), fc.constantFrom(...NASTY_CHARS)).map(([s, c]) => `${s}${c}${s}`),
    weight: 2,
  },
);

const digits = (min: number, max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

/** Quantity texts: well-formed ones at the edges of the range, and malformed ones. */
export const weirdQuantity: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '1e400',
      '1E+400',
      '1e-400',
      '0.0001m',
      '0.1n',
      '1n',
      '-1',
      '+1',
      '-0',
      '0',
      '1.',
      '.5',
      '.',
      '1.5.5',
      '9223372036854775807',
      '9223372036854775808',
      '9223372036854775808Ki',
      '8Ei',
      '16Ei',
      '1e18',
      '1e30',
      '1e31',
      '999999999999999999999999999999',
      '1000000000000000000000000000001m',
      '1Kii',
      '1KiB',
      '1ki',
      '1e',
      '1e+',
      '1m1',
      '0x10',
      '1_000',
      ' 1',
      '1 ',
      'NaN',
      'Infinity',
      '1\u0000',
      '１',
      '',
    ),
    weight: 3,
  },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom('', '', '-', '+'),
        digits(0, 40),
        fc.option(digits(0, 40)),
        fc.oneof(
          fc.constantFrom('', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'K', 'mi'),
          fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 500 })).map((p) => p.join('')),
        ),
      )
      .map(([sign, whole, fraction, suffix]) => `${sign}${whole}${fraction === null ? '' : `.${fraction}`}${suffix}`),
    weight: 3,
  },
  { arbitrary: weirdString, weight: 1 },
);

/** JSON number literals JSON.stringify never writes (JSON.parse reads them as Infinity, -0 or a rounded value). */
export const rawNumber: fc.Arbitrary<Raw> = fc
  .constantFrom(
    '1e400',
    '-1e400',
    '-0',
    '123456789012345678901234567890',
    '0.0000000000000000000000000001',
    '1E308',
    '9007199254740993',
    '1.0',
    '0e0',
  )
  .map((text) => new Raw(text));

export const hugeString = (length: number): Raw => new Raw(JSON.stringify('x'.repeat(length)), `hugeString(${length})`);

/** `depth` levels of `[` (or `{"a":`) around a 1: what a recursive reader cannot survive. */
export const nested = (depth: number, kind: 'array' | 'object'): Raw =>
  kind === 'array'
    ? new Raw(`${'['.repeat(depth)}1${']'.repeat(depth)}`, `nested(${depth}, 'array')`)
    : new Raw(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, `nested(${depth}, 'object')`);

/** A flat array of `length` zeros, or an object of `length` keys: wide instead of deep (a wide body once took the API's memory). */
export const wide = (length: number, kind: 'array' | 'object'): Raw =>
  kind === 'array'
    ? new Raw(`[${'0,'.repeat(Math.max(0, length - 1))}0]`, `wide(${length}, 'array')`)
    : new Raw(`{${Array.from({ length }, (_, i) => `"k${i}":0`).join(',')}}`, `wide(${length}, 'object')`);

/** A value to put where another was: same-looking, another type, or poison. */
export const weirdValue: fc.Arbitrary<Body> = fc.oneof(
  { arbitrary: weirdQuantity, weight: 4 },
  { arbitrary: weirdString, weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Body>, weight: 2 },
  { arbitrary: fc.constantFrom<Body>(null, true, false, 0, -1, 1.5, 2 ** 53 + 2, 1e308, [], {}, [null], [{}], { '': null }), weight: 2 },
  { arbitrary: rawNumber, weight: 1 },
  { arbitrary: fc.constantFrom(300, 70_000).map(hugeString), weight: 1 },
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 50, max: 5000 }), fc.constantFrom<'array' | 'object'>('array', 'object'))
      .map(([d, k]) => nested(d, k)),
    weight: 1,
  },
);

export const weirdKey: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_KEYS), weight: 3 },
  {
    arbitrary: fc.constantFrom(
      'apiVersion',
      'kind',
      'metadata',
      'spec',
      'status',
      'request',
      'uid',
      'name',
      'namespace',
      'hard',
      'limits',
      'requests',
      'cpu',
      'memory',
      'pods',
      'resources',
      'object',
      'oldObject',
      'dryRun',
      'requestId',
    ),
    weight: 3,
  },
  { arbitrary: weirdString, weight: 2 },
);

// ------------------------------------------------------------------ mutations

export type Mutation =
  | { readonly op: 'delete'; readonly at: number }
  | { readonly op: 'set'; readonly at: number; readonly value: Body }
  | { readonly op: 'add'; readonly at: number; readonly key: string; readonly value: Body }
  | { readonly op: 'wrap'; readonly at: number; readonly into: 'array' | 'object' | 'string' }
  | { readonly op: 'duplicate'; readonly at: number; readonly value: Body };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('delete' as const), at: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: weirdValue }), weight: 5 },
  // null where an object or a string was: what a hand-written client sends for "nothing".
  { arbitrary: fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: fc.constant(null) }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('add' as const), at: fc.nat(), key: weirdKey, value: weirdValue }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant('wrap' as const),
      at: fc.nat(),
      into: fc.constantFrom<'array' | 'object' | 'string'>('array', 'object', 'string'),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ op: fc.constant('duplicate' as const), at: fc.nat(), value: weirdValue }), weight: 1 },
);

/**
 * Applies mutations one after the other; `at` picks a node (modulo the node count of the
 * body as it is then), so every mutation lands somewhere and shrinking keeps it meaningful.
 */
export function mutate(body: Body, mutations: readonly Mutation[]): Body {
  let current: Body = body;
  for (const m of mutations) {
    const all = pathsOf(current);
    if (m.op === 'add' || m.op === 'duplicate') {
      const containers = all.filter((p) => isRecord(getAt(current, p)) || (m.op === 'add' && Array.isArray(getAt(current, p))));
      const path = containers[m.at % Math.max(containers.length, 1)];
      if (!path) continue;
      current =
        updateAt(current, path, (node) => {
          if (Array.isArray(node)) return [...(node as readonly Body[]), m.value];
          const entries = Object.entries(node as Record<string, Body>);
          if (m.op === 'add') return fromEntries([...entries, [m.key, m.value]]);
          // The first key again, later in the text, with another value.
          const first = entries[0];
          return first ? new DupKeys([...entries, [first[0], m.value]]) : node;
        }) ?? null;
      continue;
    }
    const path = all[m.at % all.length] ?? [];
    switch (m.op) {
      case 'delete':
        current = path.length === 0 ? null : (updateAt(current, path, () => undefined) ?? null);
        break;
      case 'set':
        current = updateAt(current, path, () => m.value) ?? null;
        break;
      case 'wrap':
        current =
          updateAt(current, path, (node) => (m.into === 'array' ? [node] : m.into === 'object' ? { value: node } : serialize(node))) ??
          null;
        break;
      default: {
        const never: never = m;
        throw new Error(`unknown mutation ${JSON.stringify(never)}`);
      }
    }
  }
  return current;
}

// ------------------------------------------------------------------ query values

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** RFC 3339-shaped times with every field pushed past its range, and ISO 8601 forms that are not RFC 3339. */
export const weirdTime: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc
      .record({
        year: fc.oneof(fc.integer({ min: 1970, max: 2100 }), fc.integer({ min: 0, max: 99_999 })),
        month: fc.integer({ min: 0, max: 13 }),
        day: fc.integer({ min: 0, max: 32 }),
        hour: fc.integer({ min: 0, max: 25 }),
        minute: fc.integer({ min: 0, max: 61 }),
        second: fc.integer({ min: 0, max: 61 }),
        fraction: fc.option(digits(1, 12)),
        zone: fc.oneof(
          fc.constantFrom('Z', 'z', '', '+00:00', '-00:00', ' UTC'),
          fc
            .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 60 }), fc.constantFrom(':', ''))
            .map(([s, h, m, sep]) => `${s}${pad(h, 2)}${sep}${pad(m, 2)}`),
        ),
      })
      .map(
        (t) =>
          `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)}T${pad(t.hour, 2)}:${pad(t.minute, 2)}:${pad(t.second, 2)}${t.fraction === null ? '' : `.${t.fraction}`}${t.zone}`,
      ),
    weight: 4,
  },
  {
    arbitrary: fc.constantFrom(
      '2026',
      '2026-11',
      '2026-11-23',
      '2026-W47',
      '2026-W47-1',
      '2026-327',
      '20261123',
      '20261123T140300Z',
      '2026-11-23T14',
      '2026-11-23T14:03',
      '2026-11-23T14:03Z',
      '2026-11-23 14:03:00Z',
      '2026-11-23T14:03:00+14:00',
      '2026-11-23T14:03:00-15:59',
      '2026-11-23T14:03:00+16:00',
      '2026-11-23T14:03:00-23:59',
      '0001-01-01T00:00:00Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      '294277-01-01T00:00:00Z',
      '+002026-11-23T14:03:00Z',
      '-002026-11-23T14:03:00Z',
      '2026-02-29T00:00:00Z',
      '2024-02-29T00:00:00Z',
      '2026-11-23T24:00:00Z',
      '2026-11-23T23:59:60Z',
      'T14:03:00Z',
      'now',
      'infinity',
      'epoch',
      'allballs',
    ),
    weight: 2,
  },
  { arbitrary: weirdString, weight: 1 },
);

/** Positions, limits and cursors: in range, just past it, far past PostgreSQL's bigint. */
export const weirdInteger: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: digits(1, 25), weight: 3 },
  {
    arbitrary: fc.constantFrom(
      '0',
      '1',
      '1000',
      '1001',
      '-1',
      '+1',
      '1.5',
      '1e3',
      '0x10',
      '01',
      '9223372036854775807',
      '9223372036854775808',
      '9999999999999999999',
      '18446744073709551616',
      '9007199254740993',
      ' 1',
      '',
      'NaN',
    ),
    weight: 2,
  },
  { arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), weight: 1 },
  { arbitrary: weirdString, weight: 1 },
);

/**
 * Percent-encodes the UTF-8 of a string (a lone surrogate becomes U+FFFD's bytes, where
 * encodeURIComponent would throw). With `raw`, printable ASCII other than the delimiters
 * goes as is, so `%`, `+` and friends reach the server undecoded.
 */
export function percentEncode(value: string, raw = false): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const ch = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(ch) || (raw && byte > 0x20 && byte < 0x7f && !'#&=/?'.includes(ch))) out += ch;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Path segments: encoded weird strings, and raw escapes that do not decode (or decode to a slash). */
export const weirdSegment: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: weirdString.filter((s) => s.length > 0).map((s) => percentEncode(s)), weight: 3 },
  {
    arbitrary: fc.constantFrom(
      '%',
      '%f',
      '%ff',
      '%00',
      '%2F',
      '%2f',
      '%2e',
      '%2e%2e',
      '..',
      '.',
      'a%2Fb',
      '%C0%AF',
      '%ED%A0%80',
      '%E2%80%AE',
      ';',
      'a;b=c',
      '*',
      '~',
      '%20',
      '+',
      'A',
      '-a',
      'a..b',
      'x'.repeat(64),
      'x'.repeat(254),
      'fz-paths',
      'q0',
      'default',
    ),
    weight: 2,
  },
  { arbitrary: fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?$/), weight: 1 },
);
