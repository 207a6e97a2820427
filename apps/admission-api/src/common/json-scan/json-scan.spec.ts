import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanJson } from './json-scan.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const LOOSE = { depthMax: 1000, valuesMax: 10_000_000 };

/** The reference: values and depth of a parsed document, counted by walking it. */
function measure(value: unknown): { values: number; depth: number } {
  if (typeof value !== 'object' || value === null) return { values: 1, depth: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  let values = 1;
  let depth = 0;
  for (const child of children) {
    const m = measure(child);
    values += m.values;
    depth = Math.max(depth, m.depth);
  }
  return { values, depth: depth + 1 };
}

// Documents as JSON.stringify writes them, and the same with whitespace between tokens.
const documents = fc.oneof(
  fc.json({ depthSize: 'medium' }),
  fc.jsonValue({ depthSize: 'medium' }).map((v) => JSON.stringify(v, null, 2)),
);

describe('scanJson', () => {
  it('counts exactly the values and levels JSON.parse finds: the limits hold at the count and refuse one below it', () => {
    fc.assert(
      fc.property(documents, (text) => {
        const { values, depth } = measure(JSON.parse(text));
        expect(scanJson(bytes(text), { depthMax: Math.max(depth, 1), valuesMax: values }).problem).toBeUndefined();
        expect(scanJson(bytes(text), { depthMax: Math.max(depth, 1), valuesMax: values - 1 }).problem?.message).toMatch(/holds more than/);
        if (depth > 1)
          expect(scanJson(bytes(text), { depthMax: depth - 1, valuesMax: values }).problem?.message).toMatch(/nested more than/);
      }),
      { numRuns: 500 },
    );
  });

  it('finds a NUL or an unpaired surrogate wherever it is escaped, and names the field as a path', () => {
    const bad = fc.constantFrom('\u0000', '\ud800', '\udfff', 'a\ud83dz');
    fc.assert(
      fc.property(fc.jsonValue({ depthSize: 'small' }), bad, (value, poison) => {
        // After any clean document, as JSON.stringify escapes it.
        const text = JSON.stringify({ doc: value, x: [{ y: `pre${poison}post` }] });
        const problem = scanJson(bytes(text), LOOSE).problem;
        expect(problem).toEqual({ field: 'body.x[0].y', message: 'must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate' });
      }),
      { numRuns: 200 },
    );
  });

  it('accepts a valid surrogate pair, escaped or as UTF-8, and a NUL spelled without the escape', () => {
    expect(scanJson(bytes(JSON.stringify({ a: '😀' })), LOOSE).problem).toBeUndefined();
    expect(scanJson(bytes('{"a":"\\ud83d\\ude00"}'), LOOSE).problem).toBeUndefined();
    expect(scanJson(bytes('{"a":"\\\\u0000"}'), LOOSE).problem).toBeUndefined();
  });

  it.each([
    ['{"a\\u0000b":1}', 'body', 'has a key that'],
    ['{"m":{"k\\udc00":1}}', 'body.m', 'has a key that'],
    ['{"m":{"k":[1,{"z":"\\u0000"}]}}', 'body.m.k[1].z', 'must not contain'],
    ['"\\u0000"', 'body', 'must not contain'],
    ['[[[[1]]]]', 'body[0][0][0]', 'nested more than 3'],
  ])('reports %s at %s', (text, field, message) => {
    const problem = scanJson(bytes(text), { depthMax: text.startsWith('[') ? 3 : 64, valuesMax: 100 }).problem;
    expect(problem?.field).toBe(field);
    expect(problem?.message).toContain(message);
  });

  it('refuses a 3.2 MB flat array of 1.6 million zeros at the values limit, without parsing it', () => {
    const text = `{"junk":[${'0,'.repeat(1_600_000)}0]}`;
    expect(scanJson(bytes(text), { depthMax: 64, valuesMax: 200_000 }).problem).toEqual({
      field: 'body.junk[199998]',
      message: 'holds more than 200000 values',
    });
  });

  it('never throws on bytes that are not JSON', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (raw) => {
        scanJson(Buffer.from(raw), { depthMax: 4, valuesMax: 20 });
      }),
    );
  });
});
