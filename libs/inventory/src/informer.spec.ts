import { describe, expect, it } from 'vitest';
import { Informer, InformerForbidden, InformerNotServed, type InformerOptions, type InformerTransport, type ListPage } from './informer.js';
import { WatchGone, type WatchEvent } from './watch.js';

/**
 * A FAKE list+watch transport: each call takes the next scripted step. A list step is its pages;
 * a watch step is its events (the stream then ends, or fails with `then`), and `look` runs
 * inside the stream after its events, to see the cache as it is while the watch is open. When
 * the script runs out, the informer is stopped (so the calls end with one the script did not answer).
 */
type Step = { pages: ListPage[] } | { listFails: Error } | { events: WatchEvent[]; then?: Error; look?: () => void; refused?: Error };

function fakeTransport(script: Step[], stop: AbortController) {
  const calls: string[] = [];
  const next = (): Step | undefined => {
    const step = script.shift();
    if (!step) stop.abort();
    return step;
  };
  let pages: ListPage[] = [];
  const transport: InformerTransport = {
    async listPage(token, _signal, whole) {
      calls.push(token === undefined ? (whole ? 'list whole' : 'list') : `list+${token}`);
      if (token === undefined) {
        const step = next();
        if (!step) return { items: [], resourceVersion: '0' };
        if ('listFails' in step) throw step.listFails;
        if (!('pages' in step)) throw new Error('script: expected a list');
        pages = [...step.pages];
      }
      const page = pages.shift() as ListPage;
      if (page === EXPIRED) throw new WatchGone('continue token expired');
      return page;
    },
    async *watch(resourceVersion, _signal, onOpen) {
      calls.push(`watch@${resourceVersion}`);
      const step = next();
      if (!step) return;
      if (!('events' in step)) throw new Error('script: expected a watch');
      if (step.refused) throw step.refused;
      onOpen();
      for (const event of step.events) yield event;
      step.look?.();
      if (step.then) throw step.then;
    },
  };
  return { transport, calls };
}

