import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { readPutIdentity, renderMetadata } from './kube-object.js';

const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return ((error as BadRequestException).getResponse() as { message: string }).message;
  }
  throw new Error('expected a BadRequestException');
};

describe('readPutIdentity', () => {
  it('fills a missing name and namespace from the URL', () => {
    expect(readPutIdentity({ kind: 'ResourceQuota' }, 'ns', 'q', 'ResourceQuota')).toEqual({
      body: { kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'ns' } },
    });
  });

  it('takes a decimal resourceVersion as the expected version, and treats "" as none', () => {
    expect(readPutIdentity({ metadata: { resourceVersion: '42' } }, 'ns', 'q', 'ResourceQuota').expectedVersion).toBe(42);
    expect(readPutIdentity({ metadata: { resourceVersion: '' } }, 'ns', 'q', 'ResourceQuota')).not.toHaveProperty('expectedVersion');
  });

  it('drops the status and the server-set metadata a client echoes back from a read', () => {
    const { body } = readPutIdentity(
      { metadata: { name: 'q', uid: 'u', creationTimestamp: 't', generation: 3, labels: { a: 'b' } }, status: { used: {} } },
      'ns',
      'q',
      'ResourceQuota',
    );
    expect(body).toEqual({ metadata: { name: 'q', namespace: 'ns', labels: { a: 'b' } } });
  });

  it.each([
    [
      'a name that differs from the URL',
      { metadata: { name: 'other' } },
      'the name of the object (other) does not match the name on the URL (q)',
    ],
    [
      'another namespace',
      { metadata: { namespace: 'elsewhere' } },
      'the namespace of the provided object does not match the namespace sent on the request',
    ],
    ['a resourceVersion with letters', { metadata: { resourceVersion: '12a' } }, 'metadata.resourceVersion: Invalid value: "12a"'],
    ['a resourceVersion with a leading zero', { metadata: { resourceVersion: '01' } }, 'metadata.resourceVersion'],
    ['a numeric resourceVersion', { metadata: { resourceVersion: 1 } }, 'metadata.resourceVersion: Invalid value: 1'],
    ['metadata that is not an object', { metadata: 'q' }, 'metadata must be an object'],
    ['an array', [], 'the request body must be a ResourceQuota object'],
    ['a string', 'q', 'the request body must be a ResourceQuota object'],
    ['null', null, 'the request body must be a ResourceQuota object'],
  ])('refuses %s', (_case, raw, message) => {
    expect(messageOf(() => readPutIdentity(raw, 'ns', 'q', 'ResourceQuota'))).toContain(message);
  });
});

describe('renderMetadata', () => {
  it('prints the version as a string and prefers the stored creationTimestamp', () => {
    expect(
      renderMetadata({
        name: 'q',
        namespace: 'ns',
        version: 7,
        createdAt: '2026-01-02T00:00:00.000Z',
        metadata: { uid: 'u', creationTimestamp: '2026-01-01T00:00:00Z' },
      }),
    ).toEqual({ name: 'q', namespace: 'ns', uid: 'u', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z' });
  });

  it('falls back to createdAt and omits empty labels and annotations', () => {
    expect(
      renderMetadata({
        name: 'q',
        namespace: 'ns',
        version: 1,
        createdAt: '2026-01-02T00:00:00.000Z',
        metadata: { labels: {}, annotations: {} },
      }),
    ).toEqual({
      name: 'q',
      namespace: 'ns',
      resourceVersion: '1',
      creationTimestamp: '2026-01-02T00:00:00.000Z',
    });
  });
});
