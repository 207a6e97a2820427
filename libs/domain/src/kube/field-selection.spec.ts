import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { each, keys, mergeSelections, PRESENCE, selectFields, WHOLE, type FieldSelection } from './field-selection.js';
import { ANY_KIND_FIELDS, fieldsRead, POD_FIELDS } from './fields-read.js';

/** Selections over a few key names, so that they meet the generated values' keys. */
const NAMES = ['a', 'b', 'spec', 'metadata', '__proto__', 'constructor'];
const selectionArb: fc.Arbitrary<FieldSelection> = fc.letrec<{ selection: FieldSelection }>((tie) => ({
  selection: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(WHOLE),
    fc.constant(PRESENCE),
    fc.dictionary(fc.constantFrom(...NAMES.filter((n) => n !== '__proto__')), tie('selection'), { maxKeys: 3 }).map((k) => keys(k)),
    tie('selection').map(each),
  ),
})).selection;
const valueArb = fc.jsonValue({ maxDepth: 4 }).chain((v) => fc.constant(v));
const keyedValueArb = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 1 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...NAMES), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('selecting the fields admission reads', () => {
  it('keeps what is selected and drops the rest', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: { a: 'b' }, managedFields: [{}] },
      spec: { containers: [{ name: 'c', image: 'x', env: [{ name: 'A' }], resources: { requests: { cpu: '1' } } }] },
    };
    expect(selectFields(pod, POD_FIELDS)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] },
    });
  });

  it.each<[string, unknown, FieldSelection, unknown]>([
    ['an array where an object is selected: an empty array', [1, 2], keys({ a: WHOLE }), []],
    ['an object where an array is selected: an empty object', { a: 1 }, each(WHOLE), {}],
    ['a scalar where an object is selected: the scalar', 'text', keys({ a: WHOLE }), 'text'],
    ['null: null', null, keys({ a: WHOLE }), null],
    ['presence of an object: {}', { a: 1 }, PRESENCE, {}],
    ['presence of an array: []', [1], PRESENCE, []],
    ['presence of a number: the number', 0, PRESENCE, 0],
    ['a key the object lacks: absent', { b: 1 }, keys({ a: WHOLE }), {}],
    ['an own __proto__ key is not selected by an inherited one', JSON.parse('{"__proto__": {"a": 1}}'), keys({ constructor: WHOLE }), {}],
  ])('keeps the type of a value of another shape: %s', (_what, value, selection, selected) => {
    expect(selectFields(value, selection)).toEqual(selected);
  });

  it('is idempotent (law)', () => {
    fc.assert(
      fc.property(keyedValueArb, selectionArb, (value, selection) => {
        expect(selectFields(selectFields(value, selection), selection)).toEqual(selectFields(value, selection));
      }),
    );
  });

  it('selects through a merged selection what either selects (law): the edge records the union and each kind is read from it', () => {
    fc.assert(
      fc.property(keyedValueArb, selectionArb, selectionArb, (value, a, b) => {
        const union = selectFields(value, mergeSelections(a, b));
        expect(selectFields(union, a)).toEqual(selectFields(value, a));
        expect(selectFields(union, b)).toEqual(selectFields(value, b));
      }),
    );
  });

  it('reads every kind through the union of all kinds (law)', () => {
    const kinds = [
      { group: '', resource: 'pods' },
      { group: '', resource: 'services' },
      { group: '', resource: 'persistentvolumeclaims' },
      { group: '', resource: 'namespaces' },
      { group: 'resource.k8s.io', resource: 'resourceclaims' },
      { group: 'quota-ledger.io', resource: 'ledgerquotas' },
      { group: 'apps', resource: 'deployments' },
    ];
    fc.assert(
      fc.property(valueArb, fc.constantFrom(...kinds), (value, kind) => {
        expect(selectFields(selectFields(value, ANY_KIND_FIELDS), fieldsRead(kind))).toEqual(selectFields(value, fieldsRead(kind)));
      }),
    );
  });
});
