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

const object = (name: string): ClusterObject => ({
  metadata: { name, namespace: 'team-a', resourceVersion: '2' },
  spec: { hard: { pods: '1' } },
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** A kind whose passes the test counts; a pass waits for `release()` when `hold` is set. */
function countingKind() {
  const state = { lists: 0, hold: undefined as Promise<void> | undefined };
  const kind: SyncedKind<unknown, { hard: Record<string, string>; used: Record<string, string> }> = {
    label: 'test quotas',
    managedBy: 'test',
    definitionOf: (object) => object,
    put: async () => ({ changed: false, view: { hard: {}, used: {} } }),
    held: async () => [],
    remove: async () => undefined,
  };
  const api = (changes?: WatchTransport): ClusterObjectApi => ({
    list: async () => {
      state.lists++;
      await state.hold;
      return [object('compute')];
    },
    updateStatus: async () => 'updated',
    ...(changes ? { changes } : {}),
  });
  return { state, kind, api };
}

describe('DefinitionSync, watching its kind', () => {
  it('passes at once on a change, not only at the interval', async () => {
    const watch = fakeWatch();
    const { state, kind, api } = countingKind();
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    expect(state.lists, 'the first pass').toBe(1);
    watch.send({ type: 'ADDED', object: { metadata: { name: 'compute', resourceVersion: '3' } } });
    await settle();
    expect(state.lists, 'a pass for the change').toBe(2);
    watch.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '4' } } });
    await settle();
    expect(state.lists, 'no pass for a bookmark').toBe(2);
    await sync.stop();
    expect(watch.watches()).toBe(1);
  });

  it('follows a pass in hand with exactly one more, however many changes came during it', async () => {
    const watch = fakeWatch();
    const { state, kind, api } = countingKind();
    let release = () => {};
    state.hold = new Promise<void>((resolve) => (release = resolve));
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    for (let i = 0; i < 5; i++)
      watch.send({ type: 'MODIFIED', object: { metadata: { name: 'compute', resourceVersion: String(10 + i) } } });
    await settle();
    expect(state.lists, 'the first pass still runs').toBe(1);
    state.hold = undefined;
    release();
    await settle();
    expect(state.lists).toBe(2);
    await sync.stop();
  });

  it('passes again after a relist (the server forgot the watch’s point, changes may be missed)', async () => {
    const watch = fakeWatch();
    const { state, kind, api } = countingKind();
    const sync = new DefinitionSync(kind, api(watch.transport));
    sync.start(3_600_000);
    await settle();
    watch.send({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    await settle();
    expect(state.lists).toBe(2);
    await sync.stop();
  });

  it('starts no pass for the MODIFIED events of its own status writes, early or late, and one for anyone else’s', async () => {
    const watch = fakeWatch();
    const { state, kind, api } = countingKind();
    let writes = 0;
    let answerWrite = () => {};
    const statusKind: typeof kind = {
      ...kind,
      totals: (view) => view,
      put: async () => ({ changed: false, view: { hard: { pods: '1' }, used: { pods: String(state.lists) } } }),
    };
    const statusApi: ClusterObjectApi = {
      ...api(watch.transport),
      // The write's event reaches the watch before its answer reaches the pass, as it may on a real server.
      updateStatus: async (_object, _status, written) => {
        const version = String(100 + ++writes);
        watch.send({ type: 'MODIFIED', object: { metadata: { name: 'compute', resourceVersion: version } } });
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
    expect([state.lists, writes], 'one pass, one write, its own event ignored').toEqual([1, 1]);
    watch.send({ type: 'MODIFIED', object: { metadata: { name: 'compute', resourceVersion: '101' } } });
    await settle();
    expect(state.lists, 'a late copy of its own event').toBe(1);
    watch.send({ type: 'MODIFIED', object: { metadata: { name: 'compute', resourceVersion: '555' } } });
    await settle();
    answerWrite();
    await settle();
    expect([state.lists, writes], 'someone else’s change: one pass').toEqual([2, 2]);
    await sync.stop();
  });

  it('says once that a kind is not served (a CRD not installed), and once that it is watched when it comes', async () => {
    const { kind, api } = countingKind();
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
    const { state, kind, api } = countingKind();
    const sync = new DefinitionSync(kind, api());
    sync.start(50);
    await new Promise((resolve) => setTimeout(resolve, 130));
    await sync.stop();
    expect(state.lists).toBeGreaterThanOrEqual(2);
    expect(state.lists).toBeLessThanOrEqual(4);
  });
});
