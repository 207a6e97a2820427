import { describe, expect, it } from 'vitest';
import type { LabelSelector } from './label-selector.js';
import { parseLabelSelector } from './label-selector-text.js';

describe('parseLabelSelector (labels.Parse, then ParseToLabelSelector)', () => {
  it.each<readonly [string, string, LabelSelector]>([
    ['the empty string selects everything', '', {}],
    ['only blanks select everything too', '  \t', {}],
    ['= is an exact match', 'env=prod', { matchLabels: { env: 'prod' } }],
    ['== is the same', 'env==prod', { matchLabels: { env: 'prod' } }],
    ['= with nothing after it matches the empty value', 'env=', { matchLabels: { env: '' } }],
    ['!= is NotIn of one value', 'tier!=cache', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['cache'] }] }],
    [
      'in is a set, sorted and without repeats',
      'team in (b,a,b)',
      { matchExpressions: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] },
    ],
    ['notin', 'team notin (a)', { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] }],
    ['a bare key is Exists', 'legacy', { matchExpressions: [{ key: 'legacy', operator: 'Exists' }] }],
    ['!key is DoesNotExist', '!legacy', { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] }],
    [
      'a leading comma in a set adds the empty value',
      'team in (,a)',
      { matchExpressions: [{ key: 'team', operator: 'In', values: ['', 'a'] }] },
    ],
    [
      'a trailing comma in a set adds the empty value',
      'team in (a,)',
      { matchExpressions: [{ key: 'team', operator: 'In', values: ['', 'a'] }] },
    ],
    [
      'a keyword is only a word where a value stands',
      'op in (in,notin)',
      { matchExpressions: [{ key: 'op', operator: 'In', values: ['in', 'notin'] }] },
    ],
    [
      'requirements keep their order, labels apart',
      'env=prod,tier!=cache,team in (a,b),!legacy',
      {
        matchLabels: { env: 'prod' },
        matchExpressions: [
          { key: 'tier', operator: 'NotIn', values: ['cache'] },
          { key: 'team', operator: 'In', values: ['a', 'b'] },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      },
    ],
    [
      'blanks around tokens are ignored',
      ' env = prod , team  in ( a , b ) ',
      { matchLabels: { env: 'prod' }, matchExpressions: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] },
    ],
    [
      'a prefixed key',
      'kubernetes.io/metadata.name notin (kube-system)',
      { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }] },
    ],
    [
      'a second = on one key stays a requirement of its own (both must hold)',
      'a=1,a=2',
      { matchLabels: { a: '1' }, matchExpressions: [{ key: 'a', operator: 'In', values: ['2'] }] },
    ],
  ])('%s: %j', (_name, text, expected) => {
    expect(parseLabelSelector(text)).toEqual({ ok: true, selector: expected });
  });

  it.each<readonly [string, string, string]>([
    ['an empty set', 'team in ()', "found ')', expected: ',', or identifier"],
    ['a set without parentheses', 'team in a', "found 'a', expected: '('"],
    ['an unclosed set', 'team in (a', "found 'end of string', expected: ',' or ')'"],
    ['a trailing comma', 'env=prod,', "found 'end of string', expected: identifier after ','"],
    ['a leading comma', ',env=prod', "found ',', expected: !, identifier, or 'end of string'"],
    ['two requirements without a comma', 'env=prod team', "found 'team', expected: ',' or 'end of string'"],
    ['! without a key', '!', "found 'end of string', expected: identifier"],
    ['an operator a LabelSelector cannot hold', 'replicas>1', '"gt" isn\'t supported in label selectors'],
    ['a keyword as a key', 'in=x', "found 'in', expected: !, identifier, or 'end of string'"],
    ['a key Kubernetes refuses', '-env=prod', 'invalid label key "-env"'],
    ['a value Kubernetes refuses', 'env=a/b', 'invalid label value: "a/b": at key: "env"'],
    ['a bad value in a set', 'env in (ok,-bad)', 'invalid label value: "-bad": at key: "env"'],
    ['an operator where a value belongs', 'env==!', "found '!', expected: identifier"],
  ])('refuses %s: %j', (_name, text, message) => {
    const parsed = parseLabelSelector(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(`unable to parse requirement: ${message}`);
  });
});
