import { describe, expect, it } from 'vitest';
import type { ClusterNamespace } from '@quota/inventory';
import { ManagedLabels, type NamespaceLabelApi } from './managed-labels.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const LABEL = 'quota-ledger.io/managed';
const SINCE = 'quota-ledger.io/managed-since';

/** A cluster of Namespaces in memory, a clock the test moves, and a record of every write and wait. */
function harness(namespaces: ClusterNamespace[], options: { refuse?: boolean } = {}) {
  const stored = new Map(namespaces.map((n) => [n.name, n]));
  const writes: string[] = [];
  const waits: number[] = [];
  let now = T0;
  const api: NamespaceLabelApi = {
    read: async (name) => stored.get(name) ?? null,
    mark: async (name, since) => {
      if (options.refuse) throw new Error('namespaces "x" is forbidden: User cannot patch resource "namespaces"');
      const namespace = stored.get(name);
      if (!namespace) return 'gone';
      writes.push(`${name}=${since ?? 'removed'}`);
      const { [LABEL]: _label, ...labels } = namespace.labels ?? {};
      const { [SINCE]: _since, ...annotations } = namespace.annotations ?? {};
      stored.set(
        name,
        since === null
          ? { name, labels, annotations }
          : { name, labels: { ...labels, [LABEL]: 'true' }, annotations: { ...annotations, [SINCE]: since } },
      );
      return 'patched';
    },
  };
  const labels = new ManagedLabels(api, {
    now: async () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  });
  return { labels, writes, waits, stored, advance: (ms: number) => (now += ms) };
}

const labelled = (name: string, since: number): ClusterNamespace => ({
  name,
  labels: { [LABEL]: 'true' },
  annotations: { [SINCE]: new Date(since).toISOString() },
});

describe('ManagedLabels.ensure: the label in place before a first count', () => {
  it('labels a namespace that lacks it, then waits the propagation delay before the listing may begin', async () => {
    const { labels, writes, waits } = harness([{ name: 'team-a' }]);
    expect(await labels.ensure('team-a')).toBe(true);
    expect(writes).toEqual([`team-a=${new Date(T0).toISOString()}`]);
    expect(waits).toEqual([1000]);
  });

  it('waits only what is left of the delay when another replica labelled it a moment ago, and nothing for an old label', async () => {
    const recent = harness([labelled('team-a', T0 - 300)]);
    expect(await recent.labels.ensure('team-a')).toBe(true);
    expect([recent.writes, recent.waits]).toEqual([[], [700]]);
    const old = harness([labelled('team-a', T0 - 60_000)]);
    expect(await old.labels.ensure('team-a')).toBe(true);
    expect([old.writes, old.waits]).toEqual([[], []]);
  });

  it('stamps a label set by hand without a time, since it cannot say how long the webhooks have been sent the namespace', async () => {
    const { labels, writes, waits } = harness([{ name: 'team-a', labels: { [LABEL]: 'true' } }]);
    expect(await labels.ensure('team-a')).toBe(true);
    expect(writes).toHaveLength(1);
    expect(waits).toEqual([1000]);
  });

  it('answers false when the label cannot be set (RBAC refuses the patch) or the Namespace is gone', async () => {
    expect(await harness([{ name: 'team-a' }], { refuse: true }).labels.ensure('team-a')).toBe(false);
    expect(await harness([]).labels.ensure('team-a')).toBe(false);
  });
});

describe('ManagedLabels.sweep: the fan-out over every Namespace', () => {
  it('labels what the ledger manages, unlabels what it does not, and labels again one made managed while its label came off', async () => {
    const { labels, writes, stored } = harness([
      { name: 'new' },
      labelled('left', T0 - 1),
      labelled('kept', T0 - 1),
      labelled('racing', T0 - 1),
      { name: 'plain' },
    ]);
    let racingAsked = 0;
    // 'racing' is unmanaged when asked before its label comes off, managed right after.
    const isManaged = async (name: string) => name === 'racing' && ++racingAsked > 1;
    const outcome = await labels.sweep([...stored.values()], new Set(['new', 'kept']), isManaged);
    expect(outcome).toEqual({ labelled: 1, unlabelled: 2 });
    expect(writes.map((w) => w.replace(/=\d{4}-.*/, '=set'))).toEqual(['new=set', 'left=removed', 'racing=removed', 'racing=set']);
    expect([...stored.values()].filter((n) => n.labels?.[LABEL]).map((n) => n.name)).toEqual(['new', 'kept', 'racing']);
  });
});
