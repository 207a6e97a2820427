import { describe, expect, it } from 'vitest';
import { Tombstones } from './tombstones.js';

describe('Tombstones', () => {
  it('answers the uids deleted in a namespace, once each, and none of another namespace', () => {
    const tombstones = new Tombstones({ keepMs: 1000, max: 10 });
    tombstones.add('a', 'u1');
    tombstones.add('a', 'u1');
    tombstones.add('a', 'u2');
    tombstones.add('b', 'u3');
    expect(tombstones.in('a')).toEqual(['u1', 'u2']);
    expect(tombstones.in('b')).toEqual(['u3']);
    expect(tombstones.in('c')).toEqual([]);
    expect(tombstones.size).toBe(3);
  });

  it('forgets a uid after keepMs', () => {
    let now = 0;
    const tombstones = new Tombstones({ keepMs: 1000, max: 10 }, () => now);
    tombstones.add('a', 'old');
    now = 600;
    tombstones.add('a', 'new');
    now = 1000;
    expect(tombstones.in('a')).toEqual(['new']);
    now = 1600;
    expect(tombstones.in('a')).toEqual([]);
    expect(tombstones.size).toBe(0);
  });

  it('keeps at most max uids, dropping the oldest first', () => {
    const tombstones = new Tombstones({ keepMs: 60_000, max: 3 });
    for (const uid of ['u1', 'u2', 'u3', 'u4', 'u5']) tombstones.add(uid === 'u5' ? 'b' : 'a', uid);
    expect(tombstones.size).toBe(3);
    expect(tombstones.in('a')).toEqual(['u3', 'u4']);
    expect(tombstones.in('b')).toEqual(['u5']);
  });
});
