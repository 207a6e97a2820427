import { describe, expect, it } from 'vitest';
import { runWatchLoop, WatchGone, type WatchEvent, type WatchTransport } from './watch.js';

/**
 * A FAKE watch transport: each list and each watch call takes the next scripted answer. A
 * watch answer is events (then the stream ends), an error thrown before any event, or events
 * then an error. Calls are recorded; when the script runs out, the loop is stopped.
 */
type Step = { list: string } | { listFails: Error } | { events: WatchEvent[]; then?: Error };

function fakeStream(script: Step[], stop: AbortController) {
  const calls: string[] = [];
  const next = (): Step | undefined => {
    const step = script.shift();
    if (!step) stop.abort();
    return step;
  };
  const transport: WatchTransport = {
    async list() {
      const step = next();
      calls.push('list');
      if (!step) return '0';
      if ('listFails' in step) throw step.listFails;
      if (!('list' in step)) throw new Error('script: expected a list');
      return step.list;
    },
    async *watch(resourceVersion) {
      calls.push(`watch@${resourceVersion}`);
      const step = next();
      if (!step) return;
      if (!('events' in step)) throw new Error('script: expected a watch');
      for (const event of step.events) yield event;
      if (step.then) throw step.then;
    },
  };
  return { transport, calls };
}

const pod = (type: WatchEvent['type'], name: string, rv: string): WatchEvent => ({
  type,
  object: { metadata: { name, resourceVersion: rv } },
});
const bookmark = (rv: string): WatchEvent => ({ type: 'BOOKMARK', object: { metadata: { resourceVersion: rv } } });
const gone: WatchEvent = {
  type: 'ERROR',
  object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 5 (9)' },
};

async function run(script: Step[]) {
  const stop = new AbortController();
  const { transport, calls } = fakeStream(script, stop);
  const events: string[] = [];
  const waits: number[] = [];
  const states: string[] = [];
  await runWatchLoop(transport, stop.signal, {
    backoffMs: 100,
    maxBackoffMs: 1000,
    sleep: async (ms) => void waits.push(ms),
    onEvent: (e) => events.push(`${e.type} ${String((e.object['metadata'] as { name?: string }).name)}`),
    onState: (state) => states.push(state),
  });
  return { calls, events, waits, states };
}

describe('the watch loop, against a fake stream', () => {
  it('lists once, watches from that resourceVersion, and resumes from the last one seen (bookmarks included) when a watch ends', async () => {
    const { calls, events, waits } = await run([
      { list: '10' },
      { events: [pod('ADDED', 'a', '11'), bookmark('15')] },
      { events: [pod('DELETED', 'a', '16')] },
    ]);
    expect(calls).toEqual(['list', 'watch@10', 'watch@15', 'watch@16']);
    expect(events).toEqual(['ADDED a', 'DELETED a']);
    expect(waits).toEqual([]);
  });

  it('lists again on a 410 ERROR event, and on a watch refused with WatchGone, without waiting', async () => {
    const { calls, states, waits } = await run([
      { list: '10' },
      { events: [pod('MODIFIED', 'a', '12'), gone] },
      { list: '40' },
      { events: [], then: new WatchGone() },
      { list: '50' },
      { events: [pod('ADDED', 'b', '51')] },
    ]);
    expect(calls).toEqual(['list', 'watch@10', 'list', 'watch@40', 'list', 'watch@50', 'watch@51']);
    expect(states.filter((s) => s === 'relist')).toHaveLength(2);
    expect(waits).toEqual([]);
  });

  it('backs off on failures, doubling up to the cap, reset by the next event; a failed watch resumes from its resourceVersion', async () => {
    const broken = new Error('ECONNRESET');
    const { calls, waits } = await run([
      { listFails: broken },
      { listFails: broken },
      { list: '10' },
      { events: [], then: broken },
      { events: [], then: broken },
      { events: [], then: broken },
      { events: [], then: broken },
      { events: [], then: broken },
      { events: [pod('ADDED', 'a', '11')], then: broken },
    ]);
    expect(waits).toEqual([100, 200, 400, 800, 1000, 1000, 1000, 100]);
    expect(calls).toEqual(['list', 'list', 'list', 'watch@10', 'watch@10', 'watch@10', 'watch@10', 'watch@10', 'watch@10', 'watch@11']);
  });

  it('a 410 while listing is a failure (waited out), not a tight relist loop; a watch ending without events waits too', async () => {
    const { waits, calls } = await run([{ listFails: new WatchGone() }, { list: '10' }, { events: [] }]);
    expect(waits).toEqual([100, 200]);
    expect(calls).toEqual(['list', 'list', 'watch@10', 'watch@10']);
  });
});
