import { describe, expect, it } from 'vitest';
import { WatchSettler } from './settle-on-watch.js';

describe('WatchSettler', () => {
  it('settles a namespace at once, once at a time, and once more for signals that arrived while it ran', async () => {
    const calls: string[] = [];
    const gates: (() => void)[] = [];
    const settler = new WatchSettler(
      (namespace) =>
        new Promise<void>((resolve) => {
          calls.push(namespace);
          gates.push(resolve);
        }),
    );
    settler.signal({ namespace: 'a' });
    settler.signal({ namespace: 'b' });
    expect(calls).toEqual(['a', 'b']);
    // Three signals for a while its settle runs: one more settle, after it.
    settler.signal({ namespace: 'a' });
    settler.signal({ namespace: 'a' });
    settler.signal({ namespace: 'a' });
    expect(calls).toEqual(['a', 'b']);
    gates.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['a', 'b', 'a']);
    for (const open of gates.splice(0)) open();
    await settler.idle();
    expect(calls).toEqual(['a', 'b', 'a']);
    expect(settler.stats).toEqual({ signals: 5, settles: 3, failures: 0 });
  });

  it('a failed settle is logged and counted; the next signal tries again', async () => {
    let fail = true;
    const logged: string[] = [];
    const settler = new WatchSettler(
      async () => {
        if (fail) throw new Error('listing failed');
      },
      (_level, msg) => logged.push(msg),
    );
    settler.signal({ namespace: 'a' });
    await settler.idle();
    fail = false;
    settler.signal({ namespace: 'a' });
    await settler.idle();
    expect(settler.stats).toEqual({ signals: 2, settles: 1, failures: 1 });
    expect(logged).toEqual(['settle after a watch event failed']);
  });
});