const pod = (namespace: string, uid: string, phase = 'Running', rv = '1'): Record<string, unknown> => ({
  metadata: { namespace, uid, name: `pod-${uid}`, resourceVersion: rv },
  spec: { containers: [{ name: 'app', image: 'nginx' }] },
  status: { phase },
});
const event = (type: WatchEvent['type'], object: Record<string, unknown>): WatchEvent => ({ type, object });
const bookmark = (rv: string): WatchEvent => event('BOOKMARK', { metadata: { resourceVersion: rv } });
const gone = event('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
/** A page whose continue token the server answers 410. */
const EXPIRED: ListPage = { items: [] };

/** What the tests keep of a pod: its name and phase (not its spec). */
const keep = (object: Record<string, unknown>) => ({
  name: (object['metadata'] as { name: string }).name,
  phase: (object['status'] as { phase: string }).phase,
});

async function run(script: Step[], options: Partial<InformerOptions<ReturnType<typeof keep>>> = {}) {
  const stop = new AbortController();
  const { transport, calls } = fakeTransport(script, stop);
  const states: string[] = [];
  const waits: number[] = [];
  const events: string[] = [];
  /** What the cache answered for namespace a each time its watch broke. */
  const whileBroken: unknown[] = [];
  let clock = 1000;
  const informer = new Informer(transport, {
    keep,
    maxObjects: 100,
    maxBytes: 1_000_000,
    backoffMs: 100,
    maxBackoffMs: 1000,
    overCeilingWaitMs: 60_000,
    sleep: async (ms) => void waits.push(ms),
    now: () => (clock += 10),
    onState: (state) => {
      states.push(state);
      if (state === 'broken') whileBroken.push(informer.objectsIn('a'));
    },
    onEvent: (e, before) => events.push(`${e.type} ${before ? before.phase : '-'}`),
    ...options,
  });
  const seen: Record<string, unknown> = {};
  const look = (label: string) => () => {
    seen[label] = { a: informer.objectsIn('a'), b: informer.objectsIn('b'), state: informer.state, at: informer.currentAt };
  };
  return { informer, calls, states, waits, events, whileBroken, seen, look, start: () => informer.run(stop.signal) };
}

describe('Informer: one kind cached from one list and one watch (fake transport)', () => {
  it('lists every page, answers nothing until its watch is open, then answers per namespace what it keeps', async () => {
    const script: Step[] = [
      {
        pages: [
          { items: [pod('a', '1')], resourceVersion: '7', continue: 'p2' },
          { items: [pod('a', '2'), pod('b', '3')], resourceVersion: '7' },
        ],
      },
    ];
    const t = await run(script);
    script.push({ events: [], look: t.look('open') });
    expect(t.informer.objectsIn('a')).toBeUndefined();
    await t.start();
    expect(t.calls.slice(0, 3)).toEqual(['list', 'list+p2', 'watch@7']);
    expect(t.seen['open']).toMatchObject({
      a: [
        { name: 'pod-1', phase: 'Running' },
        { name: 'pod-2', phase: 'Running' },
      ],
      b: [{ name: 'pod-3', phase: 'Running' }],
      state: 'synced',
    });
    // Stopped: it answers nothing, and holds nothing.
    expect(t.informer.objectsIn('a')).toBeUndefined();
    expect(t.informer.size).toEqual({ objects: 0, bytes: 0 });
  });

  it('applies additions, changes and deletions, telling each with what it held before', async () => {
    const script: Step[] = [{ pages: [{ items: [pod('a', '1')], resourceVersion: '5' }] }];
    const t = await run(script);
    const changes = [
      event('ADDED', pod('a', '2', 'Pending', '6')),
      event('MODIFIED', pod('a', '1', 'Succeeded', '7')),
      event('DELETED', pod('a', '2', 'Pending', '8')),
    ];
    script.push({ events: changes, look: t.look('after') });
    await t.start();
    expect(t.events).toEqual(['ADDED -', 'MODIFIED Running', 'DELETED Pending']);
    expect(t.seen['after']).toMatchObject({ a: [{ name: 'pod-1', phase: 'Succeeded' }], b: [] });
  });

  it('lists again on a 410, answering nothing meanwhile, and holds what the new list holds', async () => {
    const script: Step[] = [{ pages: [{ items: [pod('a', '1'), pod('a', '2')], resourceVersion: '5' }] }];
    const t = await run(script);
    script.push(
      { events: [gone], look: t.look('gone') },
      { pages: [{ items: [pod('a', '2')], resourceVersion: '20' }] },
      { events: [], look: t.look('relisted') },
    );
    await t.start();
    expect(t.calls.slice(0, 4)).toEqual(['list', 'watch@5', 'list', 'watch@20']);
    expect(t.states.slice(0, 3)).toEqual(['synced', 'listing', 'synced']);
    expect(t.seen['relisted']).toMatchObject({ a: [{ name: 'pod-2' }] });
  });

  it('is unsynced while its watch is broken, waits a growing backoff, and resumes from the last resourceVersion without listing', async () => {
    const script: Step[] = [{ pages: [{ items: [pod('a', '1')], resourceVersion: '5' }] }];
    const t = await run(script);
    script.push(
      { events: [bookmark('9')], then: new Error('connection reset') },
      { events: [], refused: new Error('HTTP 503') },
      { events: [], look: t.look('resumed') },
    );
    await t.start();
    expect(t.calls.slice(0, 4)).toEqual(['list', 'watch@5', 'watch@9', 'watch@9']);
    expect(t.whileBroken.slice(0, 2)).toEqual([undefined, undefined]);
    expect(t.waits.slice(0, 2)).toEqual([100, 200]);
    expect(t.seen['resumed']).toMatchObject({ a: [{ name: 'pod-1' }], state: 'synced' });
  });

  it('empties itself and answers nothing past its ceiling of objects, then lists again after a long wait', async () => {
    const script: Step[] = [
      { pages: [{ items: [pod('a', '1'), pod('a', '2'), pod('a', '3')], resourceVersion: '5' }] },
      { pages: [{ items: [pod('a', '1')], resourceVersion: '6' }] },
    ];
    const t = await run(script, { maxObjects: 2 });
    script.push({ events: [event('ADDED', pod('b', '9'))], look: t.look('grown') }, { pages: [{ items: [], resourceVersion: '8' }] });
    await t.start();
    expect(t.states).toContain('over-ceiling');
    expect(t.waits[0]).toBe(60_000);
    // The second list fits (1 object); the watch's addition makes 2, at the ceiling, not past it.
    expect(t.seen['grown']).toMatchObject({ a: [{ name: 'pod-1' }], b: [{ name: 'pod-9' }] });
  });

  it('stops, holding nothing, when it may not list the kind (403)', async () => {
    const t = await run([{ listFails: new InformerForbidden('GET /api/v1/pods: 403') }, { pages: [] }]);
    await t.start();
    expect(t.calls).toEqual(['list']);
    expect(t.informer.state).toBe('forbidden');
  });

  it('is current while synced, and opens a watch that stays silent past silentAfterMs again from where it was', async () => {
    const stop = new AbortController();
    const calls: string[] = [];
    const current: (number | undefined)[] = [];
    // A FAKE stream that hangs after its events (a stalled connection) until the informer gives up on it.
    const stalling: InformerTransport = {
      listPage: async () => ({ items: [], resourceVersion: '5' }),
      async *watch(resourceVersion, signal, onOpen) {
        calls.push(`watch@${resourceVersion}`);
        if (calls.length === 3) return void stop.abort();
        onOpen();
        current.push(informer.currentAt);
        if (resourceVersion === '5') yield bookmark('6');
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      },
    };
    const informer = new Informer(stalling, { keep, maxObjects: 10, maxBytes: 10_000, silentAfterMs: 30, now: () => 42 });
    await informer.run(stop.signal);
    expect(calls).toEqual(['watch@5', 'watch@6', 'watch@6']);
    expect(current).toEqual([42, 42]);
    expect(informer.currentAt).toBeUndefined();
  });

  it('tells a relist after a 410 every object that appeared, went or stayed (what the broken watch missed), but not the first list', async () => {
    const script: Step[] = [{ pages: [{ items: [pod('a', '1'), pod('a', '2')], resourceVersion: '5' }] }];
    const relists: string[][] = [];
    const t = await run(script, {
      onRelist: (changes) => relists.push([...changes].map((c) => `${c.uid} ${c.before?.phase ?? '-'} -> ${c.after?.phase ?? '-'}`).sort()),
    });
    script.push(
      { events: [gone] },
      { pages: [{ items: [pod('a', '2', 'Succeeded'), pod('b', '3')], resourceVersion: '20' }] },
      { events: [] },
    );
    await t.start();
    expect(relists).toEqual([['1 Running -> -', '2 Running -> Succeeded', '3 - -> Running']]);
  });

  it('tells no relist after it was emptied past its ceiling: what it held is gone, and its objects are not news', async () => {
    const script: Step[] = [
      { pages: [{ items: [pod('a', '1'), pod('a', '2'), pod('a', '3')], resourceVersion: '5' }] },
      { pages: [{ items: [pod('a', '1')], resourceVersion: '6' }] },
      { events: [] },
    ];
    let relisted = 0;
    const t = await run(script, { maxObjects: 2, onRelist: () => void relisted++ });
    await t.start();
    expect(t.states).toContain('over-ceiling');
    expect(relisted).toBe(0);
  });

  it('says a kind the server does not serve (404) is not served, holding nothing, and lists it again after a long wait', async () => {
    const t = await run([{ listFails: new InformerNotServed('no such resource') }, { listFails: new InformerNotServed('still none') }]);
    await t.start();
    expect(t.states.slice(0, 3)).toEqual(['not-served', 'listing', 'not-served']);
    expect(t.waits.slice(0, 2)).toEqual([60_000, 60_000]);
    expect(t.calls.slice(0, 2)).toEqual(['list', 'list']);
  });

  it('lets a listing wait while the cache fills: settled() resolves when it is synced, or after its time', async () => {
    const script: Step[] = [{ pages: [{ items: [pod('a', '1')], resourceVersion: '5' }] }];
    const t = await run(script);
    const order: string[] = [];
    const waited = t.informer.settled(60_000).then(() => order.push(`settled ${t.informer.state}`));
    script.push({ events: [], look: () => order.push('open') });
    await t.start();
    await waited;
    expect(order).toContain('settled synced');
    const idle = new Informer(fakeTransport([], new AbortController()).transport, { keep, maxObjects: 1, maxBytes: 1 });
    const started = Date.now();
    await idle.settled(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('reads a list whose continue token expired (410) again whole, in one answer, not paged again', async () => {
    const script: Step[] = [
      { pages: [{ items: [pod('a', '1')], resourceVersion: '5', continue: 'p2' }, EXPIRED] },
      { pages: [{ items: [pod('a', '1'), pod('a', '2')], resourceVersion: '9' }] },
    ];
    const t = await run(script);
    script.push({ events: [], look: t.look('listed') });
    await t.start();
    expect(t.calls.slice(0, 4)).toEqual(['list', 'list+p2', 'list whole', 'watch@9']);
    expect(t.seen['listed']).toMatchObject({ a: [{ name: 'pod-1' }, { name: 'pod-2' }], state: 'synced' });
  });

  it('lists a not-served kind again at once when asked (retryNow), not only after the long wait', async () => {
    const stop = new AbortController();
    let lists = 0;
    const transport: InformerTransport = {
      async listPage() {
        if (++lists === 1) throw new InformerNotServed('no such resource');
        return { items: [pod('a', '1')], resourceVersion: '3' };
      },
      async *watch(_version, signal, onOpen) {
        onOpen();
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        yield* [];
      },
    };
    const informer = new Informer(transport, { keep, maxObjects: 10, maxBytes: 10_000, overCeilingWaitMs: 3_600_000 });
    const running = informer.run(stop.signal);
    await informer.settled(1000);
    expect(informer.state).toBe('not-served');
    informer.retryNow();
    expect(informer.state).toBe('listing');
    await informer.settled(1000);
    expect(informer.objectsIn('a')).toEqual([{ name: 'pod-1', phase: 'Running' }]);
    stop.abort();
    await running;
  });
});
