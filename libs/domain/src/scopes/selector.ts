import { assertNever } from '../assert.js';
import { DomainError } from '../errors.js';
import type { ScopedResourceSelectorRequirement } from '../kube/types.js';
import { isValidLabelValue as labelValueProblems } from '../validation/names.js';

/**
 * A value-carrying scope (PriorityClass, VolumeAttributesClass) is matched as Kubernetes
 * does it: the requirement becomes a one-requirement label selector
 * (ScopedResourceSelectorRequirementsAsSelector) keyed by the scope name, and is tested
 * against a label set holding the object's value, or no label when it has none.
 */
export interface ScopeValueMatcher {
  /** Whether a label set with this value (undefined: without the label) matches. */
  matches(value: string | undefined): boolean;
}

/** Builds the selector, or throws DomainError when Kubernetes would fail to build it. */
export function scopeValueMatcher(requirement: ScopedResourceSelectorRequirement): ScopeValueMatcher {
  const problems = requirementProblems(requirement);
  if (problems.length > 0) {
    const message = `error on matching scope ${describe(requirement)}: failed to parse and convert selector: ${problems.join(', ')}`;
    throw new DomainError('ObjectInvalid', message, [
      { reason: 'FieldValueInvalid', field: 'spec.scopeSelector.matchExpressions', message },
    ]);
  }
  const values = requirement.values ?? [];
  const operator = requirement.operator as SelectorOperator;
  return {
    matches(value) {
      switch (operator) {
        case 'In':
          return value !== undefined && values.includes(value);
        case 'NotIn':
          return value === undefined || !values.includes(value);
        case 'Exists':
          return value !== undefined;
        case 'DoesNotExist':
          return value === undefined;
        default:
          return assertNever(operator, 'scope selector operator');
      }
    },
  };
}

type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

const OPERATORS: ReadonlySet<string> = new Set<SelectorOperator>(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** The checks of labels.NewRequirement that can fail for a scope requirement. */
function requirementProblems(requirement: ScopedResourceSelectorRequirement): string[] {
  if (!OPERATORS.has(requirement.operator)) return [`"${requirement.operator}" is not a valid scope selector operator`];
  const values = requirement.values ?? [];
  const problems: string[] = [];
  if ((requirement.operator === 'In' || requirement.operator === 'NotIn') && values.length === 0) {
    problems.push("values: Invalid value: for 'in', 'notin' operators, values set can't be empty");
  }
  if ((requirement.operator === 'Exists' || requirement.operator === 'DoesNotExist') && values.length > 0) {
    problems.push('values: Invalid value: values set must be empty for exists and does not exist');
  }
  values.forEach((value, i) => {
    if (labelValueProblems(value).length > 0) {
      problems.push(
        `values[${i}]: Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)`,
      );
    }
  });
  return problems;
}

function describe(requirement: ScopedResourceSelectorRequirement): string {
  return `{${requirement.scopeName} ${requirement.operator} [${(requirement.values ?? []).join(' ')}]}`;
}
