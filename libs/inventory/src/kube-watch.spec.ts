import { describe, expect, it } from 'vitest';
import { KNOWN_KINDS } from './kinds.js';
import { settleSignalOf } from './kube-watch.js';
import type { WatchEvent } from './watch.js';

const kind = (resource: string) => {
  const found = KNOWN_KINDS.find((k) => k.groupResource.group === '' && k.groupResource.resource === resource);
  if (!found) throw new Error(resource);
  return found;
};
const event = (type: WatchEvent['type'], uid: string, phase?: string): WatchEvent => ({
  type,
  object: { metadata: { namespace: 'ns', name: `o-${uid}`, uid, resourceVersion: '7' }, ...(phase ? { status: { phase } } : {}) },
});

describe('what a watch event settles', () => {
  it('an addition, a deletion, and a pod that finished, once; not other changes', () => {
    const terminal = new Set<string>();
    const secrets = kind('secrets');
    const pods = kind('pods');
    expect(settleSignalOf(secrets, event('ADDED', 's1'), terminal)?.why).toBe('added');
    expect(settleSignalOf(secrets, event('MODIFIED', 's1'), terminal)).toBeUndefined();
    expect(settleSignalOf(secrets, event('DELETED', 's1'), terminal)?.why).toBe('deleted');
    expect(settleSignalOf(pods, event('ADDED', 'p1', 'Pending'), terminal)?.why).toBe('added');
    expect(settleSignalOf(pods, event('MODIFIED', 'p1', 'Running'), terminal)).toBeUndefined();
    expect(settleSignalOf(pods, event('MODIFIED', 'p1', 'Succeeded'), terminal)?.why).toBe('terminal');
    expect(settleSignalOf(pods, event('MODIFIED', 'p1', 'Succeeded'), terminal)).toBeUndefined();
    // A pod added already finished settles at once.
    expect(settleSignalOf(pods, event('ADDED', 'p2', 'Failed'), terminal)?.why).toBe('terminal');
    expect(settleSignalOf(pods, event('DELETED', 'p1', 'Succeeded'), terminal)?.why).toBe('deleted');
  });
});
