import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ANY_KIND_FIELDS, each, fieldsRead, keys, PRESENCE, selectFields, WHOLE, type FieldSelection } from '@quota/domain';
import { scanJson } from './json-scan.js';
import { materialize, SelectionTooLarge, selectionBudget } from './json-select.js';

const LOOSE = { depthMax: 64, valuesMax: 10_000_000 };
const NAMES = ['a', 'b', 'spec', 'metadata', 'constructor', 'toString'];
const selectionArb: fc.Arbitrary<FieldSelection> = fc.letrec<{ selection: FieldSelection }>((tie) => ({
  selection: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(WHOLE),
    fc.constant(PRESENCE),
    fc.dictionary(fc.constantFrom(...NAMES), tie('selection'), { maxKeys: 3 }).map((k) => keys(k)),
    tie('selection').map(each),
  ),
})).selection;
const valueArb = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...NAMES, '__proto__'), tie('value'), { maxKeys: 4 }),
  ),
})).value;
/** JSON text as JSON.stringify writes it, or spread over lines with indentation. */
const textOf = (value: unknown, spaced: boolean): string => JSON.stringify(value, null, spaced ? 2 : undefined) ?? 'null';

/** The selected part as the edge reads it: scanned with `scanned`, then materialized with `selection`. */
function read(text: string, selection: FieldSelection, scanned = selection): unknown {
  const bytes = Buffer.from(text, 'utf8');
  const scan = scanJson(bytes, LOOSE, scanned);
  if (scan.problem || !scan.found) throw new Error(`not scanned: ${JSON.stringify(scan.problem)}`);
  return materialize(bytes, scan.found, selection, 'body', { bytes: Number.MAX_SAFE_INTEGER });
}

describe('reading the selected fields of a body without parsing the rest', () => {
  it('gives what selecting from the parsed body gives (law)', () => {
    fc.assert(
      fc.property(valueArb, selectionArb, fc.boolean(), (value, selection, spaced) => {
        const text = textOf(value, spaced);
        expect(read(text, selection)).toEqual(selectFields(JSON.parse(text), selection));
      }),
      { numRuns: 500 },
    );
  });

  it("reads each kind's fields from a scan of every kind's (law): the edge scans before it knows the kind", () => {
    const kinds = [
      { group: '', resource: 'pods' },
      { group: '', resource: 'namespaces' },
      { group: '', resource: 'persistentvolumeclaims' },
      { group: 'resource.k8s.io', resource: 'resourceclaims' },
    ];
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: { a: 'b' }, annotations: { 'kubernetes.io/limit-ranger': 'x', big: 'y' } },
      spec: { containers: [{ name: 'c', env: [1], resources: { requests: { cpu: '1' } } }] },
    };
    fc.assert(
      fc.property(fc.oneof(fc.constant(pod as unknown), valueArb), fc.constantFrom(...kinds), (value, kind) => {
        const text = textOf(value, false);
        expect(read(text, fieldsRead(kind), ANY_KIND_FIELDS)).toEqual(selectFields(JSON.parse(text), fieldsRead(kind)));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the last of a repeated key, as JSON.parse does', () => {
    const text = '{"a":{"b":1},"a":{"b":2,"c":3},"b":[1],"b":{"x":1}}';
    const selection = keys({ a: keys({ b: WHOLE }), b: each(WHOLE) });
    expect(read(text, selection)).toEqual({ a: { b: 2 }, b: {} });
    expect(read(text, selection)).toEqual(selectFields(JSON.parse(text), selection));
  });

  it('decodes escaped keys as JSON.parse does', () => {
    expect(read('{"sp\\u0065c":{"\\u0061":1}}', keys({ spec: keys({ a: WHOLE }) }))).toEqual({ spec: { a: 1 } });
  });

  it.each<[string, FieldSelection, string, string]>([
    [
      'a value over its size',
      keys({ a: { whole: true, maxBytes: 8 } }),
      '{"a":["0123456789"]}',
      'body.a: Too long: 14 bytes: must have at most 8 bytes',
    ],
    [
      'a list over its items',
      keys({ a: { items: WHOLE, maxItems: 2 } }),
      '{"a":[1,2,3]}',
      'body.a: Too many: 3: must have at most 2 items',
    ],
  ])('refuses %s, naming it', (_what, selection, text, message) => {
    expect(() => read(text, selection)).toThrow(
      new SelectionTooLarge(message.split(': ')[0] as string, message.slice(message.indexOf(': ') + 2)),
    );
  });

  it('reads a string whole however long it is: it is a copy, and its reader holds it to its length', () => {
    expect(read(JSON.stringify({ a: 'x'.repeat(100_000) }), keys({ a: { whole: true, maxBytes: 8 } }))).toEqual({ a: 'x'.repeat(100_000) });
  });

  it('refuses what is selected of one body past the budget in all', () => {
    const text = JSON.stringify({ a: ['x'.repeat(40_000)], b: ['y'.repeat(40_000)] });
    const bytes = Buffer.from(text);
    const selection = keys({ a: WHOLE, b: WHOLE });
    const found = scanJson(bytes, LOOSE, selection).found;
    expect(() => materialize(bytes, found as never, selection, 'body', { bytes: 50_000 })).toThrow(/take more than/);
    expect(materialize(bytes, found as never, selection, 'body', selectionBudget())).toEqual(JSON.parse(text));
  });
});

describe('the scan as a JSON validator', () => {
  const mutated = fc
    .tuple(
      valueArb,
      fc.nat(),
      fc.constantFrom('', ',', ']', '}', ':', '"', '\\', 'x', '-', '0', '.', 'e', ' ', '\u0001', 'tru', '{', '['),
      fc.nat({ max: 3 }),
    )
    .map(([value, at, insert, cut]) => {
      const text = textOf(value, false);
      const i = at % (text.length + 1);
      return text.slice(0, i) + insert + text.slice(i + cut);
    });

  it('refuses exactly what JSON.parse refuses (law), strings it cannot store aside', () => {
    fc.assert(
      fc.property(mutated, (text) => {
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        const problem = scanJson(Buffer.from(text, 'utf8'), LOOSE).problem;
        if (problem && !problem.syntax) return; // NUL or a lone surrogate: valid JSON, refused as unstorable
        expect(problem === undefined).toBe(parses || text.length === 0);
      }),
      { numRuns: 2000 },
    );
  });
});
