import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import type { Pod } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import { PodEvaluator } from './pod.js';

// What a request may make the ledger read is bounded beyond what Kubernetes validates (a string's
// length, the resource names of one object); an object the API server already stored, as a
// listing shows it, is read no more strictly than the API server read it (UsageOptions.stored).

const evaluator = new PodEvaluator();
const pod = (extra: Partial<Pod>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', uid: 'p' },
  spec: { containers: [{ name: 'c', image: 'x' }] },
  ...extra,
});
const extended = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`example.com/r${i}`, '1']));

describe('a pod as the API server stored it', () => {
  it.each([
    [
      'a status condition reason longer than 253 bytes (a kubelet may write one; the API server bounds none)',
      pod({ status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'r'.repeat(300) }] } as Pod['status'] }),
    ],
    [
      'more than 64 extended resources (the API server has no such bound)',
      pod({ spec: { containers: [{ name: 'c', image: 'x', resources: { requests: extended(70), limits: extended(70) } }] } }),
    ],
  ] as const)('is read with %s, which a request is refused for', (_case, object) => {
    expect(() => evaluator.usage(object)).toThrow(DomainError);
    expect(() => evaluator.scopeFacts(object)).toThrow(DomainError);
    const usage = evaluator.usage(object, { stored: true });
    expect(Resources.get(usage, 'count/pods')?.toString()).toBe('1');
    expect(evaluator.scopeFacts(object, { stored: true })).toMatchObject({ NotTerminating: true });
  });

  it('charges every extended resource it names', () => {
    const usage = evaluator.usage(
      pod({ spec: { containers: [{ name: 'c', image: 'x', resources: { requests: extended(70), limits: extended(70) } }] } }),
      { stored: true },
    );
    expect(Resources.resourceNames(usage).filter((name) => name.startsWith('requests.example.com/'))).toHaveLength(70);
  });

  it('still refuses what Kubernetes would not decode either: a quantity that does not parse', () => {
    expect(() =>
      evaluator.usage(pod({ spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: 'lots' } } }] } }), {
        stored: true,
      }),
    ).toThrow(DomainError);
  });
});
