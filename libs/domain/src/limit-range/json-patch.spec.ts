import { describe, expect, it } from 'vitest';
import { InvariantViolation } from '../assert.js';
import { applyJsonPatch, deepEqualJson, escapePointerToken, jsonPointer, type JsonPatchOperation } from './json-patch.js';
import { deepFreeze } from './spec-fixtures.js';

describe('JSON pointer escaping', () => {
  it.each([
    ['kubernetes.io/limit-ranger', 'kubernetes.io~1limit-ranger'],
    ['a~b', 'a~0b'],
    ['~/', '~0~1'],
    ['cpu', 'cpu'],
  ])('escapes %s as %s', (raw, escaped) => expect(escapePointerToken(raw)).toBe(escaped));

  it('builds a pointer from raw tokens', () => {
    expect(jsonPointer('metadata', 'annotations', 'kubernetes.io/limit-ranger')).toBe('/metadata/annotations/kubernetes.io~1limit-ranger');
    expect(jsonPointer('spec', 'containers', 0, 'resources')).toBe('/spec/containers/0/resources');
  });
});

describe('applyJsonPatch', () => {
  const doc = deepFreeze({ metadata: { annotations: { 'a/b': 'x' } }, list: [1, 2, 3] });

  it.each<[string, JsonPatchOperation[], unknown]>([
    [
      'adds a member',
      [{ op: 'add', path: '/metadata/name', value: 'n' }],
      { metadata: { annotations: { 'a/b': 'x' }, name: 'n' }, list: [1, 2, 3] },
    ],
    [
      'adds over an existing member',
      [{ op: 'add', path: '/metadata/annotations/a~1b', value: 'y' }],
      { metadata: { annotations: { 'a/b': 'y' } }, list: [1, 2, 3] },
    ],
    [
      'replaces an escaped member',
      [{ op: 'replace', path: '/metadata/annotations/a~1b', value: 'z' }],
      { metadata: { annotations: { 'a/b': 'z' } }, list: [1, 2, 3] },
    ],
    ['removes a member', [{ op: 'remove', path: '/metadata/annotations/a~1b' }], { metadata: { annotations: {} }, list: [1, 2, 3] }],
    [
      'inserts into an array',
      [{ op: 'add', path: '/list/1', value: 9 }],
      { metadata: { annotations: { 'a/b': 'x' } }, list: [1, 9, 2, 3] },
    ],
    ['appends with -', [{ op: 'add', path: '/list/-', value: 4 }], { metadata: { annotations: { 'a/b': 'x' } }, list: [1, 2, 3, 4] }],
    ['passes a matching test', [{ op: 'test', path: '/list/0', value: 1 }], doc],
  ])('%s, leaving the input alone', (_name, patch, expected) => {
    expect(applyJsonPatch(doc, patch)).toEqual(expected);
  });

  it.each<[string, JsonPatchOperation]>([
    ['a replace of a missing member', { op: 'replace', path: '/metadata/missing', value: 1 }],
    ['an add below a missing member', { op: 'add', path: '/spec/containers', value: [] }],
    ['a failed test', { op: 'test', path: '/list/0', value: 2 }],
    ['an index past the end', { op: 'replace', path: '/list/3', value: 0 }],
  ])('refuses %s', (_name, op) => {
    expect(() => applyJsonPatch(doc, [op])).toThrow(InvariantViolation);
  });

  it('compares JSON ignoring key order', () => {
    expect(deepEqualJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(deepEqualJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
  });
});
