import { describe, expect, it } from 'vitest';
import type { WatchEvent, WatchTransport } from '@quota/inventory';
import type { ClusterObject, ClusterObjectApi } from './cluster-object-api.js';
import { DefinitionSync, type SyncedKind } from './definition-sync.js';

/** A watch whose events the test sends; `end()` closes the stream as a server would. */
function fakeWatch() {
  const waiting: ((event: IteratorResult<WatchEvent>) => void)[] = [];
  const queued: WatchEvent[] = [];
  let watches = 0;
  const transport: WatchTransport = {
    list: async () => '1',
    watch: (_version, signal) => {
      watches++;
      return {
        [Symbol.asyncIterator]: () => ({
          next: () =>
            new Promise<IteratorResult<WatchEvent>>((resolve) => {
              const event = queued.shift();
              if (event) return resolve({ value: event, done: false });
              if (signal.aborted) return resolve({ value: undefined, done: true });
              waiting.push(resolve);
              signal.addEventListener('abort', () => resolve({ value: undefined, done: true }), { once: true });
            }),
        }),
      };
    },
  };
  const send = (event: WatchEvent) => {
    const next = waiting.shift();
    if (next) next({ value: event, done: false });
    else queued.push(event);
  };
  return { transport, send, watches: () => watches };
}

type Pods = { hard: Record<string, string>; used: Record<string, string> };

