import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NAME_PART_MSG, triples, type Cause } from '../validation/spec-helpers.js';
import {
  type LabelSelector,
  type LabelSelectorRequirement,
  type LabelSet,
  labelSelectorMatches,
  validateLabelSelector,
} from './label-selector.js';

const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('labelSelectorMatches (LabelSelectorAsSelector, then Matches)', () => {
  const tier = (operator: LabelSelectorRequirement['operator'], values?: string[]): LabelSelector => ({
    matchExpressions: [{ key: 'example.com/tier', operator, ...(values ? { values } : {}) }],
  });
  it.each<readonly [string, LabelSelector | undefined, LabelSet, boolean]>([
    ['an absent selector selects nothing', undefined, { a: 'b' }, false],
    ['an empty selector selects everything', {}, {}, true],
    ['an empty selector selects labelled objects too', {}, { a: 'b' }, true],
    ['matchLabels: the same value', { matchLabels: { a: 'b' } }, { a: 'b', c: 'd' }, true],
    ['matchLabels: another value', { matchLabels: { a: 'b' } }, { a: 'c' }, false],
    ['matchLabels: the label missing', { matchLabels: { a: 'b' } }, {}, false],
    ['matchLabels: an empty value matches an empty label only', { matchLabels: { a: '' } }, { a: '' }, true],
    ['In: one of the values', tier('In', ['web', 'db']), { 'example.com/tier': 'db' }, true],
    ['In: none of the values', tier('In', ['web', 'db']), { 'example.com/tier': 'cache' }, false],
    ['In: the label missing', tier('In', ['web']), {}, false],
    ['NotIn: the label missing', tier('NotIn', ['web']), {}, true],
    ['NotIn: another value', tier('NotIn', ['web']), { 'example.com/tier': 'db' }, true],
    ['NotIn: one of the values', tier('NotIn', ['web']), { 'example.com/tier': 'web' }, false],
    ['Exists: present, even empty', tier('Exists'), { 'example.com/tier': '' }, true],
    ['Exists: missing', tier('Exists'), { tier: 'web' }, false],
    ['DoesNotExist: missing', tier('DoesNotExist'), { tier: 'web' }, true],
    ['DoesNotExist: present', tier('DoesNotExist'), { 'example.com/tier': 'web' }, false],
    [
      'matchLabels and expressions must all hold',
      { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
      { team: 'a', env: 'dev' },
      false,
    ],
    ['a label named like an object property is only a label', { matchLabels: { constructor: 'x' } }, {}, false],
  ])('%s', (_name, selector, labels, expected) => {
    expect(labelSelectorMatches(selector, labels)).toBe(expected);
  });

  const key = fc.constantFrom('a', 'b', 'example.com/c');
  const value = fc.constantFrom('', 'x', 'y', 'z');
  const labels = fc.dictionary(key, value);
  const values = fc.array(value, { minLength: 1, maxLength: 3 });
  const requirement: fc.Arbitrary<LabelSelectorRequirement> = fc.oneof(
    fc.record({ key, operator: fc.constantFrom('In' as const, 'NotIn' as const), values }),
    fc.record({ key, operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) }),
  );

  it('NotIn is the complement of In, DoesNotExist of Exists', () => {
    fc.assert(
      fc.property(key, values, labels, (k, vs, l) => {
        expect(labelSelectorMatches({ matchExpressions: [{ key: k, operator: 'NotIn', values: vs }] }, l)).toBe(
          !labelSelectorMatches({ matchExpressions: [{ key: k, operator: 'In', values: vs }] }, l),
        );
        expect(labelSelectorMatches({ matchExpressions: [{ key: k, operator: 'DoesNotExist' }] }, l)).toBe(
          !labelSelectorMatches({ matchExpressions: [{ key: k, operator: 'Exists' }] }, l),
        );
      }),
    );
  });

  it('requirements are ANDed, and matchLabels {k: v} is In k [v]', () => {
    fc.assert(
      fc.property(fc.array(requirement, { maxLength: 4 }), key, value, labels, (requirements, k, v, l) => {
        expect(labelSelectorMatches({ matchExpressions: requirements }, l)).toBe(
          requirements.every((r) => labelSelectorMatches({ matchExpressions: [r] }, l)),
        );
        expect(labelSelectorMatches({ matchLabels: { [k]: v } }, l)).toBe(
          labelSelectorMatches({ matchExpressions: [{ key: k, operator: 'In', values: [v] }] }, l),
        );
      }),
    );
  });
});

describe('validateLabelSelector (ValidateLabelSelector)', () => {
  const path = 'spec.selector';
  it.each<readonly [string, LabelSelector, readonly Cause[]]>([
    [
      'a valid selector',
      { matchLabels: { 'example.com/team': 'a' }, matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev', ''] }] },
      [],
    ],
    [
      'In without values',
      { matchExpressions: [{ key: 'env', operator: 'In' }] },
      [
        [
          'FieldValueRequired',
          'spec.selector.matchExpressions[0].values',
          "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ],
      ],
    ],
    [
      'NotIn with an empty list of values',
      { matchExpressions: [{ key: 'env', operator: 'NotIn', values: [] }] },
      [
        [
          'FieldValueRequired',
          'spec.selector.matchExpressions[0].values',
          "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ],
      ],
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'env', operator: 'Exists', values: ['x'] }] },
      [
        [
          'FieldValueForbidden',
          'spec.selector.matchExpressions[0].values',
          "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ],
      ],
    ],
    [
      'an operator Kubernetes does not know',
      { matchExpressions: [{ key: 'env', operator: 'Equals' as LabelSelectorRequirement['operator'], values: ['x'] }] },
      [['FieldValueInvalid', 'spec.selector.matchExpressions[0].operator', 'Invalid value: "Equals": not a valid selector operator']],
    ],
    [
      'a key that is not a qualified name, and a value that is not a label value',
      { matchExpressions: [{ key: '-env', operator: 'In', values: ['ok', 'not ok'] }] },
      [
        ['FieldValueInvalid', 'spec.selector.matchExpressions[0].key', `Invalid value: "-env": ${NAME_PART_MSG}`],
        ['FieldValueInvalid', 'spec.selector.matchExpressions[0].values[1]', `Invalid value: "not ok": ${LABEL_VALUE_MSG}`],
      ],
    ],
    [
      'matchLabels are labels',
      { matchLabels: { '-team': 'a' } },
      [['FieldValueInvalid', 'spec.selector.matchLabels', `Invalid value: "-team": ${NAME_PART_MSG}`]],
    ],
  ])('%s', (_name, selector, expected) => {
    expect(triples(validateLabelSelector(selector, path))).toEqual(expected);
  });
});
