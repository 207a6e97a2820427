import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubernetesInventory, type SettleSignal } from '@quota/inventory';
import { sendJson, startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';

/**
 * A FAKE API server (node:http) streaming scripted watch events, for the Kubernetes side of the
 * watch (kube-watch.ts): cluster-wide lists (limit=1, for the resourceVersion) and watches of
 * pods and secrets only (discovery is not served: the fixed kinds are watched, the others
 * answer 404 and are retried with backoff). The first pods watch streams a pod going Running
 * then Succeeded (twice: reported once), then a 410 ERROR; the pods list is then asked again
 * and the second watch streams a pod's deletion. The secrets watch streams a deletion.
 */
interface Seen {
  readonly path: string;
  readonly query: Record<string, string>;
  readonly accept: string | undefined;
}
const seen: Seen[] = [];
let podWatches = 0;
let fake: FakeApiServer;

const line = (response: ServerResponse, event: object): void => void response.write(`${JSON.stringify(event)}\n`);
const podEvent = (type: string, name: string, phase: string, rv: string) => ({
  type,
  object: { kind: 'Pod', metadata: { name, namespace: 'team-a', uid: `uid-${name}`, resourceVersion: rv }, status: { phase } },
});

beforeAll(async () => {
  fake = await startFakeApiServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    seen.push({ path: url.pathname, query: Object.fromEntries(url.searchParams), accept: request.headers.accept });
    const watching = url.searchParams.get('watch') === '1';
    if (url.pathname === '/api/v1/pods' && !watching)
      return sendJson(
        response,
        200,
        JSON.stringify({ kind: 'PartialObjectMetadataList', metadata: { resourceVersion: podWatches === 0 ? '100' : '300' }, items: [] }),
      );
    if (url.pathname === '/api/v1/secrets' && !watching)
      return sendJson(
        response,
        200,
        JSON.stringify({ kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '100' }, items: [] }),
      );
    if (url.pathname === '/api/v1/pods' && watching) {
      podWatches++;
      response.writeHead(200, { 'content-type': 'application/json' });
      if (podWatches === 1) {
        line(response, podEvent('MODIFIED', 'web', 'Running', '101'));
        line(response, { type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '150' } } });
        line(response, podEvent('MODIFIED', 'job', 'Succeeded', '151'));
        line(response, podEvent('MODIFIED', 'job', 'Succeeded', '152'));
        line(response, { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
        response.end();
        return;
      }
      if (podWatches === 2) line(response, podEvent('DELETED', 'web', 'Running', '301'));
      return; // held open until the test stops watching
    }
    if (url.pathname === '/api/v1/secrets' && watching && url.searchParams.get('resourceVersion') === '100') {
      response.writeHead(200, { 'content-type': 'application/json' });
      line(response, {
        type: 'DELETED',
        object: {
          kind: 'PartialObjectMetadata',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { name: 'token', namespace: 'team-a', uid: 'uid-token', resourceVersion: '120' },
        },
      });
      return;
    }
    if (watching) return; // other kinds: held open
    return sendJson(response, 404, JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound' }));
  });
});
afterAll(async () => {
  await fake?.close();
});

describe('kubernetes inventory: watching for what settles a reservation at once (fake API server)', () => {
  it('reports a pod that finished (once) and objects deleted, lists again after a 410, and watches from resourceVersions with bookmarks', async () => {
    const source = createKubernetesInventory({ cache: false, kubeconfigPath: fake.kubeconfig });
    const signals: SettleSignal[] = [];
    const stop = new AbortController();
    const done = source.watchSettlements?.((change) => signals.push(change), stop.signal);
    const deadline = Date.now() + 5000;
    while (signals.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    stop.abort();
    await done;
    expect(signals.map((s) => `${s.why} ${s.groupResource.resource} ${s.namespace}/${s.name} ${s.uid}`).sort()).toEqual([
      'deleted pods team-a/web uid-web',
      'deleted secrets team-a/token uid-token',
      'terminal pods team-a/job uid-job',
    ]);
    const pods = seen.filter((s) => s.path === '/api/v1/pods');
    expect(pods.map((s) => (s.query['watch'] ? `watch@${s.query['resourceVersion']}` : `list limit=${s.query['limit']}`))).toEqual([
      'list limit=1',
      'watch@100',
      'list limit=1',
      'watch@300',
    ]);
    expect(pods.find((s) => s.query['watch'])?.query).toMatchObject({ allowWatchBookmarks: 'true' });
    expect(pods.find((s) => s.query['watch'])?.accept).toBe('application/json');
    expect(seen.find((s) => s.path === '/api/v1/secrets' && s.query['watch'])?.accept).toBe(
      'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
    );
  });
});
