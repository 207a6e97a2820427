import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A FAKE Kubernetes API server (node:http) for the tests that cannot run a real one: the
 * handler answers as the test scripts it, reached through a kubeconfig the way a real cluster
 * is (a bearer token, `test-token`).
 */
export interface FakeApiServer {
  readonly kubeconfig: string;
  close(): Promise<void>;
}

export async function startFakeApiServer(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void> | void,
): Promise<FakeApiServer> {
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dir = await mkdtemp(join(tmpdir(), 'ql-kubeconfig-'));
  const kubeconfig = join(dir, 'config');
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      // client-node sends credentials over plain http only to a cluster marked unverified; the fake is local.
      `- name: fake\n  cluster:\n    server: http://127.0.0.1:${port}\n    insecure-skip-tls-verify: true`,
      'users:',
      '- name: reconciler\n  user:\n    token: test-token',
      'contexts:',
      '- name: fake\n  context:\n    cluster: fake\n    user: reconciler',
      'current-context: fake',
      '',
    ].join('\n'),
  );
  return {
    kubeconfig,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Answers a JSON body with a status. */
export function sendJson(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(body);
}

/** A kind the fake cluster serves: its list path is built from `apiVersion` and the resource. */
export interface FakeKind {
  readonly kind: string;
  readonly apiVersion: string;
  readonly groupResource: { readonly group: string; readonly resource: string };
}

/** A FAKE cluster holding namespaced objects of some kinds; the test sets what each list answers. */
export interface FakeCluster extends FakeApiServer {
  /** What a list of this resource in this namespace answers from now on. */
  set(resource: FakeKind['groupResource'], namespace: string, items: readonly unknown[]): void;
}

/**
 * Serves `GET /api/v1/namespaces/NS/RESOURCE` and `/apis/GROUP/VERSION/namespaces/NS/RESOURCE`
 * for the given kinds (empty until set); any other path is a 404 Status, as for a resource the
 * cluster does not serve.
 */
export async function startFakeCluster(kinds: readonly FakeKind[]): Promise<FakeCluster> {
  const items = new Map<string, readonly unknown[]>();
  const keyOf = (group: string, resource: string, namespace: string): string => `${resource}.${group}/${namespace}`;
  const server = await startFakeApiServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const match = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/namespaces\/([^/]+)\/([^/]+)$/.exec(path);
    const group = match?.[1] ?? '';
    const known = match ? kinds.find((k) => k.groupResource.group === group && k.groupResource.resource === match[3]) : undefined;
    if (!match || !known)
      return sendJson(
        response,
        404,
        JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }),
      );
    const list = items.get(keyOf(group, known.groupResource.resource, match[2] ?? '')) ?? [];
    return sendJson(response, 200, JSON.stringify({ kind: `${known.kind}List`, apiVersion: known.apiVersion, metadata: {}, items: list }));
  });
  return {
    ...server,
    set(resource, namespace, list) {
      items.set(keyOf(resource.group, resource.resource, namespace), list);
    },
  };
}
