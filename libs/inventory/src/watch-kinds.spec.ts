import { describe, expect, it } from 'vitest';
import { discoverKinds } from './discovery.js';
import { formatResource, KNOWN_KINDS, type KnownKind } from './kinds.js';
import { watchDiscoveredKinds } from './watch-kinds.js';

/**
 * The watched kinds follow discovery: a FAKE discovery (the documents the API server would
 * serve, as in discovery.spec.ts, changed by the test), FAKE watches (recorded, running until
 * stopped) and a FAKE clock (each tick is one discovery interval).
 */
const resource = (name: string, kind: string) => ({ name, kind, namespaced: true, verbs: ['get', 'list', 'watch'] });
const pods = KNOWN_KINDS.find((k) => k.groupResource.group === '' && k.groupResource.resource === 'pods') as KnownKind;
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function harness(failingAtFirst = false) {
  const documents: Record<string, unknown> = {
    '/api/v1': { resources: [resource('serviceaccounts', 'ServiceAccount')] },
    '/apis': { groups: [] },
  };
  let failing = failingAtFirst;
  const watched = new Set<string>();
  const log: string[] = [];
  const waiters: (() => void)[] = [];
  const stop = new AbortController();
  const key = (kind: KnownKind) => `${formatResource(kind.groupResource)}@${kind.apiVersion}`;
  const done = watchDiscoveredKinds(stop.signal, {
    fixed: [pods],
    discover: () => (failing ? Promise.reject(new Error('HTTP 503')) : discoverKinds(async (path) => documents[path] ?? null)),
    everyMs: 300_000,
    watch: (kind, signal) =>
      new Promise<void>((resolve) => {
        watched.add(key(kind));
        signal.addEventListener('abort', () => (watched.delete(key(kind)), resolve()), { once: true });
      }),
    sleep: (_ms, signal) =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    onChange: ({ started, stopped }) => log.push(`+${started.map(key).join(',')} -${stopped.map(key).join(',')}`),
    onDiscoveryFailed: (error) => log.push(`failed: ${(error as Error).message}`),
  });
  const tick = async () => {
    waiters.shift()?.();
    await flush();
  };
  const serveGroup = (groupVersion: string, list: unknown) => {
    documents['/apis'] = { groups: [{ preferredVersion: { groupVersion } }] };
    documents[`/apis/${groupVersion}`] = list;
  };
  return { documents, watched, log, stop, done, tick, serveGroup, setFailing: (value: boolean) => void (failing = value) };
}

describe('the watched kinds follow discovery', () => {
  it('starts a watch for a kind that appears (a CRD installed later), stops the one of a kind that is gone, and re-watches a kind whose version changed', async () => {
    const h = harness();
    await flush();
    expect([...h.watched].sort()).toEqual(['pods@v1', 'serviceaccounts@v1']);
    // A CRD installed: watched at the next discovery, not before.
    h.serveGroup('example.com/v1', { resources: [resource('widgets', 'Widget')] });
    expect(h.watched.has('widgets.example.com@example.com/v1')).toBe(false);
    await h.tick();
    expect([...h.watched].sort()).toEqual(['pods@v1', 'serviceaccounts@v1', 'widgets.example.com@example.com/v1']);
    // Nothing changed: nothing restarted.
    await h.tick();
    // Its preferred version changes: watched in the new one.
    h.serveGroup('example.com/v2', { resources: [resource('widgets', 'Widget')] });
    await h.tick();
    expect([...h.watched].sort()).toEqual(['pods@v1', 'serviceaccounts@v1', 'widgets.example.com@example.com/v2']);
    // The CRD removed: its watch stopped.
    h.documents['/apis'] = { groups: [] };
    await h.tick();
    expect([...h.watched].sort()).toEqual(['pods@v1', 'serviceaccounts@v1']);
    expect(h.log).toEqual([
      '+widgets.example.com@example.com/v1 -',
      '+widgets.example.com@example.com/v2 -widgets.example.com@example.com/v1',
      '+ -widgets.example.com@example.com/v2',
    ]);
    h.stop.abort();
    await h.done;
    expect(h.watched.size).toBe(0);
  });

  it('a failed discovery keeps what is watched (the fixed kinds when it never succeeded) and is tried again', async () => {
    const h = harness(true);
    await flush();
    expect([...h.watched]).toEqual(['pods@v1']);
    h.setFailing(false);
    await h.tick();
    expect([...h.watched].sort()).toEqual(['pods@v1', 'serviceaccounts@v1']);
    h.setFailing(true);
    await h.tick();
    expect([...h.watched].sort()).toEqual(['pods@v1', 'serviceaccounts@v1']);
    expect(h.log).toEqual(['failed: HTTP 503', '+serviceaccounts@v1 -', 'failed: HTTP 503']);
    h.stop.abort();
    await h.done;
    expect(h.watched.size).toBe(0);
  });
});
