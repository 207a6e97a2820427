import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { FieldReader } from '../usage/fields.js';
import { aggregate, checkEach, FIELD_ERRORS_MAX, invalid, invalidObject, str } from './field.js';
import { validateNamespace } from '../shared/namespace-validation.js';
import { validateResourceQuota } from './resource-quota.js';
import { METADATA_LIST_MAX } from './object-meta.js';

/** An error lists at most FIELD_ERRORS_MAX problems and counts the rest; a list over its bound is one error. */
function thrown(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

const quota = (
  metadata: Record<string, unknown>,
  spec: Record<string, unknown> = { hard: { pods: '1' } },
  extra: Record<string, unknown> = {},
) => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'q', namespace: 'team-a', ...metadata },
  spec,
  ...extra,
});

describe('bounded field errors', () => {
  it('describes the first FIELD_ERRORS_MAX problems of a list and counts the others', () => {
    let described = 0;
    const errs = checkEach(
      Array.from({ length: 1000 }, (_, i) => `bad ${i}`),
      () => ['is bad'],
      (item, msg) => {
        described++;
        return invalid('spec.list', str(item), msg);
      },
    );
    expect(errs).toHaveLength(1000);
    expect(described).toBe(FIELD_ERRORS_MAX);
    const error = invalidObject('Thing', 't', errs);
    expect(error.causes).toHaveLength(FIELD_ERRORS_MAX);
    expect(error.message).toMatch(/, and 900 more errors\]$/);
    expect(aggregate(errs)).toContain('spec.list: Invalid value: "bad 99": is bad, and 900 more errors]');
  });

  it('prints a long bad value cut, with its length', () => {
    expect(str('x'.repeat(1000)).printed).toBe(`"${'x'.repeat(256)}"... (1000 characters)`);
  });

  it('answers 19,000 invalid label keys with 100 causes and a count, without describing the rest', () => {
    const labels = Object.fromEntries(Array.from({ length: 19_000 }, (_, i) => [`k!${i}`, '']));
    const error = thrown(() => validateResourceQuota(quota({ labels })));
    expect(error.code).toBe('ObjectInvalid');
    expect(error.causes).toHaveLength(FIELD_ERRORS_MAX);
    expect(error.message).toMatch(/and 18900 more errors\]$/);
    expect(error.message.length).toBeLessThan(64 * 1024);
  });

  it('answers labels over 256 KiB in all with one error, checking no key', () => {
    const labels = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k!${String(i).padStart(12, '0')}`, 'v']));
    expect(thrown(() => validateResourceQuota(quota({ labels }))).causes).toEqual([
      { reason: 'FieldValueTooLong', field: 'metadata.labels', message: 'Too long: may not be more than 262144 bytes' },
    ]);
  });

  it.each(['finalizers', 'ownerReferences', 'managedFields'])(
    `answers more than ${METADATA_LIST_MAX} metadata.%s with one error`,
    (list) => {
      const items = Array.from({ length: METADATA_LIST_MAX + 1 }, () => (list === 'finalizers' ? 'x' : {}));
      expect(thrown(() => validateResourceQuota(quota({ [list]: items }))).causes).toEqual([
        {
          reason: 'FieldValueTooMany',
          field: `metadata.${list}`,
          message: `Too many: ${METADATA_LIST_MAX + 1}: must have at most ${METADATA_LIST_MAX} items`,
        },
      ]);
    },
  );

  it('answers a Namespace with 190,000 finalizers with one error, quickly', () => {
    const started = performance.now();
    const error = thrown(() =>
      validateNamespace({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-f' },
        spec: { finalizers: Array.from({ length: 190_000 }, () => 'x') },
      }),
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error.causes).toEqual([
      { reason: 'FieldValueTooMany', field: 'spec.finalizers', message: 'Too many: 190000: must have at most 256 items' },
    ]);
  });

  it('checks the size of spec.hard before its entries: 19,000 bad entries are one error', () => {
    const hard = Object.fromEntries(Array.from({ length: 19_000 }, (_, i) => [`Bad_${i}`, '1']));
    expect(thrown(() => validateResourceQuota(quota({}, { hard }))).causes).toEqual([
      { reason: 'FieldValueTooMany', field: 'spec.hard', message: 'Too many: 19000: must have at most 64 items' },
    ]);
  });

  it('decodes at most FIELD_ERRORS_MAX problems and counts the rest', () => {
    const junk = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`junk${i}`, 1]));
    const error = thrown(() => validateResourceQuota(quota({}, { hard: { pods: '1' } }, junk)));
    expect(error.code).toBe('ObjectMalformed');
    expect(error.causes).toHaveLength(FIELD_ERRORS_MAX);
    expect(error.message).toMatch(/, and 4900 more errors$/);
  });
});

describe('what an evaluator reads', () => {
  it('refuses a string over 253 bytes (a class name becomes a stored resource name)', () => {
    const read = new FieldReader('pod');
    expect(read.string('c'.repeat(254), 'spec.priorityClassName')).toBe('');
    expect(thrown(() => read.done()).causes).toEqual([
      { reason: 'FieldValueTooLong', field: 'spec.priorityClassName', message: 'Too long: may not be more than 253 bytes' },
    ]);
  });

  it('refuses more than 64 different resource names in one object', () => {
    const read = new FieldReader('pod');
    read.resources(
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`example.com/a${i}`, '1'])),
      'spec.containers[0].resources.requests',
    );
    read.resources(
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`example.com/b${i}`, '1'])),
      'spec.containers[1].resources.requests',
    );
    expect(thrown(() => read.done()).causes[0]).toMatchObject({ reason: 'FieldValueTooMany' });
    const one = new FieldReader('pod');
    one.resources(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`example.com/a${i}`, '1'])), 'spec.overhead');
    expect(thrown(() => one.done()).causes).toEqual([
      { reason: 'FieldValueTooMany', field: 'spec.overhead', message: 'Too many: 65: must have at most 64 items' },
    ]);
  });
});
