import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubernetesInventory, type WatchState } from '@quota/inventory';
import { sendJson, startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';

/**
 * A FAKE API server whose discovery serves a custom resource (widgets.example.com) only while the
 * test says its CRD is installed: the kubernetes inventory's watches, reading discovery again
 * every discovery TTL (100 ms here), start a watch of widgets once it is served and stop it once
 * it is not, without a restart (watch-kinds.ts). Every list answers empty at resourceVersion 1;
 * every watch is held open until the client leaves.
 */
const WIDGETS = '/apis/example.com/v1/widgets';
let installed = false;
let fake: FakeApiServer;
const widgetWatches = { opened: 0, open: 0 };

beforeAll(async () => {
  fake = await startFakeApiServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    if (url.pathname === '/api/v1') return sendJson(response, 200, JSON.stringify({ resources: [] }));
    if (url.pathname === '/apis')
      return sendJson(
        response,
        200,
        JSON.stringify({ groups: installed ? [{ name: 'example.com', preferredVersion: { groupVersion: 'example.com/v1' } }] : [] }),
      );
    if (url.pathname === '/apis/example.com/v1') {
      if (!installed) return sendJson(response, 404, JSON.stringify({ kind: 'Status', code: 404 }));
      return sendJson(
        response,
        200,
        JSON.stringify({ resources: [{ name: 'widgets', kind: 'Widget', namespaced: true, verbs: ['list', 'watch'] }] }),
      );
    }
    if (url.searchParams.get('watch') !== '1')
      return sendJson(response, 200, JSON.stringify({ kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '1' }, items: [] }));
    response.writeHead(200, { 'content-type': 'application/json' });
    if (url.pathname === WIDGETS) {
      widgetWatches.opened++;
      widgetWatches.open++;
      response.on('close', () => void widgetWatches.open--);
    }
    // Held open until the client leaves.
  });
});
afterAll(async () => {
  await fake?.close();
});

async function until(what: string, probe: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('kubernetes inventory: the watched kinds follow discovery (fake API server)', () => {
  it('watches a custom resource installed after the watches started, and stops when it is removed', async () => {
    const source = createKubernetesInventory({ kubeconfigPath: fake.kubeconfig, discoveryTtlMs: 100 });
    const states: WatchState[] = [];
    const stop = new AbortController();
    const done = source.watchSettlements?.(
      () => undefined,
      stop.signal,
      (state) => states.push(state),
    );
    try {
      // Several discoveries without it: not watched.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(widgetWatches.opened).toBe(0);
      installed = true;
      await until('a watch of widgets', () => widgetWatches.open === 1);
      expect(states.filter((s) => s.resource === 'widgets.example.com').map((s) => s.state)).toContain('started');
      installed = false;
      await until('the watch of widgets stopped', () => widgetWatches.open === 0);
      expect(
        states.filter((s) => s.resource === 'widgets.example.com' && (s.state === 'started' || s.state === 'stopped')).map((s) => s.state),
      ).toEqual(['started', 'stopped']);
      expect(widgetWatches.opened).toBe(1);
    } finally {
      stop.abort();
      await done;
    }
  });
});
