import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import type { ScopedResourceSelectorRequirement } from '../kube/types.js';
import { factsMatchAll, factsMatchRequirement, quotaScopeRequirements, type ScopeFacts } from './facts.js';

const req = (scopeName: string, operator: string, values?: string[]): ScopedResourceSelectorRequirement => ({
  scopeName,
  operator,
  ...(values ? { values } : {}),
});

describe('scope facts', () => {
  it.each<[string, ScopeFacts, ScopedResourceSelectorRequirement, boolean]>([
    ['a yes scope that holds', { Terminating: true }, req('Terminating', 'Exists'), true],
    ['a yes scope that does not hold', { Terminating: false }, req('Terminating', 'Exists'), false],
    ['a scope this kind does not have', { Terminating: true }, req('PriorityClass', 'Exists'), false],
    ['In with the object’s value', { PriorityClass: ['high'] }, req('PriorityClass', 'In', ['high', 'low']), true],
    ['In without a value', { PriorityClass: [] }, req('PriorityClass', 'In', ['high']), false],
    ['NotIn with another value', { PriorityClass: ['mid'] }, req('PriorityClass', 'NotIn', ['high']), true],
    ['NotIn without a value (an absent label is not in any set)', { PriorityClass: [] }, req('PriorityClass', 'NotIn', ['high']), true],
    ['NotIn with the value', { PriorityClass: ['high'] }, req('PriorityClass', 'NotIn', ['high']), false],
    ['Exists with a value', { PriorityClass: ['x'] }, req('PriorityClass', 'Exists'), true],
    ['Exists without', { PriorityClass: [] }, req('PriorityClass', 'Exists'), false],
    ['DoesNotExist without', { PriorityClass: [] }, req('PriorityClass', 'DoesNotExist'), true],
    ['DoesNotExist with', { PriorityClass: ['x'] }, req('PriorityClass', 'DoesNotExist'), false],
    [
      'In when any of several values matches (a claim moving classes)',
      { VolumeAttributesClass: ['gold', 'silver'] },
      req('VolumeAttributesClass', 'In', ['silver']),
      true,
    ],
  ])('%s', (_name, facts, requirement, expected) => {
    expect(factsMatchRequirement(facts, requirement)).toBe(expected);
  });

  it('refuses a selector Kubernetes cannot build (In without values)', () => {
    expect(() => factsMatchRequirement({ PriorityClass: ['a'] }, req('PriorityClass', 'In', []))).toThrow(DomainError);
  });

  it('a quota’s scopes and selector are ANDed', () => {
    const requirements = quotaScopeRequirements({
      scopes: ['NotTerminating'],
      scopeSelector: { matchExpressions: [req('PriorityClass', 'In', ['high'])] },
    });
    expect(requirements).toEqual([req('NotTerminating', 'Exists'), req('PriorityClass', 'In', ['high'])]);
    expect(factsMatchAll({ NotTerminating: true, PriorityClass: ['high'] }, requirements)).toBe(true);
    expect(factsMatchAll({ NotTerminating: false, PriorityClass: ['high'] }, requirements)).toBe(false);
    expect(factsMatchAll({}, [])).toBe(true);
  });
});
