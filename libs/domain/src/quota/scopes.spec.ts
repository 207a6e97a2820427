import { describe, expect, it } from 'vitest';
import type { KubeObject, ScopedResourceSelectorRequirement } from '../kube/types.js';
import type { UsageEvaluator } from '../usage/evaluator.js';
import { quotaScopeRequirements } from '../scopes/facts.js';
import { matchesAllScopes, quotaMatchesObject } from './scopes.js';

/** An evaluator whose objects list, in `inScopes`, the scope names they satisfy. */
const scopeEvaluator = (charges: readonly string[]): UsageEvaluator => ({
  groupResource: { group: '', resource: 'widgets' },
  handles: () => true,
  matchingResources: (input) => input.filter((name) => charges.includes(name)),
  scopeFacts: (object) => Object.fromEntries(((object.inScopes as string[] | undefined) ?? []).map((scope) => [scope, true])),
  matchingScopes: (object, scopes) => scopes.filter((s) => ((object.inScopes as string[] | undefined) ?? []).includes(s.scopeName)),
  uncoveredQuotaScopes: () => [],
  constraints: () => [],
  usage: () => ({}),
});

const widget = (...inScopes: string[]): KubeObject => ({ metadata: { name: 'w' }, inScopes });

describe('quotaScopeRequirements', () => {
  it.each<[string, Parameters<typeof quotaScopeRequirements>[0], ScopedResourceSelectorRequirement[]]>([
    ['no spec at all gives no requirements', undefined, []],
    ['an empty spec gives no requirements', {}, []],
    [
      'plain scopes become Exists requirements, in order',
      { scopes: ['Terminating', 'BestEffort'] },
      [
        { scopeName: 'Terminating', operator: 'Exists' },
        { scopeName: 'BestEffort', operator: 'Exists' },
      ],
    ],
    [
      'selector expressions are kept as written',
      { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } },
      [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }],
    ],
    [
      'plain scopes come first, then the selector expressions',
      {
        scopes: ['NotTerminating'],
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'DoesNotExist' }] },
      },
      [
        { scopeName: 'NotTerminating', operator: 'Exists' },
        { scopeName: 'PriorityClass', operator: 'DoesNotExist' },
      ],
    ],
    [
      'a selector without expressions adds nothing',
      { scopes: ['BestEffort'], scopeSelector: {} },
      [{ scopeName: 'BestEffort', operator: 'Exists' }],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(quotaScopeRequirements(spec)).toEqual(expected);
  });
});

describe('matchesAllScopes', () => {
  const ev = scopeEvaluator(['count/widgets']);
  const req = (scopeName: string): ScopedResourceSelectorRequirement => ({ scopeName, operator: 'Exists' });

  it('matches any object when there are no requirements', () => {
    expect(matchesAllScopes(ev, widget(), [])).toBe(true);
  });
  it('matches when the object satisfies every requirement', () => {
    expect(matchesAllScopes(ev, widget('A', 'B'), [req('A'), req('B')])).toBe(true);
  });
  it('does not match when one requirement fails', () => {
    expect(matchesAllScopes(ev, widget('A'), [req('A'), req('B')])).toBe(false);
  });
  it('is not fooled by a repeated requirement that the object satisfies', () => {
    expect(matchesAllScopes(ev, widget('A'), [req('A'), req('A'), req('B')])).toBe(false);
  });
});

describe('quotaMatchesObject', () => {
  const ev = scopeEvaluator(['count/widgets', 'widgets']);

  it('applies when the quota limits something the evaluator charges and scopes match', () => {
    expect(quotaMatchesObject(ev, ['widgets', 'pods'], [], widget())).toBe(true);
  });
  it('does not apply when the quota limits nothing the evaluator charges', () => {
    expect(quotaMatchesObject(ev, ['pods', 'services'], [], widget())).toBe(false);
  });
  it('does not apply to a quota with no hard limits', () => {
    expect(quotaMatchesObject(ev, [], [], widget())).toBe(false);
  });
  it('does not apply when the object is outside the quota scopes', () => {
    expect(quotaMatchesObject(ev, ['widgets'], [{ scopeName: 'A', operator: 'Exists' }], widget('B'))).toBe(false);
  });
});
