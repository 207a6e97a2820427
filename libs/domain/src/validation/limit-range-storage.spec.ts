import { describe, expect, it } from 'vitest';
import { type DomainError } from '../errors.js';
import { prepareLimitRangeForStorage, validateLimitRange } from './limit-range.js';

const limitRange = (item: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: { name: 'limits', namespace: 'team-a' },
  spec: { limits: [item] },
});

describe('prepareLimitRangeForStorage (decode, API-server defaulting, validate)', () => {
  it('stores a max-only Container item with default and defaultRequest taken from max, as the API server does', () => {
    const stored = prepareLimitRangeForStorage(limitRange({ type: 'Container', max: { cpu: '1', memory: '1Gi' } }));
    expect(stored.spec?.limits?.[0]).toEqual({
      type: 'Container',
      max: { cpu: '1', memory: '1Gi' },
      default: { cpu: '1', memory: '1Gi' },
      defaultRequest: { cpu: '1', memory: '1Gi' },
    });
  });

  it('takes defaultRequest from default first, then from min', () => {
    const stored = prepareLimitRangeForStorage(
      limitRange({ type: 'Container', min: { cpu: '100m', memory: '64Mi' }, default: { cpu: '500m' } }),
    );
    expect(stored.spec?.limits?.[0]).toMatchObject({ default: { cpu: '500m' }, defaultRequest: { cpu: '500m', memory: '64Mi' } });
  });

  it('leaves Pod and PersistentVolumeClaim items as written', () => {
    const stored = prepareLimitRangeForStorage(limitRange({ type: 'Pod', max: { cpu: '2' } }));
    expect(stored.spec?.limits?.[0]).toEqual({ type: 'Pod', max: { cpu: '2' } });
  });

  it('validates the defaulted item: a default below min is reported for the derived defaultRequest too', () => {
    const raw = limitRange({ type: 'Container', default: { cpu: '1' }, min: { cpu: '2' } });
    const plain = (() => {
      try {
        validateLimitRange(raw);
      } catch (e) {
        return e as DomainError;
      }
      throw new Error('expected a refusal');
    })();
    const stored = (() => {
      try {
        prepareLimitRangeForStorage(raw);
      } catch (e) {
        return e as DomainError;
      }
      throw new Error('expected a refusal');
    })();
    expect(plain.causes.length).toBe(1);
    expect(stored.causes.map((c) => c.message)).toEqual(
      expect.arrayContaining([expect.stringContaining('min value 2 is greater than default request value 1')]),
    );
  });
});
