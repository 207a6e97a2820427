import { describe, expect, it } from 'vitest';
import { namespaceDeduplicationId } from './reconcile-queue.js';

describe('namespaceDeduplicationId: which jobs of a namespace are one', () => {
  it('gives an immediate settle one id whatever queued it, and keeps the delayed and the Namespace-object jobs apart', () => {
    expect(namespaceDeduplicationId('team-a', 'interval')).toBe(namespaceDeduplicationId('team-a', 'count'));
    expect(namespaceDeduplicationId('team-a', 'interval')).not.toBe(namespaceDeduplicationId('team-b', 'interval'));
    expect(namespaceDeduplicationId('team-a', 'after-delete')).not.toBe(namespaceDeduplicationId('team-a', 'interval'));
    expect(namespaceDeduplicationId('team-a', 'namespace-object')).not.toBe(namespaceDeduplicationId('team-a', 'interval'));
    expect(namespaceDeduplicationId('team-a', 'namespace-object')).not.toBe(namespaceDeduplicationId('team-a', 'after-delete'));
  });
});
