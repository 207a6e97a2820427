import { assert } from '../assert.js';

/**
 * One RFC 6902 JSON Patch operation, as an admission webhook returns it (base64 of the
 * JSON array, `patchType: JSONPatch`). Only the operations LimitRanger needs, plus `test`.
 */
export type JsonPatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/** One reference token of an RFC 6901 JSON pointer: `~` → `~0`, `/` → `~1`. */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Builds a JSON pointer from raw (unescaped) tokens. */
export function jsonPointer(...tokens: readonly (string | number)[]): string {
  return tokens.map((t) => `/${escapePointerToken(String(t))}`).join('');
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  assert(path.startsWith('/'), `JSON pointer must start with "/": ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep copy of JSON data (what the patch is applied to never changes). */
function clone(value: Json): Json {
  if (Array.isArray(value)) return value.map(clone);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)]));
  return value;
}

function arrayIndex(token: string, length: number, forAdd: boolean): number {
  if (forAdd && token === '-') return length;
  assert(/^(0|[1-9][0-9]*)$/.test(token), `invalid array index "${token}"`);
  const index = Number(token);
  assert(forAdd ? index <= length : index < length, `array index ${index} out of bounds`);
  return index;
}

function applyOne(document: Json, operation: JsonPatchOperation): Json {
  const tokens = parsePointer(operation.path);
  if (tokens.length === 0) {
    switch (operation.op) {
      case 'add':
      case 'replace':
        return clone(operation.value);
      case 'test':
        assert(deepEqualJson(document, operation.value), `test failed at ""`);
        return document;
      case 'remove':
        assert(false, 'cannot remove the whole document');
    }
  }
  let parent = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(parent)) parent = parent[arrayIndex(token, parent.length, false)];
    else {
      assert(isObject(parent) && Object.prototype.hasOwnProperty.call(parent, token), `path ${operation.path} does not exist`);
      parent = parent[token];
    }
  }
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) {
    const index = arrayIndex(last, parent.length, operation.op === 'add');
    switch (operation.op) {
      case 'add':
        parent.splice(index, 0, clone(operation.value));
        break;
      case 'replace':
        parent[index] = clone(operation.value);
        break;
      case 'remove':
        parent.splice(index, 1);
        break;
      case 'test':
        assert(deepEqualJson(parent[index], operation.value), `test failed at ${operation.path}`);
        break;
    }
    return document;
  }
  assert(isObject(parent), `path ${operation.path}: parent is not a container`);
  const exists = Object.prototype.hasOwnProperty.call(parent, last);
  switch (operation.op) {
    case 'add':
      parent[last] = clone(operation.value);
      break;
    case 'replace':
      assert(exists, `path ${operation.path} does not exist`);
      parent[last] = clone(operation.value);
      break;
    case 'remove':
      assert(exists, `path ${operation.path} does not exist`);
      delete parent[last];
      break;
    case 'test':
      assert(exists && deepEqualJson(parent[last], operation.value), `test failed at ${operation.path}`);
      break;
  }
  return document;
}

/**
 * Applies a JSON Patch to a copy of `document` (the input is never changed). A patch that
 * does not apply is a bug of whoever built it, so it fails an assertion.
 */
export function applyJsonPatch<T>(document: T, patch: readonly JsonPatchOperation[]): T {
  let result = clone(document);
  for (const operation of patch) result = applyOne(result, operation);
  return result as T;
}

/** Structural equality of JSON data; object key order does not matter. */
export function deepEqualJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqualJson(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqualJson(a[k], b[k]))
    );
  }
  return false;
}
