import { describe, expect, it } from 'vitest';
import { type Cause, DNS_LABEL_MSG, NAME_PART_MSG, domainErrorOf, triples } from '../validation/spec-helpers.js';
import { validateNamespace } from './namespace-validation.js';

const namespace = (metadata: Record<string, unknown>, spec?: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata,
  ...(spec === undefined ? {} : { spec }),
  ...extra,
});

describe('validateNamespace (ValidateNamespace, on create)', () => {
  it('accepts a namespace with labels, annotations and standard or qualified finalizers, and drops the status', () => {
    const ns = validateNamespace(
      namespace(
        {
          name: 'team-a',
          labels: { team: 'a', 'team-a.tree.hnc.x-k8s.io/depth': '0' },
          annotations: { 'openshift.io/requester': 'alice' },
        },
        { finalizers: ['kubernetes', 'example.com/cleanup'] },
        { status: { phase: 'Terminating' } },
      ),
    );
    expect(ns).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: 'team-a',
        labels: { team: 'a', 'team-a.tree.hnc.x-k8s.io/depth': '0' },
        annotations: { 'openshift.io/requester': 'alice' },
      },
      spec: { finalizers: ['kubernetes', 'example.com/cleanup'] },
    });
  });

  it.each<readonly [string, Record<string, unknown>, unknown, readonly Cause[]]>([
    ['no name', {}, undefined, [['FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required']]],
    [
      'a name that is a DNS subdomain but not a label',
      { name: 'team.a' },
      undefined,
      [['FieldValueInvalid', 'metadata.name', 'Invalid value: "team.a": must not contain dots']],
    ],
    [
      'an upper-case name',
      { name: 'Team' },
      undefined,
      [['FieldValueInvalid', 'metadata.name', `Invalid value: "Team": ${DNS_LABEL_MSG}`]],
    ],
    [
      'a namespace on a cluster-scoped object',
      { name: 'team-a', namespace: 'other' },
      undefined,
      [['FieldValueForbidden', 'metadata.namespace', 'Forbidden: not allowed on this type']],
    ],
    [
      'a label key that is not a qualified name',
      { name: 'team-a', labels: { '-team': 'a' } },
      undefined,
      [['FieldValueInvalid', 'metadata.labels', `Invalid value: "-team": ${NAME_PART_MSG}`]],
    ],
    [
      'an unprefixed finalizer that is not a standard one',
      { name: 'team-a' },
      { finalizers: ['cleanup'] },
      [
        [
          'FieldValueInvalid',
          'spec.finalizers',
          'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
        ],
      ],
    ],
    [
      'a finalizer that is not a qualified name',
      { name: 'team-a' },
      { finalizers: ['example.com/-x'] },
      [['FieldValueInvalid', 'spec.finalizers', `Invalid value: "example.com/-x": ${NAME_PART_MSG}`]],
    ],
  ])('refuses %s', (_name, metadata, spec, expected) => {
    const error = domainErrorOf(() => validateNamespace(namespace(metadata, spec)));
    expect(error.code).toBe('ObjectInvalid');
    expect(triples(error.causes ?? [])).toEqual(expected);
  });

  it('names the Namespace in its message, as the API server does', () => {
    expect(domainErrorOf(() => validateNamespace(namespace({ name: 'Team' }))).message).toBe(
      `Namespace "Team" is invalid: metadata.name: Invalid value: "Team": ${DNS_LABEL_MSG}`,
    );
  });

  it.each<readonly [string, unknown, string]>([
    [
      'another kind',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } },
      'kind: Unsupported value: "Pod": supported values: "Namespace"',
    ],
    ['an unknown field', namespace({ name: 'a' }, { finalizers: [], extra: 1 }), 'unknown field "spec.extra"'],
    ['finalizers that are not strings', namespace({ name: 'a' }, { finalizers: [1] }), 'spec.finalizers'],
    ['a status phase that is not a string', namespace({ name: 'a' }, undefined, { status: { phase: 3 } }), 'status.phase'],
  ])('cannot decode %s', (_name, raw, fragment) => {
    const error = domainErrorOf(() => validateNamespace(raw));
    expect(error.code).toBe('ObjectMalformed');
    expect(error.message).toContain('Namespace in version "v1" cannot be handled as a Namespace');
    expect(error.message).toContain(fragment);
  });
});
