import { describe, expect, it } from 'vitest';
import { triples, type Cause } from '../validation/spec-helpers.js';
import {
  type ClusterResourceQuotaSelector,
  type SelectableNamespace,
  clusterResourceQuotaSelects,
  hierarchicalResourceQuotaSelects,
  hncTreeLabel,
  validateClusterResourceQuotaSelector,
} from './namespace-selection.js';

const ns = (name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): SelectableNamespace => ({
  name,
  labels,
  annotations,
});

describe('validateClusterResourceQuotaSelector (OpenShift ValidateClusterResourceQuota, spec.selector)', () => {
  const path = 'spec.selector';
  it.each<readonly [string, ClusterResourceQuotaSelector | undefined, readonly Cause[]]>([
    ['by labels', { labels: { matchLabels: { team: 'a' } } }, []],
    ['by annotations', { annotations: { 'openshift.io/requester': 'alice' } }, []],
    ['by both', { labels: { matchExpressions: [{ key: 'env', operator: 'Exists' }] }, annotations: { owner: 'alice' } }, []],
    ['no selector at all', undefined, [['FieldValueRequired', 'spec.selector', 'Required value: must restrict the selected projects']]],
    ['an empty selector', {}, [['FieldValueRequired', 'spec.selector', 'Required value: must restrict the selected projects']]],
    [
      'null labels and annotations',
      { labels: null, annotations: null },
      [['FieldValueRequired', 'spec.selector', 'Required value: must restrict the selected projects']],
    ],
    [
      'a label selector that selects everything',
      { labels: {} },
      [
        ['FieldValueRequired', 'spec.selector', 'Required value: must restrict the selected projects'],
        ['FieldValueInvalid', 'spec.selector.labels', 'Invalid value: {}: must restrict the selected projects'],
      ],
    ],
    [
      'a label selector that selects everything beside annotations that restrict',
      { labels: {}, annotations: { owner: 'alice' } },
      [['FieldValueInvalid', 'spec.selector.labels', 'Invalid value: {}: must restrict the selected projects']],
    ],
    [
      'an invalid requirement',
      { labels: { matchExpressions: [{ key: 'env', operator: 'In' }] } },
      [
        [
          'FieldValueRequired',
          'spec.selector.labels.matchExpressions[0].values',
          "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ],
      ],
    ],
  ])('%s', (_name, selector, expected) => {
    expect(triples(validateClusterResourceQuotaSelector(selector, path))).toEqual(expected);
  });
});

describe('clusterResourceQuotaSelects (OpenShift clusterquotamapping GetMatcher)', () => {
  it.each<readonly [string, ClusterResourceQuotaSelector, SelectableNamespace, boolean]>([
    ['labels match', { labels: { matchLabels: { team: 'a' } } }, ns('a-dev', { team: 'a' }), true],
    ['labels do not match', { labels: { matchLabels: { team: 'a' } } }, ns('b-dev', { team: 'b' }), false],
    [
      'every annotation matches',
      { annotations: { owner: 'alice', cost: '42' } },
      ns('x', {}, { owner: 'alice', cost: '42', other: 'y' }),
      true,
    ],
    ['an annotation differs', { annotations: { owner: 'alice' } }, ns('x', {}, { owner: 'bob' }), false],
    ['an annotation is missing', { annotations: { owner: 'alice' } }, ns('x', { owner: 'alice' }), false],
    [
      'labels and annotations must both match',
      { labels: { matchLabels: { team: 'a' } }, annotations: { owner: 'alice' } },
      ns('x', { team: 'a' }, { owner: 'bob' }),
      false,
    ],
    ['a selector that restricts nothing selects nothing', {}, ns('x', { team: 'a' }), false],
  ])('%s', (_name, selector, namespace, expected) => {
    expect(clusterResourceQuotaSelects(selector, namespace)).toBe(expected);
  });
});

describe('hierarchicalResourceQuotaSelects (HNC tree labels)', () => {
  it.each<readonly [string, SelectableNamespace, boolean]>([
    ['its own namespace', ns('parent'), true],
    ['a child, labelled by HNC with its depth', ns('child', { [hncTreeLabel('parent')]: '1' }), true],
    ['a grandchild', ns('grandchild', { [hncTreeLabel('parent')]: '2', [hncTreeLabel('child')]: '1' }), true],
    ['a sibling tree', ns('other', { [hncTreeLabel('root')]: '1' }), false],
    ['a namespace whose name only starts like it', ns('parent-b', { [hncTreeLabel('parent-b')]: '0' }), false],
  ])('%s', (_name, namespace, expected) => {
    expect(hierarchicalResourceQuotaSelects('parent', namespace)).toBe(expected);
  });

  it('uses the label HNC writes', () => {
    expect(hncTreeLabel('team-a')).toBe('team-a.tree.hnc.x-k8s.io/depth');
  });
});
