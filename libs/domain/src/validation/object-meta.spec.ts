import { describe, expect, it } from 'vitest';
import { aggregate, goJson, goQuote } from './field.js';
import { isDNS1123Label, isQualifiedName, isValidLabelValue } from './names.js';
import { type Cause, DNS_SUBDOMAIN_MSG, NAME_PART_MSG, domainErrorOf, triples } from './spec-helpers.js';
import { validateResourceQuota } from './resource-quota.js';

/** Metadata is exercised through a ResourceQuota, as the API server would see it. */
const withMeta = (metadata: Record<string, unknown>): unknown => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'abc', namespace: 'foo', ...metadata },
  spec: {},
});

describe('metadata validation (ValidateObjectMeta)', () => {
  it.each<readonly [string, Record<string, unknown>, readonly Cause[]]>([
    [
      'a generateName, whose trailing dash is allowed, next to a bad name',
      { generateName: 'abc-', name: 'abc-' },
      [['FieldValueInvalid', 'metadata.name', `Invalid value: "abc-": ${DNS_SUBDOMAIN_MSG}`]],
    ],
    [
      'a name over 253 characters',
      { name: 'a'.repeat(254) },
      [['FieldValueInvalid', 'metadata.name', `Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`]],
    ],
    [
      'a namespace with dots',
      { namespace: 'a.b' },
      [['FieldValueInvalid', 'metadata.namespace', 'Invalid value: "a.b": must not contain dots']],
    ],
    [
      'a negative generation',
      { generation: -1 },
      [['FieldValueInvalid', 'metadata.generation', 'Invalid value: -1: must be greater than or equal to 0']],
    ],
    [
      'a label key with an empty prefix and a label value too long (both reported on the map)',
      { labels: { '/a': 'ok', b: 'v'.repeat(64) } },
      [
        ['FieldValueInvalid', 'metadata.labels', 'Invalid value: "/a": prefix part must be non-empty'],
        ['FieldValueInvalid', 'metadata.labels', `Invalid value: "${'v'.repeat(64)}": must be no more than 63 bytes`],
      ],
    ],
    [
      'an annotation key that is no qualified name (case does not matter)',
      { annotations: { 'Example.com/Fine': 'x', 'bad key': 'x' } },
      [['FieldValueInvalid', 'metadata.annotations', `Invalid value: "bad key": ${NAME_PART_MSG}`]],
    ],
    [
      'annotations over 256 KiB in total',
      { annotations: { a: 'x'.repeat(256 * 1024) } },
      [['FieldValueTooLong', 'metadata.annotations', 'Too long: may not be more than 262144 bytes']],
    ],
    [
      'an unqualified finalizer that is not a standard one',
      { finalizers: ['kubernetes', 'example.com/cleanup', 'cleanup'] },
      [
        [
          'FieldValueInvalid',
          'metadata.finalizers[2]',
          'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
        ],
      ],
    ],
    [
      'both orphan and foregroundDeletion',
      { finalizers: ['orphan', 'foregroundDeletion'] },
      [
        [
          'FieldValueInvalid',
          'metadata.finalizers',
          'Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
        ],
      ],
    ],
    [
      'an owner reference missing its fields (reported under the list path, as invalid values)',
      { ownerReferences: [{ apiVersion: 'a/b/c' }] },
      [
        ['FieldValueInvalid', 'metadata.ownerReferences.apiVersion', 'Invalid value: "a/b/c": version must not be empty'],
        ['FieldValueInvalid', 'metadata.ownerReferences.kind', 'Invalid value: "": must not be empty'],
        ['FieldValueInvalid', 'metadata.ownerReferences.name', 'Invalid value: "": must not be empty'],
        ['FieldValueInvalid', 'metadata.ownerReferences.uid', 'Invalid value: "": must not be empty'],
      ],
    ],
    [
      'two controller owners',
      {
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'a', uid: '1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: '2', controller: true },
        ],
      },
      [
        [
          'FieldValueInvalid',
          'metadata.ownerReferences',
          'Invalid value: [{"apiVersion":"apps/v1","kind":"Deployment","name":"a","uid":"1","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for Deployment/a and ReplicaSet/b',
        ],
      ],
    ],
    [
      'a managed-fields entry with an unknown operation',
      { managedFields: [{ manager: 'kubectl', operation: 'Patch', fieldsType: 'FieldsV2' }] },
      [
        ['FieldValueInvalid', 'metadata.managedFields[0].operation', 'Invalid value: "Patch": must be `Apply` or `Update`'],
        ['FieldValueInvalid', 'metadata.managedFields[0].fieldsType', 'Invalid value: "FieldsV2": must be `FieldsV1`'],
      ],
    ],
  ])('rejects %s', (_name, metadata, expected) => {
    expect(triples(domainErrorOf(() => validateResourceQuota(withMeta(metadata))).causes)).toEqual(expected);
  });

  it('accepts a full, well-formed metadata and returns it unchanged', () => {
    const metadata = {
      name: 'compute',
      namespace: 'team-a',
      uid: '0b1c',
      resourceVersion: '12',
      generation: 3,
      creationTimestamp: '2024-05-01T10:00:00Z',
      labels: { 'app.kubernetes.io/name': 'x', empty: '' },
      annotations: { 'Kubectl.Kubernetes.io/Last-Applied': '{}' },
      finalizers: ['example.com/keep'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'team-a', uid: 'u', blockOwnerDeletion: false }],
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'v1',
          time: '2024-05-01T10:00:00.5+02:00',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': {} },
        },
      ],
    };
    expect(validateResourceQuota(withMeta(metadata)).metadata).toEqual(metadata);
  });

  it('refuses a timestamp that is not RFC 3339 while decoding', () => {
    expect(triples(domainErrorOf(() => validateResourceQuota(withMeta({ creationTimestamp: 'yesterday' }))).causes)).toEqual([
      [
        'FieldValueInvalid',
        'metadata.creationTimestamp',
        'Invalid value: "yesterday": must be an RFC 3339 date-time (e.g. "2006-01-02T15:04:05Z")',
      ],
    ]);
  });
});

