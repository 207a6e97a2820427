import { describe, expect, it } from 'vitest';
import { type Cause, DNS_SUBDOMAIN_MSG, domainErrorOf, triples } from './spec-helpers.js';
import { validateLimitRange } from './limit-range.js';

/**
 * Metadata cases beyond the ported tables, answered from apimachinery's objectmeta.go and
 * meta/v1 validation (master, whose own test table reports owner-reference problems under
 * `metadata.ownerReferences.<field>` as invalid values) plus core's finalizer rule.
 * Exercised through a LimitRange; an empty cause list means Kubernetes accepts it.
 */

const withMeta = (metadata: Record<string, unknown>): unknown => ({
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: { name: 'lr', namespace: 'ns', ...metadata },
  spec: {},
});

const OWNER = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-1' };

type Row = readonly [name: string, metadata: Record<string, unknown>, causes: readonly Cause[]];

const rows: readonly Row[] = [
  ['a complete owner reference: Kubernetes accepts', { ownerReferences: [OWNER] }, []],
  [
    'an owner with apiVersion "apps/": Kubernetes finds no version',
    { ownerReferences: [{ ...OWNER, apiVersion: 'apps/' }] },
    [['FieldValueInvalid', 'metadata.ownerReferences.apiVersion', 'Invalid value: "apps/": version must not be empty']],
  ],
  [
    'an owner with apiVersion "/": Kubernetes finds no version',
    { ownerReferences: [{ ...OWNER, apiVersion: '/' }] },
    [['FieldValueInvalid', 'metadata.ownerReferences.apiVersion', 'Invalid value: "/": version must not be empty']],
  ],
  [
    'an owner with an empty apiVersion: Kubernetes reports an invalid, not a missing, value',
    { ownerReferences: [{ ...OWNER, apiVersion: '' }] },
    [['FieldValueInvalid', 'metadata.ownerReferences.apiVersion', 'Invalid value: "": version must not be empty']],
  ],
  [
    'an owner with a custom group version: Kubernetes accepts',
    { ownerReferences: [{ ...OWNER, apiVersion: 'example.com/v1alpha1', kind: 'Thing' }] },
    [],
  ],
  [
    'an Event owner: Kubernetes bans it, printing the reference under the list path',
    { ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }] },
    [
      [
        'FieldValueInvalid',
        'metadata.ownerReferences',
        'Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
      ],
    ],
  ],
  [
    'an Event owner spelled "/v1": Kubernetes bans it too (same group and version)',
    { ownerReferences: [{ apiVersion: '/v1', kind: 'Event', name: 'e', uid: 'u' }] },
    [
      [
        'FieldValueInvalid',
        'metadata.ownerReferences',
        'Invalid value: {"apiVersion":"/v1","kind":"Event","name":"e","uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
      ],
    ],
  ],
  [
    'an events.k8s.io Event owner: Kubernetes accepts (only the core Event is banned)',
    { ownerReferences: [{ ...OWNER, apiVersion: 'events.k8s.io/v1', kind: 'Event' }] },
    [],
  ],
  [
    'two owners missing their uid: Kubernetes reports one cause each, at the same path',
    {
      ownerReferences: [
        { ...OWNER, uid: '' },
        { ...OWNER, name: 'api', uid: '' },
      ],
    },
    [
      ['FieldValueInvalid', 'metadata.ownerReferences.uid', 'Invalid value: "": must not be empty'],
      ['FieldValueInvalid', 'metadata.ownerReferences.uid', 'Invalid value: "": must not be empty'],
    ],
  ],
  [
    'one controller among several owners: Kubernetes accepts',
    {
      ownerReferences: [
        { ...OWNER, controller: true },
        { ...OWNER, name: 'b', controller: false },
      ],
    },
    [],
  ],
  [
    'a managed-fields entry without an operation: Kubernetes reports an invalid empty operation',
    { managedFields: [{ manager: 'kubectl', fieldsType: 'FieldsV1' }] },
    [['FieldValueInvalid', 'metadata.managedFields[0].operation', 'Invalid value: "": must be `Apply` or `Update`']],
  ],
  [
    'a manager with a control character: Kubernetes names the rune and its byte position',
    { managedFields: [{ manager: 'kub\u0007ctl', operation: 'Update' }] },
    [['FieldValueInvalid', 'metadata.managedFields[0].manager', 'Invalid value: "kub\\actl": invalid character U+0007 (at position 3)']],
  ],
  [
    'a manager whose bad character follows a two-byte one: Kubernetes counts bytes',
    { managedFields: [{ manager: 'é\u00a0', operation: 'Apply' }] },
    [['FieldValueInvalid', 'metadata.managedFields[0].manager', 'Invalid value: "é\\u00a0": invalid character U+00A0 (at position 2)']],
  ],
  [
    'a manager of 129 bytes: Kubernetes says it is too long',
    { managedFields: [{ manager: 'm'.repeat(129), operation: 'Apply' }] },
    [['FieldValueTooLong', 'metadata.managedFields[0].manager', 'Too long: may not be more than 128 bytes']],
  ],
  ['a manager of exactly 128 bytes: Kubernetes accepts', { managedFields: [{ manager: 'm'.repeat(128), operation: 'Apply' }] }, []],
  [
    'a second managed-fields entry at fault: Kubernetes indexes managed fields',
    { managedFields: [{ operation: 'Apply' }, { operation: 'Apply', subresource: 's'.repeat(257) }] },
    [['FieldValueTooLong', 'metadata.managedFields[1].subresource', 'Too long: may not be more than 256 bytes']],
  ],
  [
    'a finalizer with two slashes: Kubernetes reports the label-key format on the list, and no standard-name check',
    { finalizers: ['a/b/c'] },
    [
      [
        'FieldValueInvalid',
        'metadata.finalizers',
        "Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    ],
  ],
  ['the standard finalizers kubernetes and orphan: Kubernetes accepts', { finalizers: ['kubernetes', 'orphan'] }, []],
  [
    'a generateName of upper-case letters without a name: Kubernetes reports the generateName only',
    { name: undefined, generateName: 'LR-' },
    [['FieldValueInvalid', 'metadata.generateName', `Invalid value: "LR-": ${DNS_SUBDOMAIN_MSG}`]],
  ],
  [
    'a generateName ending in a dash without a name: Kubernetes accepts (the name is generated)',
    { name: undefined, generateName: 'lr-' },
    [],
  ],
  [
    'neither name nor generateName: Kubernetes requires one',
    { name: undefined },
    [['FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required']],
  ],
  ['generation 0: Kubernetes accepts', { generation: 0 }, []],
];

describe('metadata on create, case by case', () => {
  it.each(rows)('%s', (_name, metadata, causes) => {
    if (causes.length === 0) {
      expect(() => validateLimitRange(withMeta(metadata))).not.toThrow();
      return;
    }
    const error = domainErrorOf(() => validateLimitRange(withMeta(metadata)));
    expect(error.code).toBe('ObjectInvalid');
    expect(triples(error.causes)).toEqual(causes);
  });

  it('prints two identical owner-reference errors once in the message', () => {
    const error = domainErrorOf(() =>
      validateLimitRange(
        withMeta({
          ownerReferences: [
            { ...OWNER, uid: '' },
            { ...OWNER, uid: '' },
          ],
        }),
      ),
    );
    expect(error.message).toBe('LimitRange "lr" is invalid: metadata.ownerReferences.uid: Invalid value: "": must not be empty');
  });
});
