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

export async function startFakeApiServer(handle: (request: IncomingMessage, response: ServerResponse) => Promise<void> | void): Promise<FakeApiServer> {
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