const object = (name: string, pods = '1', resourceVersion = '2'): ClusterObject => ({
  metadata: { name, namespace: 'team-a', resourceVersion },
  spec: { hard: { pods } },
});
const event = (type: WatchEvent['type'], name: string, pods: string, resourceVersion: string): WatchEvent => ({
  type,
  object: object(name, pods, resourceVersion) as unknown as Record<string, unknown>,
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
const gate = () => {
  let open = () => {};
  const closed = new Promise<void>((resolve) => (open = resolve));
  return { closed, open };
};

/**
 * A kind over a FAKE ledger (a map of hard pods by name, all held by the cluster) and a FAKE
 * cluster (`cluster`, listed whole): what was put and removed, in order, and how often the kind
 * was listed. `holdList` / `holdPut` make the next listing or put wait for the test.
 */
function fakeKind() {
  const ledger = new Map<string, string>();
  const state = {
    lists: 0,
    cluster: [object('compute')],
    log: [] as string[],
    holdList: undefined as Promise<void> | undefined,
    holdPut: undefined as Promise<void> | undefined,
  };
  const kind: SyncedKind<ClusterObject, Pods> = {
    label: 'test quotas',
    managedBy: 'test',
    definitionOf: (o) => o,
    put: async (_namespace, definition) => {
      const pods = (definition.spec as { hard: { pods: string } }).hard.pods;
      state.log.push(`put ${definition.metadata.name}=${pods}`);
      await state.holdPut;
      const changed = ledger.get(definition.metadata.name) !== pods;
      ledger.set(definition.metadata.name, pods);
      return { changed, view: { hard: { pods }, used: { pods: String(state.lists) } } };
    },
    held: async () => [...ledger.keys()].map((name) => ({ namespace: 'team-a', name })),
    remove: async (_namespace, name) => {
      state.log.push(`remove ${name}`);
      ledger.delete(name);
    },
  };
  const api = (changes?: WatchTransport): ClusterObjectApi => ({
    list: async () => {
      state.lists++;
      const listed = [...state.cluster];
      await state.holdList;
      return listed;
    },
    updateStatus: async () => 'updated',
    ...(changes ? { changes } : {}),
  });
  return { state, ledger, kind, api };
}

describe('DefinitionSync, watching its kind', () => {
  it('syncs the one object a change names, at once, with no listing; a bookmark syncs nothing', async () => {
    const watch = fakeWatch();
    const { state, ledger, kind, api } = fakeKind();
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    expect([state.lists, state.log], 'the first pass').toEqual([1, ['put compute=1']]);
    watch.send(event('ADDED', 'memory', '7', '3'));
    watch.send(event('MODIFIED', 'compute', '2', '4'));
    await settle();
    expect(state.lists, 'no listing for a change').toBe(1);
    expect(state.log.slice(1).sort()).toEqual(['put compute=2', 'put memory=7']);
    watch.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '5' } } });
    await settle();
    expect([state.lists, state.log.length], 'nothing for a bookmark').toEqual([1, 3]);
    expect(Object.fromEntries(ledger)).toEqual({ compute: '2', memory: '7' });
    await sync.stop();
    expect(watch.watches()).toBe(1);
  });

  it('removes the definition of a DELETED object the cluster held, and leaves one it does not hold', async () => {
    const watch = fakeWatch();
    const { state, ledger, kind, api } = fakeKind();
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    watch.send(event('DELETED', 'compute', '1', '3'));
    watch.send(event('DELETED', 'made-by-rest', '1', '4'));
    await settle();
    expect(state.log).toEqual(['put compute=1', 'remove compute']);
    expect(ledger.size).toBe(0);
    await sync.stop();
  });

  it('syncs a change while a pass is in hand: a slow listing holds back no event', async () => {
    const watch = fakeWatch();
    const { state, kind, api } = fakeKind();
    const list = gate();
    state.holdList = list.closed;
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    watch.send(event('ADDED', 'memory', '7', '3'));
    await settle();
    expect(state.log, 'the pass still lists').toEqual(['put memory=7']);
    list.open();
    await settle();
    await sync.stop();
  });

  it('syncs the latest of the changes that came while its key was in hand, once', async () => {
    const watch = fakeWatch();
    const { state, ledger, kind, api } = fakeKind();
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    const put = gate();
    state.holdPut = put.closed;
    watch.send(event('MODIFIED', 'compute', '2', '3'));
    await settle();
    for (let i = 0; i < 5; i++) watch.send(event('MODIFIED', 'compute', String(10 + i), String(10 + i)));
    await settle();
    state.holdPut = undefined;
    put.open();
    await settle();
    expect(state.log).toEqual(['put compute=1', 'put compute=2', 'put compute=14']);
    expect(ledger.get('compute')).toBe('14');
    await sync.stop();
  });

  it('does not put back what its listing saw of an object changed (or created) after the listing began', async () => {
    const watch = fakeWatch();
    const { state, ledger, kind, api } = fakeKind();
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    const list = gate();
    state.holdList = list.closed;
    const pass = sync.sync();
    await settle();
    watch.send(event('MODIFIED', 'compute', '5', '3'));
    watch.send(event('ADDED', 'memory', '7', '4'));
    await settle();
    list.open();
    await pass;
    // The listing had compute=1 and no memory: it neither puts compute back to 1 nor removes memory.
    expect(state.log).toEqual(['put compute=1', 'put compute=5', 'put memory=7']);
    expect(Object.fromEntries(ledger)).toEqual({ compute: '5', memory: '7' });
    await sync.stop();
  });

  it('a pass puts every object and removes what the cluster held of objects gone', async () => {
    const { state, ledger, kind, api } = fakeKind();
    ledger.set('gone', '3');
    state.cluster = [object('compute'), object('memory', '4')];
    const outcome = await new DefinitionSync(kind, api()).sync();
    expect(outcome).toEqual({ put: 2, removed: 1, statuses: 0, refused: 0 });
    expect(Object.fromEntries(ledger)).toEqual({ compute: '1', memory: '4' });
  });

  it('passes again after a relist (the server forgot the watch’s point, changes may be missed)', async () => {
    const watch = fakeWatch();
    const { state, kind, api } = fakeKind();
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    watch.send({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    await settle();
    expect(state.lists).toBe(2);
    await sync.stop();
  });

  it('queues nothing for the MODIFIED events of its own status writes, early or late, and syncs anyone else’s', async () => {
    const watch = fakeWatch();
    const { state, kind, api } = fakeKind();
    let writes = 0;
    let answerWrite = () => {};
    const statusKind: typeof kind = { ...kind, totals: (view) => view };
    const statusApi: ClusterObjectApi = {
      ...api(watch.transport),
      // The write's event reaches the watch before its answer reaches the sync, as it may on a real server.
      updateStatus: async (_object, _status, written) => {
        const version = String(100 + ++writes);
        watch.send(event('MODIFIED', 'compute', '1', version));
        await new Promise<void>((resolve) => (answerWrite = resolve));
        written?.(version);
        return 'updated';
      },
    };
    const sync = new DefinitionSync(statusKind, statusApi);
    sync.start(3_600_000);
    await settle();
    answerWrite();
    await settle();
    expect([state.log.length, writes], 'one put, one write, its own event ignored').toEqual([1, 1]);
    watch.send(event('MODIFIED', 'compute', '1', '101'));
    await settle();
    expect(state.log.length, 'a late copy of its own event').toBe(1);
    watch.send(event('MODIFIED', 'compute', '3', '555'));
    await settle();
    answerWrite();
    await settle();
    expect([state.log, writes], 'someone else’s change: one sync').toEqual([['put compute=1', 'put compute=3'], 2]);
    expect(state.lists).toBe(1);
    await sync.stop();
  });

  it('says once that a kind is not served (a CRD not installed), and once that it is watched when it comes', async () => {
    const { kind, api } = fakeKind();
    let served = false;
    const logs: string[] = [];
    const transport: WatchTransport = {
      list: async () => {
        if (!served) throw new Error('GET /apis/quota-ledger.io/v1alpha1/ledgerquotas: HTTP 404: 404 page not found');
        return '1';
      },
      watch: fakeWatch().transport.watch,
    };
    const sync = new DefinitionSync(kind, api(transport), { log: (level, msg) => logs.push(`${level} ${msg}`) });
    sync.start(3_600_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    served = true;
    await new Promise((resolve) => setTimeout(resolve, 500));
    await sync.stop();
    expect(logs.filter((l) => !l.includes('synced from the cluster'))).toEqual([
      'info test quotas: not served by the cluster (its CRD not installed?); watched once it is',
      'info watching test quotas',
    ]);
  });

  it('without a watch, passes at the interval only', async () => {
    const { state, kind, api } = fakeKind();
    const sync = new DefinitionSync(kind, api());
    sync.start(50);
    await new Promise((resolve) => setTimeout(resolve, 130));
    await sync.stop();
    expect(state.lists).toBeGreaterThanOrEqual(2);
    expect(state.lists).toBeLessThanOrEqual(4);
  });
});