describe('name formats (apimachinery util/validation)', () => {
  it.each([
    ['abc', []],
    ['a.b', ['must not contain dots']],
    ['a'.repeat(64), ['must be no more than 63 characters']],
  ])('isDNS1123Label(%s)', (value, expected) => {
    expect(isDNS1123Label(value)).toEqual(expected);
  });

  it.each([
    ['example.com/MyName', []],
    ['/a', ['prefix part must be non-empty']],
    ['Bad_Prefix/a', [`prefix part ${DNS_SUBDOMAIN_MSG}`]],
    ['a/', ['name part must be non-empty', NAME_PART_MSG]],
    ['x'.repeat(64), ['name part must be no more than 63 bytes']],
  ])('isQualifiedName(%s)', (value, expected) => {
    expect(isQualifiedName(value)).toEqual(expected);
  });

  it('isValidLabelValue allows the empty string and rejects a trailing dash', () => {
    expect(isValidLabelValue('')).toEqual([]);
    expect(isValidLabelValue('a-')).toHaveLength(1);
  });
});

describe('printing bad values as Go does', () => {
  it.each([
    ['plain', '"plain"'],
    ['say "hi"\\', '"say \\"hi\\"\\\\"'],
    ['tab\tnew\nline', '"tab\\tnew\\nline"'],
    ['\x00\x7f', '"\\x00\\x7f"'],
    ['café', '"café"'],
    ['no\u00a0break', '"no\\u00a0break"'],
  ])('%%q of %j is %s', (value, expected) => {
    expect(goQuote(value)).toBe(expected);
  });

  it('JSON-encodes with HTML escaping, as encoding/json does', () => {
    expect(goJson(['<a>&', null, 1])).toBe('["\\u003ca\\u003e\\u0026",null,1]');
  });

  it('aggregates: once per distinct message, brackets only for several', () => {
    const e = (field: string): { reason: string; field: string; message: string } => ({
      reason: 'FieldValueRequired',
      field,
      message: 'Required value',
    });
    expect(aggregate([e('a'), e('a')])).toBe('a: Required value');
    expect(aggregate([e('a'), e('b'), e('a')])).toBe('[a: Required value, b: Required value]');
  });
});
